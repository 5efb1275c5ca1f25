#include "precompiled_header.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kiln_cpu_runtime_text.h"
#include "run_command.h"
#include "temp_dir.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kiln::cpu {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader = "kiln_cpu_runtime.h";
constexpr const char* kPrecompiled = "kiln_cpu_runtime.h.gch";
constexpr const char* kChecksum = "checksum";
// Each entry is ~30 MB; one per compiler, flag set and lane count in use.
constexpr size_t kMaxEntries = 8;

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::vector<std::string> header_command(const CompilerConfig& config, int lanes,
                                        const fs::path& dir) {
  std::vector<std::string> argv{config.compiler};
  argv.insert(argv.end(), config.flags.begin(), config.flags.end());
  for (const auto& f : required_flags())
    if (f != "-shared") argv.push_back(f);
  argv.push_back("-DKRT_LANES=" + std::to_string(lanes));
  argv.insert(argv.end(),
              {"-x", "c++-header", (dir / kHeader).string(), "-o", (dir / kPrecompiled).string()});
  return argv;
}

// Everything the precompiled form depends on; GCC checks its own binary and flags again
// when it reads the file, so a mismatch slows a compile down but never changes its result.
std::string entry_key(const CompilerConfig& config, const std::string& version, int lanes) {
  std::string material =
      version + "\n" + joined(header_command(config, lanes, "")) + "\n" + kiln_cpu_runtime_text;
  return hex64(XXH3_64bits(material.data(), material.size()));
}

std::string checksum_of(const fs::path& file) {
  const std::string bytes = read_file(file);
  return hex64(XXH3_64bits(bytes.data(), bytes.size()));
}

// The root must be ours alone: a precompiled header is code the compiler trusts.
bool private_directory(const fs::path& root, std::string& why) {
  std::error_code ec;
  if (fs::create_directories(root, ec)) ::chmod(root.c_str(), 0700);
  struct stat info {};
  if (::stat(root.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    why = root.string() + " is not a directory that can be created";
    return false;
  }
  if (info.st_uid != ::geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH))) {
    why = root.string() + " belongs to another user or others may write to it";
    return false;
  }
  return true;
}

bool entry_intact(const fs::path& entry) {
  std::error_code ec;
  if (!fs::exists(entry / kPrecompiled, ec) || !fs::exists(entry / kChecksum, ec)) return false;
  return read_file(entry / kHeader) == kiln_cpu_runtime_text &&
         read_file(entry / kChecksum) == checksum_of(entry / kPrecompiled);
}

// Builds the entry in a private directory beside it and renames it into place, so a reader
// sees a whole entry or none; when another process wins the race, its entry is kept.
bool build_entry(const fs::path& root, const fs::path& entry, const CompilerConfig& config,
                 int lanes, std::string& why) {
  TempDir scratch(root);
  write_file(scratch.path() / kHeader, kiln_cpu_runtime_text);
  const auto argv = header_command(config, lanes, scratch.path());
  const int rc = run_command(argv, scratch.path() / "compiler.log");
  if (rc != 0) {
    why = "the compiler cannot precompile the header (exit " + std::to_string(rc) +
          "): " + joined(argv);
    return false;
  }
  fs::remove(scratch.path() / "compiler.log");
  write_file(scratch.path() / kChecksum, checksum_of(scratch.path() / kPrecompiled));
  ::chmod(scratch.path().c_str(), 0700);
  std::error_code ec;
  fs::rename(scratch.path(), entry, ec);
  if (!ec) scratch.keep();
  return true;
}

// Keeps the most recently used entries (an entry's time is refreshed on every use).
void evict_old_entries(const fs::path& root) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const auto& item : fs::directory_iterator(root, ec)) {
    if (!item.is_directory(ec)) continue;
    entries.emplace_back(fs::last_write_time(item.path(), ec), item.path());
  }
  if (entries.size() <= kMaxEntries) return;
  std::sort(entries.begin(), entries.end());
  for (size_t i = 0; i + kMaxEntries < entries.size(); ++i) fs::remove_all(entries[i].second, ec);
}

}  // namespace

fs::path precompiled_header_dir(const fs::path& root, const CompilerConfig& config,
                                const std::string& compiler_version, int lanes, std::string& why) {
  try {
    if (root.empty()) {
      why = "no directory for precompiled headers (neither XDG_CACHE_HOME nor HOME is set)";
      return {};
    }
    if (!private_directory(root, why)) return {};
    const fs::path entry = root / entry_key(config, compiler_version, lanes);
    std::error_code ec;
    if (fs::exists(entry, ec) && !entry_intact(entry)) {
      // Damaged or half-removed: never handed to the compiler; made again below.
      fs::remove_all(entry, ec);
    }
    if (!fs::exists(entry, ec)) {
      if (!build_entry(root, entry, config, lanes, why)) return {};
      evict_old_entries(root);
      if (!entry_intact(entry)) {
        why = entry.string() + " does not hold a whole precompiled header after building it";
        return {};
      }
    }
    fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);
    return entry;
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
}

fs::path default_header_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return fs::path(xdg) / "kiln" / "cpp_openmp-headers";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "kiln" / "cpp_openmp-headers";
  return {};
}

}  // namespace kiln::cpu
