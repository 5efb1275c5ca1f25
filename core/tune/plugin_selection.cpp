#include "core/tune/plugin_selection.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "core/config/options_key.h"
#include "core/graph/graph_dump.h"
#include "core/interp/random_tensor.h"
#include "core/kir/kir_hash.h"
#include "core/runtime/compile.h"
#include "core/support/median.h"

namespace kiln {
namespace {

// Median wall ms of whole runs (after warm-up), or the error of the first failing run.
Result<double> time_end_to_end(const CompiledGraph& g, const std::vector<HostTensor>& inputs,
                               const AutotuneOptions& o) {
  std::vector<double> samples;
  for (int64_t i = 0; i < o.warmup + o.reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto out = g.run(inputs);
    if (!out) return std::move(out).error();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (i >= o.warmup) samples.push_back(ms);
  }
  return median(std::move(samples));
}

CacheKey selection_key(const Graph& graph, const std::vector<SelectionCandidate>& candidates,
                       const Options& o) {
  std::string labels;
  for (const auto& c : candidates)
    labels += c.label + " @" + c.plugin->attributes().compiler_fingerprint + "\n";
  return {"select",
          {{"graph", kir_hash(dump_graph(graph))},
           {"candidates", labels},
           {"schedule", schedule_key_text(o.schedule)},
           {"protocol",
            fmt::format("end-to-end warmup={} reps={} kernels={} placement={}", o.autotune.warmup,
                        o.autotune.reps, static_cast<int>(o.autotune.kernels),
                        static_cast<int>(o.placement))}}};
}

}  // namespace

Result<CompiledGraph> select_and_compile(const Graph& graph,
                                         const std::shared_ptr<const OpRegistry>& registry,
                                         const std::vector<SelectionCandidate>& candidates,
                                         const Options& options, const DiskCache& cache,
                                         const Logging& logging) {
  auto log = logging.get("select");
  // Each candidate serves the graph with the others to run what its plugin declines.
  auto compile_one = [&](const SelectionCandidate& c) {
    std::vector<PlacementTarget> helpers;
    for (const SelectionCandidate& other : candidates)
      if (other.plugin != c.plugin || other.device != c.device)
        helpers.push_back({other.plugin, other.device});
    return compile_for_device(graph, registry, c.plugin, c.device, cache, logging,
                              options.debug_dir, options.schedule, options.autotune, helpers,
                              options.placement);
  };
  const CacheKey key = selection_key(graph, candidates, options);
  if (auto hit = cache.get(key)) {
    for (const auto& c : candidates) {
      if (c.label != *hit) continue;
      log->info("'{}' runs on {} (chosen earlier, from the cache)", graph.name, c.label);
      return compile_one(c);
    }
  }
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    inputs.push_back(random_tensor(graph.type(graph.inputs[i]), 4242 + i));
  std::optional<CompiledGraph> best;
  std::string best_label, table;
  double best_ms = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    auto compiled = compile_one(c);
    Result<double> ms = compiled ? time_end_to_end(*compiled, inputs, options.autotune)
                                 : Result<double>(compiled.error());
    if (!ms) {
      table += fmt::format("\n  {:<28} {:>10}  {}", c.label, "failed", ms.error().message());
      continue;
    }
    table += fmt::format("\n  {:<28} {:>10.3f}", c.label, *ms);
    if (*ms < best_ms) {
      best_ms = *ms;
      best_label = c.label;
      best = std::move(*compiled);
    }
  }
  if (!best)
    return Error::user("no candidate plugin could compile and run '" + graph.name + "':" + table);
  log->info("'{}' end to end, median ms of {} runs:{}\n  chosen: {}", graph.name,
            options.autotune.reps, table, best_label);
  cache.put(key, best_label);
  return std::move(*best);
}

}  // namespace kiln
