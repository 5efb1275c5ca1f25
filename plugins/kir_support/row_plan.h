// How a reduction kernel runs per row (shared by the plugins' code generators). Its body may hold
// several reductions, some reading others' results (softmax: the sum reads the max), and
// elementwise work over the row after them (softmax's normalize): the row is walked once per level
// of that nesting (a pass), and between passes the row's scalars are computed once (a stage).
//
//   stage 0 | pass 0 (reduces of level 0) | stage 1 | pass 1 | ... | stage P
//
// An op that varies along the reduction runs inside the pass of its level and is recomputed
// there from the row's elements when a later pass needs it; every other op runs once per row
// in the stage of its level. A scan is a per-element value of the pass that computes it; a
// kernel that scans has no reduce, so it is one pass, walked in order.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "kiln/kir.hpp"

namespace kiln::kir_support {

struct RowPass {
  std::vector<const kir::Op*> ops;      // what the loop body runs, in body order
  std::vector<const kir::Op*> reduces;  // accumulated in this pass
  std::set<int> row_values;             // stage values the body reads (splat into lanes)
  std::set<int> cache_writes;           // per-element values this pass keeps for later passes
  std::set<int> cache_reads;            // ... and those it reads back instead of recomputing
  bool vectorized = true;               // every reduce here combines lane by lane
  // A scan runs here: the row's elements are visited one at a time, in order, by one thread.
  bool in_order = false;
};

struct RowPlan {
  std::vector<RowPass> passes;
  std::vector<std::vector<const kir::Op*>> stages;  // passes.size() + 1 stages
  // A classic reduction (one pass, no per-element store) may split its row across threads.
  bool single_pass = true;
};

// Throws std::runtime_error when the body cannot run this way. A per-element value that costs
// a library call (exp, log, ...) and is needed again by a later pass is kept (cache_writes /
// cache_reads) while the kernel's kept rows take at most `max_cache_bytes` together; 0
// recomputes everything.
RowPlan plan_rows(const kir::Kernel& k, int64_t max_cache_bytes);

// Variables an index expression names (x0, r1, t5).
void collect_vars(const kir::Expr& e, std::set<std::string>& out);

}  // namespace kiln::kir_support
