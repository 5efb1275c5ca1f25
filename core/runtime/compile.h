// kiln::compile: a graph in, a CompiledGraph out. The pipeline, one stage per line:
// decompose -> lower -> KIR -> (autotune) -> kernel cache or plugin compile -> load -> plan.
#pragma once

#include <memory>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/runtime/compiled_graph.h"
#include "core/runtime/placement_target.h"
#include "core/runtime/plugin_loader.h"
#include "core/support/logging.h"

namespace kiln {

class OpRegistry;

// For one plugin and device. `graph` may hold composite ops; `cache` may be disabled.
// With `helpers`, each kernel runs where `placement` puts it among the plugin's device and
// theirs (core/runtime/placement.h); with none, `supports` is not asked.
Result<CompiledGraph> compile_for_device(
    const Graph& graph, std::shared_ptr<const OpRegistry> registry,
    std::shared_ptr<const Plugin> plugin, uint32_t device, const DiskCache& cache,
    const Logging& logging, const std::string& debug_dir = "", const ScheduleOptions& schedule = {},
    const AutotuneOptions& autotune = {}, const std::vector<PlacementTarget>& helpers = {},
    PlacementPolicy placement = PlacementPolicy::Cost);

// The library calls a plugin offers ("mm f32", ...); empty when it offers none.
std::vector<std::string> extern_names(const Plugin& plugin);

// The cache `options` configure (disabled when options.cache.enabled is false).
DiskCache open_cache(const Options& options, const Logging& logging);

// With the plugins and devices `options` names: the first device of options.devices that a
// loaded plugin serves (restricted to one plugin when selection names it), or the one the
// autotuner picks. Loads the plugins first (a Session keeps them loaded instead).
Result<CompiledGraph> compile(const Graph& graph, std::shared_ptr<const OpRegistry> registry,
                              const Options& options, const Logging& logging);

// The same with plugins already loaded.
Result<CompiledGraph> compile_with(const Graph& graph, std::shared_ptr<const OpRegistry> registry,
                                   const LoadedPlugins& loaded, const Options& options,
                                   const DiskCache& cache, const Logging& logging);

}  // namespace kiln
