// Inputs for timing and checking a kernel on its own, as a model would give it data: floats
// uniform in [-1, 1); integers that a check_index bounds (gather and scatter positions) spread
// over every valid position, so gathers touch as much memory as real ones; other integers in
// [1, 64] (no zero divisors); bools fair coin flips.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/host_tensor.h"
#include "kiln/kir.hpp"

namespace kiln {

// One tensor per buffer of `k`, in order; `Out` buffers get a tensor of no elements (nothing
// to upload).
std::vector<HostTensor> tuning_inputs(const kir::Kernel& k, uint64_t seed);

// The exclusive upper bound of the valid values of each integer input buffer that some
// check_index bounds (through casts), by buffer index; 0 where none does.
std::vector<int64_t> index_bounds(const kir::Kernel& k);

}  // namespace kiln
