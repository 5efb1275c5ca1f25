// Library call or generated kernels, per shape (autotune `kernels: exhaustive` with
// `libraries: true`). Each convolution call of a scheduled program (conv2d and its two
// backward calls) is compiled alone both ways — its node as a one-node graph with the plugin's
// library, and again with the call declined so the core generates the kernels — and both run on the
// same fresh random inputs (device time, the median of autotune.reps runs). Where the generated
// kernels are faster the call is declined. Each choice is cached per call signature, plugin and
// device ("library" entries) and logged as a table. mm/bmm keep their library: the generated matmul
// has no tensor-core path to compete with it yet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/graph/graph.h"
#include "core/lower/loop_ir.h"
#include "core/runtime/plugin.h"
#include "core/support/logging.h"

namespace kiln {

class OpRegistry;

// The library_call_signature()s of `program`'s calls whose generated kernels won. `graph` is
// the graph `program` was lowered from (each call's origin names its node there).
Result<std::vector<std::string>> declined_library_calls(
    const Graph& graph, const LoopProgram& program,
    const std::shared_ptr<const OpRegistry>& registry, const std::shared_ptr<const Plugin>& plugin,
    uint32_t device, const DiskCache& cache, const Logging& logging,
    const ScheduleOptions& schedule, const AutotuneOptions& autotune);

// The cache key of one call's choice; the entry reads "library" or "generated".
CacheKey library_choice_key(const std::string& signature, const Plugin& plugin, uint32_t device,
                            const AutotuneOptions& autotune);

}  // namespace kiln
