#include "host_allocations.h"

#include <algorithm>
#include <cstdlib>

namespace kiln::interp {

HostAllocations::~HostAllocations() {
  for (const auto& [address, bytes] : live_) std::free(reinterpret_cast<void*>(address));
}

uint64_t HostAllocations::allocate(uint64_t bytes, uint64_t alignment) {
  // At least 64-byte aligned, and never 0 bytes: every allocation has an address of its own.
  const uint64_t align = std::max<uint64_t>(alignment, 64);
  if ((align & (align - 1)) != 0) return 0;
  std::lock_guard lock(mutex_);
  if (bytes > limit_ || stats_.bytes_in_use > limit_ - bytes || bytes > (uint64_t{1} << 62))
    return 0;
  const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) return 0;
  const auto address = reinterpret_cast<uint64_t>(p);
  live_[address] = bytes;
  stats_.bytes_in_use += bytes;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  ++stats_.live;
  return address;
}

bool HostAllocations::release(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) return false;
  std::free(reinterpret_cast<void*>(address));
  stats_.bytes_in_use -= it->second;
  --stats_.live;
  live_.erase(it);
  return true;
}

void HostAllocations::add_registration(uint64_t address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  registered_.push_back({address, bytes});
}

bool HostAllocations::remove_registration(uint64_t address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = std::find_if(registered_.begin(), registered_.end(), [&](const Registration& r) {
    return r.address == address && r.bytes == bytes;
  });
  if (it == registered_.end()) return false;
  registered_.erase(it);
  return true;
}

bool HostAllocations::contains(uint64_t address, uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  const auto inside = [&](uint64_t start, uint64_t size) {
    return address >= start && bytes <= size && address - start <= size - bytes;
  };
  auto it = live_.upper_bound(address);
  if (it != live_.begin() && inside(std::prev(it)->first, std::prev(it)->second)) return true;
  return std::any_of(registered_.begin(), registered_.end(),
                     [&](const Registration& r) { return inside(r.address, r.bytes); });
}

AllocationStats HostAllocations::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

HostBuffers::~HostBuffers() {
  for (void* p : live_) std::free(p);
}

void* HostBuffers::allocate(uint64_t bytes) {
  if (bytes > (uint64_t{1} << 62)) return nullptr;
  const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) return nullptr;
  std::lock_guard lock(mutex_);
  live_.insert(p);
  return p;
}

bool HostBuffers::release(void* pointer) {
  std::lock_guard lock(mutex_);
  if (live_.erase(pointer) == 0) return false;
  std::free(pointer);
  return true;
}

}  // namespace kiln::interp
