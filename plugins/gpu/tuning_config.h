// The knobs of a generated GPU kernel, as the plugin's tuning space offers them: one line of
// "key=value" pairs (the ABI's tuning config), read over a base config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::gpu {

struct TuningConfig {
  unsigned block_size = 512;       // threads per block (512 measured best on an H100)
  unsigned max_blocks = 132 * 16;  // enough to fill a large GPU several times over
  // Rows up to this long are reduced by one thread each (no shuffles, a row per lane: short
  // windows such as pooling's and depthwise convolution's).
  int64_t thread_row_limit = 16;
  // Longer rows up to this long are reduced by one warp each (no shared memory, no barriers);
  // longer rows by the whole block.
  int64_t warp_row_limit = 4096;
  // Multi-pass reductions keep up to this many elements of a row per thread in registers
  // (loaded once); longer rows, or 0, walk the row again in each pass. A target may raise it
  // (the ptx plugin keeps 64: ptx_default_tuning).
  int64_t persistent_limit = 32;
  // Reductions walking a row from memory an element at a time: elements a thread takes per
  // step, the row's threads apart (loads in flight); 0 picks 8 for rows of 2-byte elements or
  // less, else 4 (cross-entropy over bf16 rows of 50257 on an H100: 130 -> 84 us).
  int64_t walk_lanes = 0;
  // Pointwise kernels: runs of 4 elements each thread takes per grid-stride step.
  int64_t runs_per_step = 1;
  // Pointwise kernels that read an operand transposed stage it through shared-memory tiles.
  bool tiles = true;
};

// The knob names parse_tuning accepts.
const std::vector<std::string>& tuning_keys();

// `base` with the knobs `line` names ("block_size=512 tiles=0"); throws std::invalid_argument
// naming the pair that is unknown or out of range.
TuningConfig parse_tuning(const std::string& line, TuningConfig base);

// Every knob of `c` as one line that parse_tuning reads back to `c`.
std::string tuning_line(const TuningConfig& c);

}  // namespace kiln::gpu
