// A device's roofline (core/sched/kernel_cost.h) from its plugin's well-known properties.
#pragma once

#include "core/runtime/plugin.h"
#include "core/sched/kernel_cost.h"

namespace kiln {

// `bandwidth_gbps` and `peak_gflops_f32`; 0 where the plugin does not report them.
Roofline roofline_of(const DeviceInfo& device);

// The roofline of `plugin`'s device `index` (unknown when the plugin does not list it).
Roofline roofline_of(const Plugin& plugin, uint32_t index);

}  // namespace kiln
