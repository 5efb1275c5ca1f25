#include "conformance/on_device.h"

namespace kiln::conformance {

Created created(const Context& c, uint32_t host_minor) {
  Created out;
  out.plugin = std::make_unique<RawPlugin>(c.path, KILN_ABI_MAJOR, host_minor);
  if (!out.plugin->table()) {
    out.error = "the plugin declined a host of ABI 1." + std::to_string(host_minor);
    return out;
  }
  out.error = out.plugin->create(c.options, host_minor);
  return out;
}

OnDevice on_device(const Context& c) {
  OnDevice out;
  Created made = created(c);
  out.plugin = std::move(made.plugin);
  if (!out.plugin->table()) {
    out.unusable = fail("the plugin declined this host");
    return out;
  }
  if (!made.error.empty()) {
    out.unusable = fail("plugin_create: " + made.error);
    return out;
  }
  const uint32_t n = out.plugin->device_count();
  if (c.device >= n)
    out.unusable =
        skip(n == 0 ? "the plugin reports no devices"
                    : "no device " + std::to_string(c.device) + " (of " + std::to_string(n) + ")");
  else if (!out.api().mem_alloc || !out.api().mem_free || !out.api().copy_host_to_device ||
           !out.api().copy_device_to_host)
    out.unusable = fail("a plugin with devices lacks mem_alloc, mem_free or copies");
  return out;
}

}  // namespace kiln::conformance
