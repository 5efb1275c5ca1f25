#include "plugins/kir_support/device_memory.h"

#include <algorithm>
#include <stdexcept>

namespace kiln::kir_support {

using kiln::sdk::Failure;

void DeviceMemory::add(uint32_t device, uint64_t address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  allocations_[address] = {bytes, device};
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
}

void DeviceMemory::remove(uint32_t device, uint64_t address) {
  std::lock_guard lock(mutex_);
  auto it = allocations_.find(address);
  if (it == allocations_.end() || it->second.device != device)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  "mem_free of an address this plugin did not allocate");
  in_use_ -= it->second.bytes;
  allocations_.erase(it);
}

bool DeviceMemory::contains(uint32_t device, uint64_t address, uint64_t bytes) const {
  {
    std::lock_guard lock(mutex_);
    auto it = allocations_.upper_bound(address);
    if (it != allocations_.begin()) {
      --it;
      if (it->second.device == device && address - it->first <= it->second.bytes &&
          bytes <= it->second.bytes - (address - it->first))
        return true;
    }
  }
  return registered_.contains(device, address, bytes);
}

void DeviceMemory::check_range(uint32_t device, uint64_t address, uint64_t bytes,
                               const std::string& what) const {
  if (bytes > 0 && !contains(device, address, bytes))
    throw Failure(KILN_STATUS_INVALID_ARGUMENT,
                  what + ": " + std::to_string(bytes) +
                      " bytes are not inside one allocation of this plugin on this device");
}

void DeviceMemory::check_buffers(uint32_t device, const uint64_t* buffers, size_t count,
                                 const std::vector<int64_t>& bytes, const std::string& name) const {
  if (count != bytes.size())
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + " takes " + std::to_string(bytes.size()) +
                                                    " buffers, got " + std::to_string(count));
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] > 0 && !contains(device, buffers[i], static_cast<uint64_t>(bytes[i])))
      throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": buffer " + std::to_string(i) +
                                                      " is not " + std::to_string(bytes[i]) +
                                                      " bytes inside one allocation");
}

MatmulCall DeviceMemory::checked_matmul_call(uint32_t device, const kiln_launch_args& args,
                                             const std::string& name) const {
  MatmulCall call;
  try {
    call = read_matmul_call(args);
  } catch (const std::invalid_argument& e) {
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, name + ": " + e.what());
  }
  check_buffers(device, args.buffers, args.num_buffers, call.buffer_bytes(), name);
  return call;
}

void DeviceMemory::register_range(uint32_t device, uint64_t address, uint64_t bytes) {
  if (address == 0 || address + bytes < address)
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_register of an empty or wrapping range");
  registered_.add(device, address, bytes);
}

void DeviceMemory::unregister_range(uint32_t device, uint64_t address, uint64_t bytes) {
  if (!registered_.remove(device, address, bytes))
    throw Failure(KILN_STATUS_INVALID_ARGUMENT, "mem_unregister of a range that is not registered");
}

kiln_memory_stats DeviceMemory::stats() const {
  std::lock_guard lock(mutex_);
  kiln_memory_stats s{};
  s.struct_size = sizeof(s);
  s.bytes_in_use = in_use_;
  s.peak_bytes_in_use = peak_;
  s.num_allocations = allocations_.size();
  return s;
}

std::vector<std::pair<uint64_t, uint32_t>> DeviceMemory::live() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (const auto& [address, a] : allocations_) out.emplace_back(address, a.device);
  return out;
}

}  // namespace kiln::kir_support
