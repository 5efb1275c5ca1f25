// Placement across plugins inside one graph. Kernel by kernel, in plan order, the configured
// devices are asked whether they `supports` it — in the order of the estimated cost of running
// it there with the copies it needs (PlacementPolicy::Cost), or serving device first, then
// the others in the config's order (PlacementPolicy::Order, as execution providers claim
// nodes by priority) — and the first that takes it runs it. Copies between devices are then
// planned as steps: a buffer is copied to a device before a step there touches it, only when
// its current bytes are elsewhere, and outputs end on the graph's own device. Answers to `supports`
// are cached on disk beside the kernels (a code generator may answer by compiling).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/placement_target.h"
#include "core/support/logging.h"
#include "kiln/kir.hpp"

namespace kiln {

// Per kernel of `batch`, the device that runs it: 0 for p.plugin's, k for helpers[k - 1].
// With no helpers every kernel stays on p.plugin's device and nothing is asked. Names in
// p.stats.placed each kernel placed elsewhere and why; an error names a kernel no device
// takes, with every plugin's reason. Cost falls back to Order (with a warning) when a device's
// roofline (`bandwidth_gbps`, `peak_gflops_f32`) is unknown.
Result<std::vector<int>> place_kernels(CompiledGraph::Parts& p,
                                       const std::vector<kir::Kernel>& batch,
                                       const std::vector<PlacementTarget>& helpers,
                                       PlacementPolicy policy, const DiskCache& cache,
                                       const Logging& logging);

// Transfer steps into p.plan for kernels placed by `place` (one per launch step, in order),
// and each launch step's place. Nothing changes when every kernel is on device 0.
void plan_transfers(CompiledGraph::Parts& p, const std::vector<kir::Kernel>& batch,
                    const std::vector<int>& place);

}  // namespace kiln
