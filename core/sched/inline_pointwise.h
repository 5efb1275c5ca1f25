// Inlining: a pointwise kernel whose only job is to fill a temporary buffer is folded into
// every kernel that reads that buffer, so the temporary is never written or read. This is
// vertical fusion of pointwise producers, and the prologue half of reduction fusion.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/options.h"
#include "core/lower/loop_ir.h"
#include "core/sched/fusion_failure.h"

namespace kiln {

struct InlineOptions {
  // A producer is recomputed in each reader. Past this many readers, or when its body has
  // more ops than max_body_ops, it stays a buffer: recomputing a long body many times costs
  // more than the bytes it saves (Inductor's realize heuristics make the same trade).
  int max_readers = 4;
  int max_body_ops = 64;
};

// The limits a config's `schedule:` section sets (clamped: past a million means no limit).
InlineOptions inline_options(const ScheduleOptions& schedule);

struct InlineReport {
  int inlined = 0;  // producers folded away
  // Producers that stayed buffers: category `realized`, the inliner's reason as the detail.
  std::vector<FusionFailure> kept;
};

// Rewrites `program` in place; every kernel left computes what it did before.
InlineReport inline_pointwise(LoopProgram& program, const InlineOptions& options = {});

}  // namespace kiln
