// Softmax's sum of exp(a - max(a)) found in the walk that finds the max (ReduceState's
// kOnlineSoftmax): a row walked from memory once per level is read once less (cross-entropy's
// rows once in all). Pure plan rewriting over KIR; the state itself is in reduce_state.
#pragma once

#include <map>

#include "kiln/kir.hpp"
#include "plugins/kir_support/row_plan.h"

namespace kiln::gpu {

// The parts of a softmax sum: `sum` is reduce sum (f32 or f64) of exp(a - m) where m is
// reduce max of a. Such a sum is at least 1 where m is finite (the max's own term), so its
// reciprocal is a normal number. All null when `sum` is not one.
struct SoftmaxSum {
  const kir::Op* max = nullptr;
  const kir::Op* sub = nullptr;
  const kir::Op* exp = nullptr;
};
SoftmaxSum softmax_sum(const kir::Kernel& k, const kir::Op* sum);

// Where pass p reduces max(a) and pass p + 1 does nothing but sum exp(a - max), merges the
// two (stages included); returns the folded sums by their max's id.
std::map<int, const kir::Op*> fold_online_softmax(const kir::Kernel& k, kir_support::RowPlan& plan);

}  // namespace kiln::gpu
