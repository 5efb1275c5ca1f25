// The C++ skeleton of a reduction kernel: rows in parallel, each row walked once per pass of
// its RowPlan (row_plan.h) in 8-lane vectors; a row too long for the few rows there are is
// split across threads instead (one-pass kernels only).
#pragma once

#include <string>

#include "kiln/kir.hpp"
#include "plugins/cpp_openmp/codegen.h"

namespace kiln::cpu {

std::string reduction_kernel(const kir::Kernel& k, const CodegenOptions& options);

}  // namespace kiln::cpu
