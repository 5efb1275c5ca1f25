// A causal mask as GPT-2's `zeros(s, s).masked_fill(ones(s, s).triu(1), -inf)` traces into a
// graph: -inf where key - query >= `from` (1: causal), 0 elsewhere, over [rows, cols], from no
// input (what core/passes/attention_fusion.h recognises as is_causal).
#pragma once

#include <cmath>

#include "core/graph/builder.h"

namespace kiln::test {

inline ValueRef traced_causal_mask(GraphBuilder& b, int64_t rows, int64_t cols, DType dtype,
                                   int64_t from = 1) {
  auto arange = [&](int64_t n, int64_t dim) {
    return b.op("aten.unsqueeze.default", {b.op("aten.arange.start_step", {int64_t{0}, n}), dim});
  };
  const ValueRef hidden =
      b.op("aten.ge.Scalar", {b.op("aten.sub.Tensor", {arange(cols, -2), arange(rows, -1)}), from});
  const ValueRef zeros = b.op("aten.full.default", {IntList{rows, cols}, 0.0}, {{"dtype", dtype}});
  const ValueRef inf = b.op("aten.scalar_tensor.default", {-INFINITY}, {{"dtype", dtype}});
  return b.op("aten.where.self", {hidden, inf, zeros});
}

}  // namespace kiln::test
