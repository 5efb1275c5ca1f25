// Advanced indexing (x[i0, :, i2]) inside a kernel: which element of `self` a result element
// names. index.Tensor reads through it; index_put writes through it.
#pragma once

#include <optional>
#include <vector>

#include "core/lower/lower_context.h"
#include "core/ops/indexing.h"

namespace kiln {

// The types of the index tensors of list argument `arg` (nullopt for a None).
std::vector<std::optional<TensorType>> list_types(const NodeLowering& n, int arg);

// The coordinates in `self` (operand 0) of result element `vars` (over `plan.result`): kept
// dims from `vars`, indexed dims from the checked index tensors of list argument `list_arg`.
std::vector<Expr> advanced_index_at(NodeLowering& n, KernelBuilder& kb, const AdvancedIndex& plan,
                                    int list_arg, const std::vector<Expr>& vars);

}  // namespace kiln
