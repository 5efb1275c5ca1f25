// The ABI's mem_register, mem_unregister and memory_stats for a device plugin whose state
// (its own `struct kiln_plugin`) holds a DeviceMemory `memory` and a `use(device)` that throws
// for a device that does not exist. A template: each plugin instantiates it with its own state.
#pragma once

#include <kiln/plugin.hpp>

#include "plugins/kir_support/device_memory.h"

namespace kiln::kir_support {

template <class Plugin = kiln_plugin>
void add_memory_functions(kiln_plugin_api& api) {
  using kiln::sdk::guard;
  api.mem_register = [](kiln_plugin* p, uint32_t device, uint64_t address, uint64_t bytes) {
    return guard([&] {
      Plugin* plugin = p;
      plugin->use(device);
      plugin->memory.register_range(device, address, bytes);
    });
  };
  api.mem_unregister = [](kiln_plugin* p, uint32_t device, uint64_t address, uint64_t bytes) {
    return guard([&] {
      Plugin* plugin = p;
      plugin->memory.unregister_range(device, address, bytes);
    });
  };
  api.memory_stats = [](kiln_plugin* p, uint32_t device, kiln_memory_stats* out) {
    return guard([&] {
      Plugin* plugin = p;
      plugin->use(device);
      kiln::sdk::write_struct(out, plugin->memory.stats());
    });
  };
}

}  // namespace kiln::kir_support
