// Memory the caller owns on a plugin's device, registered with the plugin (ABI 1.1
// mem_register) so kernels and copies may use it, and unregistered when this object ends,
// however the run ends. With a plugin that lacks mem_register, add() does nothing: the
// plugin then sees bare addresses, which one that tracks its memory refuses with an error.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/runtime/plugin.h"

namespace kiln {

class CallerMemory {
 public:
  CallerMemory(const Plugin& plugin, uint32_t device) : plugin_(plugin), device_(device) {}
  ~CallerMemory() { (void)release(); }
  CallerMemory(const CallerMemory&) = delete;
  CallerMemory& operator=(const CallerMemory&) = delete;

  // Whether the plugin can use caller memory at all.
  bool supported() const { return plugin_.api().mem_register && plugin_.api().mem_unregister; }
  Status add(uint64_t address, uint64_t bytes);
  // Unregisters everything now; the first failure.
  Status release();

 private:
  const Plugin& plugin_;
  uint32_t device_;
  std::vector<std::pair<uint64_t, uint64_t>> registered_;
};

}  // namespace kiln
