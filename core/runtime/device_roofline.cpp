#include "core/runtime/device_roofline.h"

#include <variant>

namespace kiln {

Roofline roofline_of(const DeviceInfo& device) {
  auto number = [&](const char* key) {
    const DeviceProperty* p = device.find(key);
    if (!p) return 0.0;
    if (const auto* d = std::get_if<double>(&p->value)) return *d;
    if (const auto* i = std::get_if<int64_t>(&p->value)) return static_cast<double>(*i);
    return 0.0;
  };
  Roofline r{number("bandwidth_gbps"), number("peak_gflops_f32")};
  r.compute_units = static_cast<int64_t>(number("compute_units"));
  r.warp_width = static_cast<int64_t>(number("warp_width"));
  return r;
}

Roofline roofline_of(const Plugin& plugin, uint32_t index) {
  for (const DeviceInfo& d : plugin.devices())
    if (d.index == index) return roofline_of(d);
  return {};
}

}  // namespace kiln
