// The block shape of the ptx plugin's implicit-GEMM convolution kernel (conv_kernel.h): how
// many output positions a block takes, how much of the reduction each step copies, how many
// steps are in flight; the default, or the `conv_tile` option's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "plugins/kir_support/conv_call.h"

namespace kiln::ptx {

inline constexpr int64_t kConvCols = 64;  // output channels per block

// Output positions per block (128 or 256), bytes of the reduction per shared row and step (64
// or 128), steps in the ring (2-4), positions per warp (32 or 64: 2 or 4 mma fragments of 16
// rows by the block's 64 channels; 64 reads each weight fragment for twice the products), and
// slices (1 or 2): with 2, twice the warps, each taking every other 32 bytes of a step, their
// sums added through shared memory at the end (more warps to hide latency where the blocks
// are few). The default, 128x64x3 (47 KB of shared memory with the scratch words: every
// device's blocks take it without opting in), was as fast as the others or faster on most of
// ResNet's 3x3 convolutions on the H100, none of them better by more than runs differ
// (bench/results/2026-12-06-conv-tiles/).
struct ConvTile {
  int64_t rows = 128, step_bytes = 64, stages = 3, warp_rows = 32, slices = 1;
  int64_t warps_per_slice() const { return rows / warp_rows; }
  int64_t threads() const { return warps_per_slice() * 32 * slices; }
  // Bytes per shared row: 16 past the step, so the 8 rows an ldmatrix reads start 20 (64-byte
  // steps) or 4 (128-byte steps) banks apart: conflict-free.
  int64_t pitch() const { return step_bytes + 16; }
  // Dynamic shared memory per block: the ring of patch and weight rows, which also holds the
  // sums of slices past the first at the end (rows x 64 f32 per slice).
  int64_t ring_bytes() const { return stages * (rows + kConvCols) * pitch(); }
  int64_t exchange_bytes() const { return (slices - 1) * rows * kConvCols * 4; }
  int64_t shared_bytes() const { return std::max(ring_bytes(), exchange_bytes()); }
  // Static shared memory per block beside it (a scratch word per thread).
  int64_t static_shared_bytes() const { return threads() * 8; }
  // Both: what a device's block must take (its opt-in limit).
  int64_t block_shared_bytes() const { return shared_bytes() + static_shared_bytes(); }
  // "128x64x3"; "256x64x3x64" with 64 positions per warp; "128x64x3x32x2" in 2 slices
  std::string name() const;
};

// Blocks of a launch of `call` in `tile` (before any split of the reduction).
int64_t conv_blocks(const kir_support::ConvCall& call, const ConvTile& tile);

// The tile for `call` without the option: 256 positions by 64-row warps (each weight fragment
// read for twice the products) where those blocks still fill every multiprocessor once and a
// block's shared memory fits `shared_limit` bytes (the device's opt-in limit), else the default
// (always for f32 without TF32).
ConvTile conv_tile_for(const kir_support::ConvCall& call, int64_t multiprocessors,
                       int64_t shared_limit);

// "ROWSxSTEPxSTAGES[xWARP_ROWS[xSLICES]]" (the `conv_tile` option), or nullopt with `why`.
std::optional<ConvTile> parse_conv_tile(const std::string& text, std::string& why);

}  // namespace kiln::ptx
