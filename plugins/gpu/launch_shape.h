// How a generated kernel is launched: threads per block and how many blocks. Pointwise
// kernels walk elements in a grid-stride loop; reduction kernels give each block a row (and
// stride over rows when there are more rows than blocks).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/tuning_config.h"

namespace kiln::gpu {

struct LaunchShape {
  unsigned block = 0;
  unsigned grid = 0;
};

// Whether a reduction kernel scans (its rows walked in order).
bool scans(const kir::Kernel& k);

// Scans of rows longer than this take a block per row.
inline constexpr int64_t kBlockScanRow = 1024;

// Threads that share one row of a reduction kernel: one, a warp, or the whole block (scans:
// one across memory, else a warp, or the block beyond kBlockScanRow).
unsigned row_threads(const kir::Kernel& k, const TuningConfig& config, unsigned warp_width);

// Whether a reduction's rows lie across memory (a load that varies along the innermost
// reduced dim has unit stride along the innermost output dim, and no load reads a row
// contiguously: column sums, softmax over dim 0) and are long enough to share threads. Then
// a block holds a warp of consecutive rows, the lanes of a warp on 32 neighbouring rows (so
// each of the warp's loads is one coalesced access) and the block's warps on parts of those
// rows, combined through shared memory (column mode).
bool column_rows(const kir::Kernel& k, const TuningConfig& config, unsigned warp_width);

// Rows a block of a reduction kernel holds (its threads: rows x row_threads, or the config's
// block size in column mode).
unsigned rows_per_block(const kir::Kernel& k, const TuningConfig& config, unsigned warp_width);

// Pointwise loads to stage through (warp x warp) shared-memory tiles: unmasked, linear in the
// kernel's dims, stepping by 1 along the second-to-last dim and by more along the last (the
// transposed operand of `a + a^T`). Empty when the config turns tiles off, or when the tiles
// would not fit a block's shared memory (wide dtypes on wave64).
std::vector<const kir::Op*> tiled_loads(const kir::Kernel& k, const TuningConfig& config,
                                        unsigned warp_width);

// Tiles of a tiled kernel (each block walks whole tiles).
int64_t tile_count(const kir::Kernel& k, unsigned warp_width);

LaunchShape launch_shape(const kir::Kernel& k, const TuningConfig& config, unsigned warp_width);

}  // namespace kiln::gpu
