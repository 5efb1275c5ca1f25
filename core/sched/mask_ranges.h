// What a load's mask says about the loop variables: a masked load reads only where its mask
// holds, so its index may be simplified under the variable ranges the mask implies. Inside
// the half of a `cat` a load serves, an index built through a reshape (floordiv and mod of a
// flat position) then becomes linear again: a vector load instead of a gather.
#pragma once

#include <vector>

#include "core/expr/simplify.h"
#include "core/lower/loop_ir.h"

namespace kiln {

// `ranges` narrowed by mask value `mask` of `body`: a conjunction (`and`) of int64 compares
// (`lt le gt ge`) between an `index` op of one variable plus a constant and a constant.
// Anything else in the mask narrows nothing.
VarRanges ranges_under_mask(const std::vector<LoopOp>& body, int mask, VarRanges ranges);

// Simplifies the index of every load, store and index op of `k` under `k`'s variable ranges,
// and a masked load's under the ranges its mask implies.
void simplify_indices(LoopKernel& k);

}  // namespace kiln
