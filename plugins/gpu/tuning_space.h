// The tuning space a GPU plugin offers for a batch of kernels: the heuristic default first,
// then one knob changed at a time for the kinds of kernel the batch holds. Configs that change
// how a row's values are combined (and so the sums' rounding) end in " exact=0", which the
// core's deterministic tuning skips.
#pragma once

#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/tuning_config.h"

namespace kiln::gpu {

// `block_sizes`: the block sizes the device runs (multiples of its warp width).
std::string tuning_space(const std::vector<kir::Kernel>& kernels, const TuningConfig& base,
                         const std::vector<unsigned>& block_sizes);

}  // namespace kiln::gpu
