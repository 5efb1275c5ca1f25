// A plugin without a matmul library still runs mm/bmm on its device: the Extern call becomes
// a generated reduction kernel ([batch, m, n] over [k], operands read through the call's
// offsets and strides, products summed in the compute dtype). Slower than a library, but
// correct and on the device, instead of a trip to the host oracle.
#pragma once

#include <string>
#include <vector>

#include "core/lower/loop_ir.h"

namespace kiln {

// Replaces every mm/bmm Extern whose name is not in `available` (the plugin's externs).
// Returns how many it replaced.
int generate_missing_matmuls(LoopProgram& program, const std::vector<std::string>& available);

}  // namespace kiln
