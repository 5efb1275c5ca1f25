// The part of a GPU plugin's artifact that lists its kernels, one line each before the code:
// "kernel NAME BLOCK GRID BYTES..." (launch shape, then each buffer's size in bytes, which
// launches check their buffers against).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/launch_shape.h"

namespace kiln::gpu {

struct ListedKernel {
  std::string name;
  LaunchShape shape;
  std::vector<int64_t> buffer_bytes;
};

// The lines for the batch's generated kernels (externs have none).
std::string kernel_lines(const std::vector<kir::Kernel>& kernels, const TuningConfig& tuning,
                         unsigned warp_width);

// Reads lines up to the line `end` (consumed); throws std::invalid_argument naming a
// malformed line or a missing `end`.
std::vector<ListedKernel> read_kernel_lines(std::istream& in, const std::string& end);

}  // namespace kiln::gpu
