// Device memory owned by the host through a plugin: freed when the DeviceBuffer dies, and
// the plugin (and its shared object) kept alive until then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/runtime/plugin.h"

namespace kiln {

class DeviceBuffer {
 public:
  static Result<DeviceBuffer> allocate(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                       uint64_t bytes, uint64_t alignment = 64);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  uint64_t address() const { return address_; }
  uint64_t size() const { return size_; }
  uint32_t device() const { return device_; }

  // Synchronous copies on the device's default stream; sizes must match exactly.
  Status upload(std::span<const std::byte> host) const;
  Status download(std::span<std::byte> host) const;
  Status copy_from(const DeviceBuffer& source) const;
  // The same for the bytes [offset, offset + host.size()) of the buffer (an arena slice).
  Status upload_at(uint64_t offset, std::span<const std::byte> host) const;
  Status download_at(uint64_t offset, std::span<std::byte> host) const;

 private:
  DeviceBuffer(std::shared_ptr<const Plugin> plugin, uint32_t device, uint64_t address,
               uint64_t size);
  void release() noexcept;

  std::shared_ptr<const Plugin> plugin_;
  uint32_t device_ = 0;
  uint64_t address_ = 0;
  uint64_t size_ = 0;
};

}  // namespace kiln
