#include <fmt/format.h>

#include "core/config/options_key.h"
#include "core/graph/graph_dump.h"
#include "core/kir/kir_hash.h"
#include "core/runtime/compile_units.h"
#include "core/runtime/compiled_graph_cache.h"
#include "core/support/build_id.h"

namespace kiln {

std::optional<CacheKey> compiled_graph_key(const Graph& graph, const Plugin& plugin,
                                           uint32_t device, const ScheduleOptions& schedule,
                                           const AutotuneOptions& autotune) {
  const std::string core = core_build_id();
  if (core.empty()) return std::nullopt;
  // The dump names every op, argument and type; random ranges steer test inputs only, but
  // they travel in the entry, so they are part of its key.
  std::string text = dump_graph(graph);
  for (const Value& v : graph.values)
    if (v.random_range)
      text +=
          fmt::format("range %{} {} {}\n", v.name, v.random_range->first, v.random_range->second);
  return CacheKey{"graphs",
                  {{"graph", kir_hash(text)},
                   {"device", device_label(plugin, device)},
                   {"compiler", plugin.attributes().compiler_fingerprint},
                   {"schedule", schedule_key_text(schedule)},
                   {"tuning", tuning_key_text(autotune)},
                   {"core", core},
                   {"format", std::string(kCompiledGraphFormat)}}};
}

}  // namespace kiln
