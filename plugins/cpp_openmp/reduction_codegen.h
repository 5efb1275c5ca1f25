// The C++ skeleton of a reduction kernel: rows in parallel, each row walked once per pass of
// its RowPlan (row_plan.h) in 8-lane vectors; a row too long for the few rows there are is
// split across threads instead (one-pass kernels only); rows that lie across memory go to
// column_reduction_codegen.h.
#pragma once

#include <set>
#include <string>

#include "kiln/kir.hpp"
#include "plugins/cpp_openmp/codegen.h"
#include "plugins/kir_support/row_plan.h"

namespace kiln::cpu {

std::string reduction_kernel(const kir::Kernel& k, const CodegenOptions& options);

// Stage `level` of a row (row_plan.h) as scalar code: the results of the previous pass's
// reduces (from accumulators f<id>) as s<id>, then the stage's ops but those in `skip`
// (computed elsewhere).
std::string row_stage(const kir::Kernel& k, const kir_support::RowPlan& plan, size_t level,
                      const std::string& indent, const std::set<int>& skip = {});

}  // namespace kiln::cpu
