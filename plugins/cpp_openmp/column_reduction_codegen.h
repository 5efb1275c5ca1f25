// Reductions over outer dims (column sums, softmax over dim 0, a sum over a middle dim): the
// row form walks such a row across memory, one gathered element per lane. This form instead
// walks the reduction outermost and runs the innermost output dim in vectors, so every load is
// a contiguous vector, and keeps one accumulator lane per output: a block of outputs at a time
// (per thread), each pass of the row plan over the block, stages per output in between.
#pragma once

#include <string>

#include "kiln/kir.hpp"
#include "plugins/cpp_openmp/codegen.h"
#include "plugins/kir_support/row_plan.h"

namespace kiln::cpu {

// Whether `k` (planned as `plan`, without row caches) reads its rows across memory: some load
// that varies along the reduction has unit stride along the innermost output dim (or reads
// rows picked per reduction step, the same row in every lane: an embedding bag's), none that
// moves along the innermost output dim has unit stride along the innermost reduction dim, and
// every pass combines lane by lane.
bool prefers_columns(const kir::Kernel& k, const kir_support::RowPlan& plan,
                     const CodegenOptions& options);

// Whether `k`'s column blocks are sized for rows picked per reduction step (up to 64 vectors,
// read in groups of 8 from a step table) rather than by the column_block option.
bool picks_rows(const kir::Kernel& k);

std::string column_reduction_kernel(const kir::Kernel& k, const kir_support::RowPlan& plan,
                                    const CodegenOptions& options);

}  // namespace kiln::cpu
