// Writes through indices into a copy of a tensor, as KIR `scatter` kernels: the output is
// first set (to `self`, or a constant), then one kernel over the scattered elements combines
// each into its place: `store` (duplicates: any one wins, as PyTorch says), `sum`, `prod`,
// `max`, `min` (atomic on every plugin) and `mean` (a sum and a count, divided after).
// Sums of f16/bf16 run in an f32 buffer and round once, as the reference does.
#pragma once

#include <functional>
#include <string>

#include "core/lower/lower_context.h"

namespace kiln {

// Where one scattered element goes (an address in the contiguous output) and, when asked
// for, its value in `dtype`; `mask` (-1: always) leaves elements out.
struct ScatterSite {
  Expr address;
  int value = -1;
  int mask = -1;
};

struct ScatterSpec {
  Shape space;  // the scattered elements: the kernels' pointwise variables walk it
  std::function<ScatterSite(KernelBuilder& kb, bool want_value, DType dtype)> site;
  // The output before scattering, at `kb`'s pointwise variables (over the output's shape).
  std::function<int(KernelBuilder& kb)> initial;
  std::string reduce = "store";  // store, sum, prod, mean, max, min
  bool include_self = true;      // false: a place some element reaches starts from it alone
};

// Emits the kernels that compute output 0 of `n` from `spec`.
void lower_scatter_combine(NodeLowering& n, const ScatterSpec& spec);

// scatter.src / scatter.value (`from_tensor`) into any tensor.
bool lower_scatter_into(NodeLowering& n, bool from_tensor);

std::map<std::string, LowerFn> scatter_combine_lowerings();

}  // namespace kiln
