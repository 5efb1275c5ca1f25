// What a mask says about the loop variables. A masked access happens only where its mask
// holds, so (1) the compiled-graph cache's bounds check proves a masked access inside its
// buffer under the ranges the mask implies, and (2) a masked load's index may be simplified
// under them: inside the half of a `cat` a load serves, an index built through a reshape
// (floordiv and mod of a flat position) becomes linear again, a vector load, not a gather.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/expr/simplify.h"
#include "core/lower/loop_ir.h"

namespace kiln {

// Narrows `ranges` by what mask value `mask` of `body` says where it is on: each int64
// compare (`lt le gt ge`) of an `index` op with an integer constant in its tree of `and`s
// (how padding and cat guard their loads). An index of one variable plus a constant narrows
// that variable; when `guarded` is given, any compared index expression is bounded there
// too, by its text (a cat read at a computed place). Anything else narrows nothing, which
// only widens the ranges, so bounds drawn from them stay sound.
void narrow_by_mask(const std::vector<LoopOp>& body, int mask, VarRanges& ranges,
                    std::map<std::string, Interval>* guarded = nullptr);

// `ranges` narrowed by mask value `mask` of `body` (narrow_by_mask).
VarRanges ranges_under_mask(const std::vector<LoopOp>& body, int mask, VarRanges ranges);

// `e` without the clamps min(max(E, lo), hi) whose E `guarded` (narrow_by_mask's) keeps
// inside [lo, hi]: where the mask holds they change nothing (a padded window's tap).
Expr drop_guarded_clamps(const Expr& e, const std::map<std::string, Interval>& guarded);

// Simplifies the index of every load, store and index op of `k` under `k`'s variable ranges,
// and a masked load's under the ranges its mask implies, without the clamps it makes idle: a
// masked-off lane never reads, and the rest is linear again (a vector load, not a gather).
void simplify_indices(LoopKernel& k);

}  // namespace kiln
