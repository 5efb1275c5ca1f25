// The front of the pipeline, shared by compiling and by `kiln compile --emit`: composites
// decomposed, the graph lowered to LoopIR, and (with fusion on) pointwise producers inlined.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/options.h"
#include "core/lower/loop_ir.h"
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
};

Result<ScheduledGraph> schedule_graph(const Graph& graph,
                                      std::shared_ptr<const OpRegistry> registry,
                                      const ScheduleOptions& schedule);

}  // namespace kiln
