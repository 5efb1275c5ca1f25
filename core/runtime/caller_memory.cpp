#include "core/runtime/caller_memory.h"

namespace kiln {

Status CallerMemory::add(uint64_t address, uint64_t bytes) {
  if (!supported() || bytes == 0) return Ok{};
  auto s = plugin_.check(plugin_.api().mem_register(plugin_.instance(), device_, address, bytes),
                         "mem_register");
  if (s) registered_.push_back({address, bytes});
  return s;
}

Status CallerMemory::release() {
  Status first = Ok{};
  for (const auto& [address, bytes] : registered_) {
    Status s =
        plugin_.check(plugin_.api().mem_unregister(plugin_.instance(), device_, address, bytes),
                      "mem_unregister");
    if (first && !s) first = s;
  }
  registered_.clear();
  return first;
}

}  // namespace kiln
