#include "host_memory.h"

#include <algorithm>
#include <cstdlib>

namespace kiln::cpu {

HostMemory::~HostMemory() {
  for (const auto& [address, size] : live_) std::free(reinterpret_cast<void*>(address));
}

uint64_t HostMemory::allocate(uint64_t bytes, uint64_t alignment) {
  alignment = std::max<uint64_t>(alignment, 64);  // a cache line: SIMD loads never split
  if ((alignment & (alignment - 1)) != 0) return 0;
  // aligned_alloc needs a size that is a multiple of the alignment, and >0 to give a
  // unique address; round up.
  const uint64_t rounded =
      std::max<uint64_t>(alignment, (bytes + alignment - 1) / alignment * alignment);
  if (rounded < bytes) return 0;  // overflow
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) return 0;
  const auto address = reinterpret_cast<uint64_t>(p);
  std::lock_guard lock(mutex_);
  live_[address] = bytes;
  stats_.bytes_in_use += bytes;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  ++stats_.num_allocations;
  return address;
}

bool HostMemory::free(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) return false;
  stats_.bytes_in_use -= it->second;
  --stats_.num_allocations;
  live_.erase(it);
  std::free(reinterpret_cast<void*>(address));
  return true;
}

bool HostMemory::contains(uint64_t address, uint64_t bytes) const {
  {
    std::lock_guard lock(mutex_);
    auto it = live_.upper_bound(address);
    if (it != live_.begin()) {
      --it;
      const uint64_t offset = address - it->first;
      if (offset <= it->second && bytes <= it->second - offset) return true;
    }
  }
  return external_.contains(0, address, bytes);
}

HostMemoryStats HostMemory::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace kiln::cpu
