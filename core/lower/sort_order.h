// The order sort and topk kernels compare in (the reference's, core/ops/scan_sort_order.h):
// NaN last ascending and first descending, ties by position in the line.
#pragma once

#include <vector>

#include "core/expr/expr.h"
#include "core/lower/kernel_builder.h"

namespace kiln {

// Whether element b sorts before element a; `ib` and `ia` are their positions in the line
// (i64 values), which break ties. `d` is the elements' dtype (NaN rules for floats).
int sorts_before(KernelBuilder& kb, int b, int a, int ib, int ia, DType d, bool descending);

// An element compared against many (a merge's binary searches), with what the comparisons
// need of it computed once.
struct SortPivot {
  int value;
  int nan = -1, number = -1;  // floats: whether it is NaN, and not
};
SortPivot sort_pivot(KernelBuilder& kb, int value, DType d);
// Whether b sorts before the pivot, where whether b's position is before the pivot's is
// known (`earlier`, a bool value): then before = ahead or tied, else strictly ahead.
int sorts_before(KernelBuilder& kb, int b, const SortPivot& a, int earlier, DType d,
                 bool descending);

// `vars` with the dim's variable replaced by `at`.
std::vector<Expr> with_dim(std::vector<Expr> vars, size_t dim, const Expr& at);

}  // namespace kiln
