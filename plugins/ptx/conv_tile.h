// The block shape of the ptx plugin's implicit-GEMM convolution kernel (conv_kernel.h): how
// many output positions a block takes, how much of the reduction each step copies, how many
// steps are in flight; the default, or the `conv_tile` option's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::ptx {

inline constexpr int64_t kConvCols = 64;  // output channels per block

// Output positions per block (one thread each: 128 or 256), bytes of the reduction per shared
// row and step (64 or 128), and steps in the ring (2-4). The default, 128x64x3 (47 KB of
// shared memory with the scratch words: every device's blocks take it without opting in),
// was as fast as the others or faster on most of ResNet's 3x3 convolutions on the H100, none
// of them better by more than runs differ (bench/results/2026-12-06-conv-tiles/).
struct ConvTile {
  int64_t rows = 128, step_bytes = 64, stages = 3;
  int64_t threads() const { return rows; }
  // Bytes per shared row: 16 past the step, so the 8 rows an ldmatrix reads start 20 (64-byte
  // steps) or 4 (128-byte steps) banks apart: conflict-free.
  int64_t pitch() const { return step_bytes + 16; }
  // Dynamic shared memory per block: the ring of patch and weight rows.
  int64_t shared_bytes() const { return stages * (rows + kConvCols) * pitch(); }
  // Static shared memory per block beside it (a scratch word per thread).
  int64_t static_shared_bytes() const { return threads() * 8; }
  std::string name() const;  // "128x64x3"
};

// "ROWSxSTEPxSTAGES" (the `conv_tile` option), or nullopt with `why`.
std::optional<ConvTile> parse_conv_tile(const std::string& text, std::string& why);

}  // namespace kiln::ptx
