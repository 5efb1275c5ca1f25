// The interpreter's "device" memory: host memory it hands out and the caller's memory it was
// asked to use (ABI 1.1 mem_register), each tracked, so every address a copy, launch or free
// names is checked: one outside them is an error, never a write.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace kiln::interp {

struct AllocationStats {
  uint64_t bytes_in_use = 0;
  uint64_t peak_bytes_in_use = 0;
  uint64_t live = 0;
};

class HostAllocations {
 public:
  explicit HostAllocations(uint64_t limit) : limit_(limit) {}
  HostAllocations(const HostAllocations&) = delete;
  HostAllocations& operator=(const HostAllocations&) = delete;
  ~HostAllocations();

  // 0 when `bytes` would pass the limit or the host has no memory for it.
  uint64_t allocate(uint64_t bytes, uint64_t alignment);
  bool release(uint64_t address);
  void add_registration(uint64_t address, uint64_t bytes);
  bool remove_registration(uint64_t address, uint64_t bytes);
  // True when [address, address + bytes) lies inside one allocation or registration.
  bool contains(uint64_t address, uint64_t bytes) const;
  AllocationStats stats() const;
  uint64_t limit() const { return limit_; }

 private:
  struct Registration {
    uint64_t address, bytes;
  };
  const uint64_t limit_;
  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> live_;  // address -> bytes
  std::vector<Registration> registered_;
  AllocationStats stats_;
};

// Host buffers handed out by host_alloc, so host_free refuses what it did not hand out.
class HostBuffers {
 public:
  HostBuffers() = default;
  HostBuffers(const HostBuffers&) = delete;
  HostBuffers& operator=(const HostBuffers&) = delete;
  ~HostBuffers();
  void* allocate(uint64_t bytes);  // 64-byte aligned; NULL when the host has no memory
  bool release(void* pointer);

 private:
  std::mutex mutex_;
  std::set<void*> live_;
};

}  // namespace kiln::interp
