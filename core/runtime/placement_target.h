// A device of a loaded plugin that may run a graph's kernels (core/runtime/placement.h).
#pragma once

#include <cstdint>
#include <memory>

#include "core/config/options.h"

namespace kiln {

class Plugin;

struct PlacementTarget {
  std::shared_ptr<const Plugin> plugin;
  uint32_t device = 0;
};

}  // namespace kiln
