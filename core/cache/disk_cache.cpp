#include "core/cache/disk_cache.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/kir/kir_hash.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kMagic = "kiln-cache/2\n";
constexpr size_t kChecksumLine = 33;  // 32 hex digits and a newline

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string key_text(const CacheKey& key) {
  std::string text = key.kind + "\n" + std::to_string(key.parts.size()) + "\n";
  for (const auto& [name, value] : key.parts) text += name + "\t" + escape(value) + "\n";
  return text;
}

// The number of key parts an entry announces (0 for anything but 1 to 3 digits).
size_t part_count(std::string_view text) {
  if (text.empty() || text.size() > 3 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return 0;
  return static_cast<size_t>(std::stoul(std::string(text)));
}

using KeyParts = std::vector<std::pair<std::string, std::string>>;  // values escaped

// The kind and key parts at the start of `rest` (what follows the checksum line), consumed
// from it: `rest` is left at the payload. None when a part line is malformed.
std::optional<KeyParts> parse_key(std::string_view& rest) {
  auto line = [&] {
    const size_t nl = rest.find('\n');
    const std::string_view l = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    return l;
  };
  line();  // kind
  const size_t n = part_count(line());
  KeyParts parts;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view l = line();
    const size_t tab = l.find('\t');
    if (tab == std::string_view::npos) return std::nullopt;
    parts.emplace_back(std::string(l.substr(0, tab)), std::string(l.substr(tab + 1)));
  }
  return parts;
}

bool has_header(std::string_view data) {
  return data.size() >= kMagic.size() + kChecksumLine && data.substr(0, kMagic.size()) == kMagic &&
         data[kMagic.size() + kChecksumLine - 1] == '\n';
}

struct Entry {
  KeyParts parts;
  std::string_view payload;
};

// The key and payload of an entry's bytes, or why they are not a whole entry.
std::optional<Entry> parse_entry(std::string_view data, std::string& why) {
  if (!has_header(data)) {
    why = "not a kiln cache entry (or truncated)";
    return std::nullopt;
  }
  std::string_view rest = data.substr(kMagic.size() + kChecksumLine);
  if (kir_hash(rest) != data.substr(kMagic.size(), 32)) {
    why = "checksum mismatch (corrupt or truncated)";
    return std::nullopt;
  }
  auto parts = parse_key(rest);
  if (!parts) {
    why = "malformed key";
    return std::nullopt;
  }
  return Entry{std::move(*parts), rest};
}

// The key parts of an entry, from its first bytes only (no checksum: for explaining a miss,
// where reading every artifact in full would cost more than the miss).
std::optional<KeyParts> read_key_parts(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(16384, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (!has_header(head)) return std::nullopt;
  std::string_view rest(head);
  rest.remove_prefix(kMagic.size() + kChecksumLine);
  return parse_key(rest);
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Entry files of one kind, or of every kind when `kind` is empty.
std::vector<fs::path> entry_files(const std::string& dir, const std::string& kind) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path root = kind.empty() ? fs::path(dir) : fs::path(dir) / kind;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".bin") out.push_back(it->path());
  }
  return out;
}

// Why `dir` may not hold a cache: "" when it is ours and only we may write it.
std::string insecure(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return "cannot stat it";
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (st.st_uid != geteuid()) return "owned by another user";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return "writable by other users (chmod go-w " + dir + " to use it)";
  return "";
}

}  // namespace

std::string CacheKey::digest() const {
  return kir_hash(key_text(*this));
}

CacheKey kernel_key(const std::string& kir_hash, const std::string& config,
                    const std::string& device, const std::string& compiler_fingerprint,
                    const std::string& kir_version) {
  return {"kernels",
          {{"kir_version", kir_version},
           {"kir_hash", kir_hash},
           {"config", config},
           {"device", device},
           {"compiler_fingerprint", compiler_fingerprint}}};
}

DiskCache::DiskCache(std::string dir, int64_t max_bytes, std::shared_ptr<spdlog::logger> log)
    : max_bytes_(max_bytes), log_(std::move(log)) {
  if (dir.empty()) return;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (!ec) fs::permissions(dir, fs::perms::owner_all, ec);
  }
  refused_ = ec ? "cannot create it: " + ec.message() : insecure(dir);
  if (!refused_.empty()) {
    log_->warn("not using cache directory {}: {}", dir, refused_);
    return;
  }
  dir_ = std::move(dir);
}

std::string DiskCache::path_of(const CacheKey& key) const {
  const std::string d = key.digest();
  return (fs::path(dir_) / key.kind / d.substr(0, 2) / (d + ".bin")).string();
}

std::optional<std::string> DiskCache::get(const CacheKey& key) const {
  if (!enabled()) return std::nullopt;
  const std::string path = path_of(key);
  const auto data = read_file(path);
  if (!data) {
    log_->info("cache miss ({} {}): {}", key.kind, key.digest().substr(0, 12), explain_miss(key));
    return std::nullopt;
  }
  std::string why;
  const auto entry = parse_entry(*data, why);
  if (!entry) {
    log_->warn("cache entry {}: {}; removing it and computing it again", path, why);
    std::error_code ignored;
    fs::remove(path, ignored);
    return std::nullopt;
  }
  std::error_code ignored;  // the entry was used: evicted last
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
  return std::string(entry->payload);
}

void DiskCache::put(const CacheKey& key, std::string_view payload) const {
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
  std::string rest = key_text(key);
  rest.append(payload);
  {
    std::ofstream out(temp, std::ios::binary);
    out << kMagic << kir_hash(rest) << '\n';
    out.write(rest.data(), static_cast<std::streamsize>(rest.size()));
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
    return;
  }
  evict();
}

std::string DiskCache::explain_miss(const CacheKey& key) const {
  if (!enabled()) return "the cache is off";
  std::vector<std::string> best;
  bool any = false;
  for (const fs::path& p : entry_files(dir_, key.kind)) {
    const auto parts = read_key_parts(p);
    if (!parts) continue;
    std::map<std::string, std::string> theirs(parts->begin(), parts->end());
    std::vector<std::string> differ;
    for (const auto& [name, value] : key.parts) {
      auto it = theirs.find(name);
      if (it == theirs.end()) {
        differ.push_back(name + " (absent there)");
      } else if (const std::string ours = escape(value); it->second != ours) {
        // Long values are cut to the words around their first difference, the same span
        // of both, so the difference is what the message shows.
        const std::string& other = it->second;
        size_t first = 0;
        while (first < ours.size() && first < other.size() && ours[first] == other[first]) ++first;
        size_t from = first > 24 ? ours.rfind(' ', first - 24) : std::string::npos;
        from = from == std::string::npos || first <= 24 ? 0 : from + 1;
        const auto excerpt = [from](const std::string& s) {
          std::string cut = s.substr(std::min(from, s.size()), 60);
          if (from + 60 < s.size()) cut += "...";
          return (from > 0 ? "..." : "") + cut;
        };
        differ.push_back(name + " ('" + excerpt(other) + "' there, '" + excerpt(ours) + "' here)");
      }
    }
    if (!any || differ.size() < best.size()) best = differ;
    any = true;
  }
  if (!any) return "no " + key.kind + " entry yet";
  std::string text = "the nearest entry differs in ";
  for (size_t i = 0; i < best.size(); ++i) text += (i ? ", " : "") + best[i];
  return text;
}

CacheStats DiskCache::stats() const {
  CacheStats s;
  if (!enabled()) return s;
  std::map<std::string, CacheStats::Kind> kinds;
  for (const fs::path& p : entry_files(dir_, "")) {
    std::error_code ec;
    const auto bytes = static_cast<int64_t>(fs::file_size(p, ec));
    if (ec) continue;
    const std::string kind = fs::relative(p, dir_, ec).begin()->string();
    CacheStats::Kind& k = kinds[kind];
    k.name = kind;
    ++k.entries;
    k.bytes += bytes;
    ++s.entries;
    s.bytes += bytes;
  }
  for (auto& [name, k] : kinds) s.kinds.push_back(k);
  return s;
}

std::vector<CacheProblem> DiskCache::verify(bool remove) const {
  std::vector<CacheProblem> problems;
  if (!enabled()) return problems;
  for (const fs::path& p : entry_files(dir_, "")) {
    const auto data = read_file(p);
    std::string why = "unreadable";
    if (data && parse_entry(*data, why)) continue;
    problems.push_back({p.string(), why});
    std::error_code ignored;
    if (remove) fs::remove(p, ignored);
  }
  return problems;
}

int64_t DiskCache::clear() const {
  int64_t removed = 0;
  if (!enabled()) return 0;
  for (const fs::path& p : entry_files(dir_, "")) {
    std::error_code ec;
    if (fs::remove(p, ec)) ++removed;
  }
  return removed;
}

void DiskCache::evict() const {
  struct File {
    fs::file_time_type used;
    int64_t bytes;
    fs::path path;
  };
  std::vector<File> files;
  int64_t total = 0;
  for (const fs::path& p : entry_files(dir_, "")) {
    std::error_code ec;
    const auto bytes = static_cast<int64_t>(fs::file_size(p, ec));
    const auto used = fs::last_write_time(p, ec);
    if (ec) continue;
    files.push_back({used, bytes, p});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.used < b.used; });
  for (const File& f : files) {
    if (total <= max_bytes_) break;
    std::error_code ec;
    if (fs::remove(f.path, ec)) {
      total -= f.bytes;
      log_->debug("cache: evicted {} ({} bytes, least recently used)", f.path.string(), f.bytes);
    }
  }
}

}  // namespace kiln
