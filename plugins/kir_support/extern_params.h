// An extern call's scalars as integers, for the externs whose parameters all are, and its
// dtype parameter.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/kir.hpp"
#include "kiln/plugin.h"

namespace kiln::kir_support {

// Throws std::invalid_argument when a scalar is not an integer.
std::vector<int64_t> integer_params(const kiln_launch_args& args);

// A dtype parameter: the tensors' dtype, and whether f32 products may be rounded to TF32
// (kir::kExternTf32).
struct ExternDtype {
  kir::DType dtype = kir::DType::F32;
  bool tf32 = false;
};
// Throws std::invalid_argument naming a code that is neither a DType nor kExternTf32.
ExternDtype read_extern_dtype(int64_t code);

}  // namespace kiln::kir_support
