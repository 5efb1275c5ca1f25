// The plan a compiled graph runs: from a lowered program, the steps (allocate, launch,
// extern, host, free) in kernel order, and the arena that holds every temporary. Both the
// compile and a compiled graph read back from the cache build it this way, so a plan is
// never taken from anywhere but the program it runs.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/compiled_graph_parts.h"
#include "kiln/kir.hpp"

namespace kiln {

// Fills p.plan and the step counts of p.stats from p.program: kernels the plugin generates
// (appended to `batch`, one KIR kernel each), externs it implements (`externs`, its extern
// list), and everything else on the host oracle (named in p.stats.fallbacks).
Status build_plan(CompiledGraph::Parts& p, const std::vector<std::string>& externs,
                  std::vector<kir::Kernel>& batch);

// Lifetimes of the temporaries over p.plan and their offsets in one arena (verified before
// use); `report` gets the table the debug dump writes.
Status plan_arena(CompiledGraph::Parts& p, std::string& report);

}  // namespace kiln
