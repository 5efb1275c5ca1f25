// The dtype normalization statistics (mean, rstd) and their arithmetic use: f32 for half
// inputs, the input's own dtype otherwise (as PyTorch computes them).
#pragma once

#include "core/graph/dtype.h"

namespace kiln {

inline DType stats_dtype(DType d) {
  return d == DType::F16 || d == DType::BF16 ? DType::F32 : d;
}

}  // namespace kiln
