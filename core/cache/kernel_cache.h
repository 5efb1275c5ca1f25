// Compiled artifacts on disk, keyed by a hash of everything that determines their bytes
// (KIR text, tuning config, device, plugin compiler fingerprint, KIR version). Entries are
// written to a temporary file and renamed into place, so a reader sees a whole entry or
// none; each carries a checksum, and an entry that fails it is logged, removed and treated
// as a miss.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spdlog {
class logger;
}

namespace kiln {

struct ArtifactKey {
  std::string kir_hash;  // kir_hash() of the canonical text
  std::string config;    // tuning config line, "" for the default
  std::string device;    // plugin name, device index and name
  std::string compiler_fingerprint;
  std::string kir_version = "kir/1";
  // 32 hex digits over all parts.
  std::string digest() const;
};

class KernelCache {
 public:
  // An empty `dir` disables the cache (every lookup misses, nothing is written).
  KernelCache(std::string dir, std::shared_ptr<spdlog::logger> log);

  std::optional<std::string> get(const ArtifactKey& key) const;
  // Failures to write are logged and otherwise ignored: the cache is an optimization.
  void put(const ArtifactKey& key, std::string_view artifact) const;
  bool enabled() const { return !dir_.empty(); }
  std::string path_of(const ArtifactKey& key) const;

 private:
  std::string dir_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace kiln
