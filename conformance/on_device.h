// The plugin under test created with the kit's options, on the device under test: what the
// memory, stream and raw KIR checks start from (each in its own process).
#pragma once

#include <memory>
#include <optional>

#include "conformance/context.h"

namespace kiln::conformance {

// A plugin created with the kit's options by a host of ABI 1.`host_minor`, or the reason it
// could not be ("" when it was).
struct Created {
  std::unique_ptr<RawPlugin> plugin;
  std::string error;
};
Created created(const Context& c, uint32_t host_minor = KILN_ABI_MINOR);

// The plugin created with the kit's options, on a device it has; or the finding that says why
// not (FAIL when it cannot be created, SKIP when it has no such device).
struct OnDevice {
  std::unique_ptr<RawPlugin> plugin;
  std::optional<Finding> unusable;
  const kiln_plugin_api& api() const { return *plugin->table(); }
};

OnDevice on_device(const Context& c);

}  // namespace kiln::conformance
