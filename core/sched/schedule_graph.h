// The front of the pipeline, shared by compiling and by `kiln compile --emit`: composites
// decomposed, the graph lowered to LoopIR, and (with fusion on) pointwise producers inlined
// and kernels that line up merged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/options.h"
#include "core/lower/loop_ir.h"
#include "core/sched/fuse_kernels.h"
#include "core/sched/inline_pointwise.h"
#include "core/support/result.h"

namespace kiln {

class OpRegistry;

struct ScheduledGraph {
  Graph graph;                         // decomposed into primitives (and directly lowered ops)
  LoopProgram unfused;                 // one kernel per realized node
  LoopProgram program;                 // as scheduled
  std::vector<std::string> fallbacks;  // nodes left to the host oracle
  InlineReport inlining;
  FuseReport fusion;
  // Every producer kept as a buffer and every pair of kernels left apart, with the reason.
  std::vector<FusionFailure> failures() const;
};

// `roofline`: the target device's, for ranking fusion candidates (unknown: by bytes);
// `externs`: the plugin's library calls, for lowerings that may choose one (lower_graph).
Result<ScheduledGraph> schedule_graph(const Graph& graph,
                                      std::shared_ptr<const OpRegistry> registry,
                                      const ScheduleOptions& schedule,
                                      const Roofline& roofline = {},
                                      const std::vector<std::string>& externs = {});

}  // namespace kiln
