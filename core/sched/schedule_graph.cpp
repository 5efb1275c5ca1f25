#include "core/sched/schedule_graph.h"

#include "core/lower/lower_graph.h"
#include "core/passes/decompose.h"

namespace kiln {

Result<ScheduledGraph> schedule_graph(const Graph& graph,
                                      std::shared_ptr<const OpRegistry> registry,
                                      const ScheduleOptions& schedule) {
  auto decomposed = decompose(graph, std::move(registry), lowers_directly);
  if (!decomposed) return std::move(decomposed).error();
  ScheduledGraph s;
  s.graph = std::move(*decomposed);
  auto lowered = lower_graph(s.graph);
  if (!lowered) return std::move(lowered).error();
  s.unfused = std::move(lowered->program);
  s.fallbacks = std::move(lowered->fallbacks);
  s.program = s.unfused;
  if (schedule.fusion) s.inlining = inline_pointwise(s.program, inline_options(schedule));
  return s;
}

}  // namespace kiln
