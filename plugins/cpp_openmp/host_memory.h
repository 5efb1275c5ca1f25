// Host memory handed out as "device" memory by the CPU plugin. Every allocation is
// tracked, so a free or a copy with an address the plugin never gave out is an error,
// not undefined behaviour.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace kiln::cpu {

struct HostMemoryStats {
  uint64_t bytes_in_use = 0;
  uint64_t peak_bytes_in_use = 0;
  uint64_t num_allocations = 0;
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
  // True when [address, address + bytes) lies inside one live allocation.
  bool contains(uint64_t address, uint64_t bytes) const;
  HostMemoryStats stats() const;

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> live_;  // address -> size
  HostMemoryStats stats_;
};

}  // namespace kiln::cpu
