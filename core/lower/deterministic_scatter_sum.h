// Float sums through scatter that give the same bits every run (schedule.deterministic).
//
// A float atomic sum depends on the order the device adds in. Integer sums do not, so each
// place's values are summed in fixed point: a first pass finds, per place, the largest finite
// |value| and how many values arrive (a max and an integer count: both order-free); each
// value is then multiplied by 2^61 / (largest * count), so that no partial sum can pass 2^61,
// rounded to an int64 and summed with integer atomics; a last pass divides by the same factor
// and adds the place's initial value. Infinities and NaNs are summed apart in float: a sum of
// only non-finite values (finite ones counted as 0) is the same in any order.
//
// Error: each value is rounded twice, once in f64 (the product) and once to the grid
// largest * count * 2^-61, so a place is off from the exact sum by at most
// sum|v| * 2^-53 + count^2 * max|v| * 2^-62 before the one rounding to the output dtype: far
// below one rounding for f32 and half types; for f64, one rounding of each value, less than
// the worst case of a sequential sum.
#pragma once

#include <functional>

#include "core/lower/scatter_combine.h"

namespace kiln {

class DeterministicScatterSum {
 public:
  // Emits the passes that sum, per place (`places` of them), the values `site` sends over
  // `space`; `site` is called inside each kernel over `space` and gives values in `acc`
  // (floating).
  DeterministicScatterSum(NodeLowering& n, const Shape& space,
                          const std::function<ScatterSite(KernelBuilder& kb)>& site, DType acc,
                          int64_t places);

  // In a later kernel: `initial` (in acc) plus the sum that reached place `at`.
  int add_to(KernelBuilder& kb, const Expr& at, int initial) const;

 private:
  DType acc_;
  int largest_ = -1;  // acc: the largest finite |value| of each place
  int count_ = -1;    // i64: how many values reach each place
  int fixed_ = -1;    // i64: the sum of the scaled, rounded finite values
  int special_ = -1;  // acc: the sum of the non-finite values (finite ones as 0)
};

}  // namespace kiln
