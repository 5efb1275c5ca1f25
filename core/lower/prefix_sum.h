// Inclusive prefix sums along one dim without a scan primitive in KIR: blocks of
// B = ceil(sqrt(n)) along the dim, the blocks' sums, their exclusive prefix sums, then each
// element adds its block's prefix to the elements of its block up to itself (masked).
// O(n * sqrt(n)) work per line instead of a scan's O(n). cumsum and masked_scatter use it.
#pragma once

#include <functional>
#include <vector>

#include "core/lower/lower_context.h"

namespace kiln {

// The element at coordinates `at` (over the summed shape), read under `mask`.
using PrefixElement = std::function<int(KernelBuilder& kb, const std::vector<Expr>& at, int mask)>;
// Receives the last kernel (pointwise variables over the summed shape) and the sum up to and
// including its element, in the accumulation dtype; stores and emits it.
using PrefixFinish = std::function<void(KernelBuilder& kb, int sum)>;

void blocked_prefix_sum(NodeLowering& n, const Shape& sizes, size_t dim, DType acc,
                        const PrefixElement& element, const PrefixFinish& finish);

}  // namespace kiln
