// What a device plugin tracks of its memory: the allocations it made (address, size, device),
// the ranges its host registered (ABI 1.1), and the statistics `memory_stats` reports. Every
// address a launch, copy or library call is given is checked against it first, so a bad
// address is an error, never a write into memory the plugin does not own. Thread-safe.
#pragma once

#include <kiln/plugin.hpp>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plugins/kir_support/matmul_call.h"
#include "plugins/kir_support/registered_memory.h"

namespace kiln::kir_support {

class DeviceMemory {
 public:
  void add(uint32_t device, uint64_t address, uint64_t bytes);
  // Forgets an allocation; throws Failure(INVALID_ARGUMENT) when `address` is not one of
  // `device`'s.
  void remove(uint32_t device, uint64_t address);
  // True when [address, address + bytes) lies inside one allocation or registration on
  // `device`.
  bool contains(uint32_t device, uint64_t address, uint64_t bytes) const;
  // Throws Failure(INVALID_ARGUMENT) naming `what` unless contains() (or `bytes` is 0).
  void check_range(uint32_t device, uint64_t address, uint64_t bytes,
                   const std::string& what) const;
  // Checks a launch's buffers: as many as `bytes`, each spanning its bytes.
  void check_buffers(uint32_t device, const uint64_t* buffers, size_t count,
                     const std::vector<int64_t>& bytes, const std::string& name) const;
  // An extern "mm"/"bmm" call's parameters, with its three buffers checked; throws
  // Failure(INVALID_ARGUMENT) naming `name` for bad parameters or buffers.
  MatmulCall checked_matmul_call(uint32_t device, const kiln_launch_args& args,
                                 const std::string& name) const;
  // ABI 1.1 registrations; throw Failure(INVALID_ARGUMENT) for an empty or wrapping range, or
  // one that is not registered.
  void register_range(uint32_t device, uint64_t address, uint64_t bytes);
  void unregister_range(uint32_t device, uint64_t address, uint64_t bytes);
  kiln_memory_stats stats() const;
  // Every live allocation as (address, device), for a plugin that frees them at its end.
  std::vector<std::pair<uint64_t, uint32_t>> live() const;

 private:
  struct Allocation {
    uint64_t bytes = 0;
    uint32_t device = 0;
  };
  mutable std::mutex mutex_;
  std::map<uint64_t, Allocation> allocations_;
  uint64_t in_use_ = 0, peak_ = 0;
  RegisteredMemory registered_;
};

}  // namespace kiln::kir_support
