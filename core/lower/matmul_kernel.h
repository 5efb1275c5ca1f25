// A plugin without a matmul library still runs mm/bmm on its device: the Extern call becomes
// a generated reduction kernel ([batch, m, n] over [k], operands read through the call's
// offsets and strides, products summed in the compute dtype). Slower than a library, but
// correct and on the device, instead of a trip to the host oracle.
#pragma once

#include <string>
#include <vector>

#include "core/lower/extern_list.h"
#include "core/lower/loop_ir.h"

namespace kiln {

// Whether both operands of mm/bmm call `call` have a BLAS layout: a unit stride, and the other
// stride at least the extent along it. Libraries take nothing else.
bool library_layout(const LoopKernel& call);

// Replaces every mm/bmm Extern that `available` (the plugin's externs) does not cover, or
// whose operands no library takes (library_layout).
// Returns how many it replaced.
int generate_missing_matmuls(LoopProgram& program, const std::vector<std::string>& available);

}  // namespace kiln
