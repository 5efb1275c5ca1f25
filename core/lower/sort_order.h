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
// The same where whether b's position is before a's is known: `earlier`, a bool value.
int sorts_before(KernelBuilder& kb, int b, int a, int earlier, DType d, bool descending);

// `vars` with the dim's variable replaced by `at`.
std::vector<Expr> with_dim(std::vector<Expr> vars, size_t dim, const Expr& at);

}  // namespace kiln
