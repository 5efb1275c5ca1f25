// The on-disk cache: content-addressed entries of several kinds (compiled kernels, autotune
// winners, plugin selections), each under <dir>/<kind>/<2 hex>/<digest>.bin. An entry carries
// its key's parts and a checksum over key and payload. Writes go to a temporary file renamed
// into place (a reader sees a whole entry or none, across processes); a read that fails the
// checksum is logged, removed and treated as a miss. A miss names the parts of the key that
// differ from the nearest entry of its kind. Reads refresh an entry's time; writes evict the
// least recently used entries beyond the size cap. A directory that other users may write
// is refused (its entries could be swapped for hostile code).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spdlog {
class logger;
}

namespace kiln {

struct CacheKey {
  std::string kind;  // "kernels", "tune", "select": a subdirectory
  std::vector<std::pair<std::string, std::string>> parts;  // name, value (one line each)
  // 32 hex digits over kind and parts.
  std::string digest() const;
};

// The key of a compiled artifact: everything that determines its bytes.
CacheKey kernel_key(const std::string& kir_hash, const std::string& config,
                    const std::string& device, const std::string& compiler_fingerprint,
                    const std::string& kir_version = "kir/1");

struct CacheStats {
  struct Kind {
    std::string name;
    int64_t entries = 0;
    int64_t bytes = 0;
  };
  std::vector<Kind> kinds;
  int64_t entries = 0, bytes = 0;
};

struct CacheProblem {
  std::string path;
  std::string why;
};

class DiskCache {
 public:
  // An empty `dir` disables the cache (every lookup misses, nothing is written); so does a
  // directory that cannot be made or that other users may write (refused() says why).
  DiskCache(std::string dir, int64_t max_bytes, std::shared_ptr<spdlog::logger> log);

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  const std::string& refused() const { return refused_; }

  // A miss is logged at info with explain_miss().
  std::optional<std::string> get(const CacheKey& key) const;
  // Failures to write are logged and otherwise ignored: the cache is an optimization.
  void put(const CacheKey& key, std::string_view payload) const;
  std::string path_of(const CacheKey& key) const;
  // Which parts of `key` differ from the nearest entry of its kind (most parts equal), or
  // that the kind has no entry.
  std::string explain_miss(const CacheKey& key) const;

  CacheStats stats() const;
  // Every entry whose checksum or format fails (removed when `remove`).
  std::vector<CacheProblem> verify(bool remove) const;
  // Removes every entry; returns how many.
  int64_t clear() const;

 private:
  void evict() const;
  std::string dir_;
  int64_t max_bytes_;
  std::string refused_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace kiln
