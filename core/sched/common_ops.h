// Common-subexpression elimination inside one kernel: an op that repeats an earlier op
// (same kind, dtype, operands, address) reuses its value. Merged and inlined bodies load the
// same element several times; a backend then sees one load, not three.
#pragma once

#include "core/lower/loop_ir.h"

namespace kiln {

void eliminate_common_ops(LoopKernel& kernel);

}  // namespace kiln
