// Fusion after inlining: kernels that touch the same buffers are merged when their loops line
// up. Vertical (a consumer with its producer: a reduction with its epilogue, or several
// reductions over the same rows, as in softmax and layernorm) and horizontal (siblings that
// read the same input). Candidates that save bytes are taken greedily, the one saving the
// most estimated time (roofline cost model) first; a merge never reorders
// a dependency and never raises the peak of live temporaries. Pairs left apart are reported
// with the reason.
#pragma once

#include <vector>

#include "core/lower/loop_ir.h"
#include "core/sched/fusion_failure.h"
#include "core/sched/kernel_cost.h"
#include "core/sched/merge_kernels.h"

namespace kiln {

struct FuseOptions {
  MergeOptions merge;
  // A merge may raise the planned peak of live temporaries by at most this many bytes.
  int64_t max_peak_growth_bytes = 0;
  // The device's roofline: candidates rank by estimated time saved, then by bytes saved.
  Roofline roofline;
};

struct FuseReport {
  int fused = 0;                        // merges made
  std::vector<FusionFailure> failures;  // pairs that touch a common buffer and stayed apart
};

FuseReport fuse_kernels(LoopProgram& program, const FuseOptions& options = {});

// Drops kernels whose every result is a temporary no one reads (a fill a scatter replaced),
// unless they check indices: their error is part of the result.
void remove_dead_kernels(LoopProgram& program);

// Drops buffers no kernel touches and that are not outputs (inputs and params stay: they
// are the graph's interface), renumbering the rest.
void prune_buffers(LoopProgram& program);

}  // namespace kiln
