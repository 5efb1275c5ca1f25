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
};

struct LaunchShape {
  unsigned block = 0;
  unsigned grid = 0;
};

LaunchShape launch_shape(const kir::Kernel& k, const TuningConfig& config);

}  // namespace kiln::gpu
