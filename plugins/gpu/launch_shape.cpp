#include "plugins/gpu/launch_shape.h"

#include <algorithm>

namespace kiln::gpu {

unsigned row_threads(const kir::Kernel& k, const TuningConfig& c, unsigned warp_width) {
  int64_t row = 1;
  for (int64_t r : k.reduction_ranges) row *= r;
  return row <= c.warp_row_limit ? warp_width : c.block_size;
}

LaunchShape launch_shape(const kir::Kernel& k, const TuningConfig& c, unsigned warp_width) {
  int64_t points = 1;
  for (int64_t r : k.ranges) points *= r;
  LaunchShape s;
  s.block = c.block_size;
  const int64_t rows_per_block = c.block_size / row_threads(k, c, warp_width);
  const int64_t blocks = k.kind == "reduction" ? (points + rows_per_block - 1) / rows_per_block
                                               : (points + c.block_size - 1) / c.block_size;
  s.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, c.max_blocks));
  return s;
}

}  // namespace kiln::gpu
