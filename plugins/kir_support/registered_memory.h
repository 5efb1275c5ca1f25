// Memory a plugin's host registered as usable but does not own (ABI 1.1 mem_register): a
// framework's tensors, read and written in place. Registrations may overlap and repeat;
// each unregister undoes one. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

namespace kiln::kir_support {

class RegisteredMemory {
 public:
  void add(uint32_t device, uint64_t address, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    ++regions_[{device, address, bytes}];
  }
  // False when no such registration is live.
  bool remove(uint32_t device, uint64_t address, uint64_t bytes) {
    std::lock_guard lock(mutex_);
    auto it = regions_.find({device, address, bytes});
    if (it == regions_.end()) return false;
    if (--it->second == 0) regions_.erase(it);
    return true;
  }
  // True when [address, address + bytes) lies inside one registration on `device`.
  bool contains(uint32_t device, uint64_t address, uint64_t bytes) const {
    std::lock_guard lock(mutex_);
    for (const auto& [key, count] : regions_) {
      const auto& [d, start, size] = key;
      if (d == device && address >= start && address - start <= size &&
          bytes <= size - (address - start))
        return true;
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, int> regions_;
};

}  // namespace kiln::kir_support
