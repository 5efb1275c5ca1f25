#include "plugins/gpu/launch_shape.h"

#include <algorithm>

namespace kiln::gpu {

LaunchShape launch_shape(const kir::Kernel& k, const TuningConfig& c) {
  int64_t points = 1;
  for (int64_t r : k.ranges) points *= r;
  LaunchShape s;
  s.block = c.block_size;
  const int64_t blocks =
      k.kind == "reduction" ? points : (points + c.block_size - 1) / c.block_size;
  s.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, c.max_blocks));
  return s;
}

}  // namespace kiln::gpu
