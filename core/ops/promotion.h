// PyTorch's type promotion across an op's operands (torch.result_type): dimensioned
// tensors outrank 0-dim tensors, which outrank wrapped numbers, unless a lower rank brings
// a higher category (bool < integer < float).
#pragma once

#include <initializer_list>

#include "core/ops/op_def.h"

namespace kiln {

// The common dtype of the listed arguments (tensors, wrapped numbers, Scalar args; None skipped).
DType result_type(const InferContext& c, std::initializer_list<int> args);
DType result_type(const RefContext& c, std::initializer_list<int> args);

// The dtype ops like sin compute in: floats (and complex) stay, everything else becomes the
// default float.
inline DType to_float(DType d) {
  return is_floating(d) || is_complex(d) ? d : kDefaultFloat;
}

}  // namespace kiln
