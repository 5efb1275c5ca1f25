// How a generated kernel is launched: threads per block and how many blocks. Pointwise
// kernels walk elements in a grid-stride loop; reduction kernels give each block a row (and
// stride over rows when there are more rows than blocks).
#pragma once

#include <cstdint>

#include "kiln/kir.hpp"

namespace kiln::gpu {

struct TuningConfig {
  unsigned block_size = 256;       // threads per block
  unsigned max_blocks = 132 * 16;  // enough to fill a large GPU several times over
  // Rows up to this long are reduced by one warp each (no shared memory, no barriers);
  // longer rows by the whole block.
  int64_t warp_row_limit = 4096;
};

struct LaunchShape {
  unsigned block = 0;
  unsigned grid = 0;
};

// Threads that share one row of a reduction kernel: a warp, or the whole block.
unsigned row_threads(const kir::Kernel& k, const TuningConfig& config, unsigned warp_width);

LaunchShape launch_shape(const kir::Kernel& k, const TuningConfig& config, unsigned warp_width);

}  // namespace kiln::gpu
