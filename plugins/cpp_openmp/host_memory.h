// Host memory handed out as "device" memory by the CPU plugin. Every allocation (and every
// registration of the caller's memory) is tracked, so a free or a copy with an address the
// plugin never gave out is an error, not undefined behaviour.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "plugins/kir_support/registered_memory.h"

namespace kiln::cpu {

struct HostMemoryStats {
  uint64_t bytes_in_use = 0;
  uint64_t peak_bytes_in_use = 0;
  uint64_t num_allocations = 0;  // live now (kiln_memory_stats)
};

class HostMemory {
 public:
  HostMemory() = default;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  ~HostMemory();

  // Returns 0 on failure (out of memory or a bad alignment).
  uint64_t allocate(uint64_t bytes, uint64_t alignment);
  bool free(uint64_t address);
  // The host's caller's memory, usable until unregistered (ABI 1.1); never freed here.
  void register_external(uint64_t address, uint64_t bytes) { external_.add(0, address, bytes); }
  bool unregister_external(uint64_t address, uint64_t bytes) {
    return external_.remove(0, address, bytes);
  }
  // True when [address, address + bytes) lies inside one live allocation or registration.
  bool contains(uint64_t address, uint64_t bytes) const;
  HostMemoryStats stats() const;

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> live_;  // address -> size
  HostMemoryStats stats_;
  kir_support::RegisteredMemory external_;
};

}  // namespace kiln::cpu
