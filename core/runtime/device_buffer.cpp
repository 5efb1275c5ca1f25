#include "core/runtime/device_buffer.h"

#include <string>
#include <utility>

namespace kiln {
namespace {

Status check_size(uint64_t expected, size_t actual, const char* what) {
  if (expected == actual) return Ok{};
  return Error::internal(std::string(what) + ": buffer holds " + std::to_string(expected) +
                         " bytes but the copy is " + std::to_string(actual) + " bytes");
}

Status check_range(uint64_t size, uint64_t offset, size_t bytes, const char* what) {
  if (offset <= size && bytes <= size - offset) return Ok{};
  return Error::internal(std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                         std::to_string(offset + bytes) + ") lie outside a buffer of " +
                         std::to_string(size) + " bytes");
}

}  // namespace

Result<DeviceBuffer> DeviceBuffer::allocate(std::shared_ptr<const Plugin> plugin, uint32_t device,
                                            uint64_t bytes, uint64_t alignment) {
  const auto& api = plugin->api();
  if (auto s = plugin->require(api.mem_alloc, "mem_alloc"); !s) return std::move(s).error();
  if (auto s = plugin->require(api.mem_free, "mem_free"); !s) return std::move(s).error();
  uint64_t address = 0;
  if (auto s = plugin->check(api.mem_alloc(plugin->instance(), device, bytes, alignment, &address),
                             "mem_alloc");
      !s) {
    return std::move(s).error();
  }
  return DeviceBuffer(std::move(plugin), device, address, bytes);
}

DeviceBuffer::DeviceBuffer(std::shared_ptr<const Plugin> plugin, uint32_t device, uint64_t address,
                           uint64_t size)
    : plugin_(std::move(plugin)), device_(device), address_(address), size_(size) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : plugin_(std::move(other.plugin_)),
      device_(other.device_),
      address_(std::exchange(other.address_, 0)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    plugin_ = std::move(other.plugin_);
    device_ = other.device_;
    address_ = std::exchange(other.address_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  release();
}

void DeviceBuffer::release() noexcept {
  if (plugin_ == nullptr || address_ == 0) return;
  // A failed free cannot be reported from a destructor; the plugin's error is discarded.
  (void)plugin_->check(plugin_->api().mem_free(plugin_->instance(), device_, address_), "mem_free");
  address_ = 0;
}

Status DeviceBuffer::upload(std::span<const std::byte> host) const {
  if (auto s = check_size(size_, host.size(), "upload"); !s) return s;
  return upload_at(0, host);
}

Status DeviceBuffer::upload_at(uint64_t offset, std::span<const std::byte> host) const {
  if (auto s = check_range(size_, offset, host.size(), "upload"); !s) return s;
  const auto& api = plugin_->api();
  if (auto s = plugin_->require(api.copy_host_to_device, "copy_host_to_device"); !s) return s;
  return plugin_->check(api.copy_host_to_device(plugin_->instance(), device_, nullptr,
                                                address_ + offset, host.data(), host.size()),
                        "copy_host_to_device");
}

Status DeviceBuffer::download(std::span<std::byte> host) const {
  if (auto s = check_size(size_, host.size(), "download"); !s) return s;
  return download_at(0, host);
}

Status DeviceBuffer::download_at(uint64_t offset, std::span<std::byte> host) const {
  if (auto s = check_range(size_, offset, host.size(), "download"); !s) return s;
  const auto& api = plugin_->api();
  if (auto s = plugin_->require(api.copy_device_to_host, "copy_device_to_host"); !s) return s;
  return plugin_->check(api.copy_device_to_host(plugin_->instance(), device_, nullptr, host.data(),
                                                address_ + offset, host.size()),
                        "copy_device_to_host");
}

Status DeviceBuffer::copy_from(const DeviceBuffer& source) const {
  if (auto s = check_size(size_, source.size_, "copy_from"); !s) return s;
  const auto& api = plugin_->api();
  if (auto s = plugin_->require(api.copy_device_to_device, "copy_device_to_device"); !s) return s;
  return plugin_->check(api.copy_device_to_device(plugin_->instance(), device_, nullptr, address_,
                                                  source.address_, size_),
                        "copy_device_to_device");
}

}  // namespace kiln
