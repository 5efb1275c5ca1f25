// Comparing results with the oracle: tolerances by dtype and the largest errors seen.
#pragma once

#include <cstdint>

#include "core/graph/host_tensor.h"

namespace kiln {

// |actual - expected| <= atol + rtol * |expected|. Kernels compute f16/bf16 in f32 and
// f32 in f32 where the oracle uses f64, so the tolerances cover a few roundings.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
Tolerance tolerance_for(DType dtype);

struct Comparison {
  double max_abs = 0;      // largest |actual - expected|
  double max_rel = 0;      // largest |actual - expected| / |expected| (expected != 0)
  int64_t mismatches = 0;  // elements outside the tolerance (or shapes that differ)
  int64_t first_mismatch = -1;
  bool ok() const { return mismatches == 0; }
};

// NaN matches NaN, infinities match themselves. Shapes and dtypes must agree.
Comparison compare(const HostTensor& actual, const HostTensor& expected, Tolerance tol);
inline Comparison compare(const HostTensor& actual, const HostTensor& expected) {
  return compare(actual, expected, tolerance_for(expected.dtype()));
}

}  // namespace kiln
