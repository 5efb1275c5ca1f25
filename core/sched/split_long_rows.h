// Reductions over few long rows leave most of a GPU idle: a softmax over 64 rows of 262144
// ran as 64 blocks (0.46x Inductor's split form on an H200), a sum over dim 0 of [8192, 512]
// as 16 blocks of 32 columns. Such a kernel is split. Its reductions go in levels (a level's
// operands read only earlier levels' results: softmax's max, then its sum of exponentials);
// each level becomes
//  - a partial kernel over [S, rows] walking one of S chunks of each row (rows * S reach the
//    threshold), storing each reduction's partial state, and
//  - a final kernel over the rows combining a row's S partial states (sums, maxima; Welford
//    states by Chan's merge) into the level's results;
// and what the kernel computes per element after its last level (softmax's quotient) becomes
// a pointwise kernel over the whole space reading those results. Each level reads the input
// again: more bytes moved, all of them by the whole device.
#pragma once

#include <cstdint>

#include "core/lower/loop_ir.h"

namespace kiln {

// What decides a split: rows given outright (schedule.split_rows_below), else an estimate of
// the thread blocks a GPU gives the kernel: a block per row where rows lie along memory, a
// block per `column_rows` rows where they lie across it (column mode), against `min_blocks`.
struct SplitRowsOptions {
  int64_t min_rows = 0;      // split reductions with fewer rows (0: by blocks)
  int64_t min_blocks = 0;    // split reductions with fewer estimated blocks (0: none)
  int64_t column_rows = 32;  // rows a block takes in column mode
  int64_t min_chunk = 512;   // elements of a row each partial walks, at least
};

// Splits the qualifying reduction kernels of `program` in place (new Temp buffers for the
// partial states and the levels' results). Kernels with a scan, a scatter, argmax/argmin, more
// than one reduction dim, or a row that does not split into chunks of min_chunk stay as they
// are. Returns how many kernels were split.
int split_long_rows(LoopProgram& program, const SplitRowsOptions& options);

// The device's options: four blocks per compute unit, column mode's rows a warp wide, on
// devices that run warps (GPUs); none on CPUs (their few threads are busy with few rows).
// On an H200 (132 compute units): a softmax over 64 rows of 262144 splits, over 1024 rows of
// 32000 (1024 blocks, each row read once from registers) does not.
SplitRowsOptions device_split_options(int64_t compute_units, int64_t warp_width);

}  // namespace kiln
