// Comparing results with the oracle: tolerances by dtype and the largest errors seen.
#pragma once

#include <cstdint>

#include "core/graph/host_tensor.h"

namespace kiln {

// |actual - expected| <= atol + rtol * |expected| + the reduction term below. Kernels compute
// f16/bf16 in f32 and f32 in f32 where the oracle uses f64 and rounds once per node, so rtol is
// a few roundings of the output dtype (torch.testing's defaults).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};
Tolerance tolerance_for(DType dtype);

// What a sum may lose to rounding that the per-element rule cannot see: a sum of n terms
// accumulated in precision u (f32 for every dtype but f64) is off by about sqrt(n) * u times
// the sum of the terms' magnitudes, which for signed terms can dwarf the result itself.
// `magnitude` holds, per output element, the sum of |terms| (the oracle run on |inputs|);
// `terms` is the longest reduction in the graph. The bound adds 2 * sqrt(terms) * u * magnitude.
// `perturbed`, per output element, is the oracle run again with each node's float outputs off
// by a few units of roundoff (run_oracle): an op's few ulps of error, which the per-element rule
// allows, grow through ill-conditioned ops after it (log near 1, a difference of near-equal
// values, a floor at an integer), so the bound adds 2 * |perturbed - expected|.
struct ReductionBound {
  const HostTensor* magnitude = nullptr;
  int64_t terms = 1;
  const HostTensor* perturbed = nullptr;
};
// The unit roundoff of the precision sums of `dtype` accumulate in.
double accumulation_roundoff(DType dtype);

struct Comparison {
  double max_abs = 0;      // largest |actual - expected|
  double max_rel = 0;      // largest |actual - expected| / |expected| (expected != 0)
  int64_t mismatches = 0;  // elements outside the tolerance (or shapes that differ)
  int64_t first_mismatch = -1;
  bool ok() const { return mismatches == 0; }
};

// NaN matches NaN, infinities match themselves. Shapes and dtypes must agree. A bool must be
// stored as exactly 0 or 1 (any other byte is an unwritten or corrupt element).
Comparison compare(const HostTensor& actual, const HostTensor& expected, Tolerance tol,
                   ReductionBound reduction = {});
inline Comparison compare(const HostTensor& actual, const HostTensor& expected) {
  return compare(actual, expected, tolerance_for(expected.dtype()));
}

}  // namespace kiln
