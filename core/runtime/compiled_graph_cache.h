// Whole compiled graphs in the disk cache ("graphs" entries), so a later process skips
// decomposition, scheduling, lowering, KIR emission and memory planning: the decomposed
// graph, the LoopProgram, the plan with its arena offsets, the statistics, and the compile
// units (their KIR text and tuning configs; the artifacts stay in "kernels" entries, read
// through the kernel cache). Key: the graph as given (ops, arguments, input and parameter
// types, input ranges), the plugin, its compiler fingerprint and the device, the options
// that shape kernels, and the build of the core that scheduled it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/compiled_graph_parts.h"

namespace kiln {

// std::nullopt when the core's build cannot be identified: such entries could outlive the
// scheduler that made them, so none are read or written.
std::optional<CacheKey> compiled_graph_key(const Graph& graph, const Plugin& plugin,
                                           uint32_t device, const ScheduleOptions& schedule,
                                           const AutotuneOptions& autotune);

struct CompiledGraphRecord {
  std::vector<CompileUnit> units;  // text, names and config of each unit (no artifact)
  // The plugin's extern list the plan was made with; asked_externs: whether the graph had
  // any extern when it was made (the list is then checked again before the entry is used).
  bool asked_externs = false;
  std::vector<std::string> externs;
};

// Everything of `p` that compiling computed, up to (not including) the loaded executables
// and resident parameters.
std::string encode_compiled_graph(const CompiledGraph::Parts& p, const CompiledGraphRecord& r);

// Fills `p` (graph, program, plan, arena offsets, KIR text, kernel configs, statistics) from
// an entry; an entry from another format or damaged in a way the checksum missed is an
// error, and `p` must then be discarded.
Result<CompiledGraphRecord> decode_compiled_graph(std::string_view payload,
                                                  std::shared_ptr<const OpRegistry> registry,
                                                  CompiledGraph::Parts& p);

}  // namespace kiln
