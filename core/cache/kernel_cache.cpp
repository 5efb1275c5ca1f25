#include "core/cache/kernel_cache.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/kir/kir_hash.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kMagic = "kiln-artifact/1\n";

}  // namespace

std::string ArtifactKey::digest() const {
  std::string text;
  for (const std::string* part :
       {&kir_version, &kir_hash, &config, &device, &compiler_fingerprint}) {
    text += std::to_string(part->size()) + ":" + *part + "\n";
  }
  return ::kiln::kir_hash(text);
}

KernelCache::KernelCache(std::string dir, std::shared_ptr<spdlog::logger> log)
    : dir_(std::move(dir)), log_(std::move(log)) {}

std::string KernelCache::path_of(const ArtifactKey& key) const {
  const std::string d = key.digest();
  return (fs::path(dir_) / "kernels" / d.substr(0, 2) / (d + ".bin")).string();
}

std::optional<std::string> KernelCache::get(const ArtifactKey& key) const {
  if (!enabled()) return std::nullopt;
  const std::string path = path_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  const std::string data = s.str();
  // magic, 32 hex digits of the payload's hash, newline, payload
  const size_t header = kMagic.size() + 33;
  if (data.size() >= header && data.compare(0, kMagic.size(), kMagic) == 0 &&
      data[header - 1] == '\n') {
    std::string_view payload(data);
    payload.remove_prefix(header);
    if (kir_hash(payload) == data.substr(kMagic.size(), 32)) return std::string(payload);
  }
  log_->warn("cache entry {} is corrupt or truncated; removing it and compiling again", path);
  std::error_code ignored;
  fs::remove(path, ignored);
  return std::nullopt;
}

void KernelCache::put(const ArtifactKey& key, std::string_view artifact) const {
  if (!enabled()) return;
  const fs::path path = path_of(key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    log_->warn("cannot create cache directory {}: {}", path.parent_path().string(), ec.message());
    return;
  }
  // pid plus a random number: writers in other processes and threads never share a temp file.
  const fs::path temp = path.string() + ".tmp." + std::to_string(getpid()) + "." +
                        std::to_string(std::random_device{}());
  {
    std::ofstream out(temp, std::ios::binary);
    out << kMagic << kir_hash(artifact) << '\n';
    out.write(artifact.data(), static_cast<std::streamsize>(artifact.size()));
    out.flush();
    if (!out) {
      log_->warn("cannot write cache entry {}", temp.string());
      fs::remove(temp, ec);
      return;
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    log_->warn("cannot move cache entry into place at {}: {}", path.string(), ec.message());
    fs::remove(temp, ec);
  }
}

}  // namespace kiln
