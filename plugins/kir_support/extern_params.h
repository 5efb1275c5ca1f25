// An extern call's scalars as integers, for the externs whose parameters all are.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/plugin.h"

namespace kiln::kir_support {

// Throws std::invalid_argument when a scalar is not an integer.
std::vector<int64_t> integer_params(const kiln_launch_args& args);

}  // namespace kiln::kir_support
