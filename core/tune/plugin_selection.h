// Autotuning across plugins and devices (`selection: autotune`): the graph is compiled for
// every candidate the config names, each is run end to end on the same fresh random inputs
// (upload, kernels, download: what a caller waits for), and the fastest median wins. The
// choice is cached ("select" entries: the graph, its input types, the candidates, the
// options that shape the kernels, the protocol) and printed as a table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/runtime/compiled_graph.h"
#include "core/support/logging.h"

namespace kiln {

class OpRegistry;

struct SelectionCandidate {
  std::shared_ptr<const Plugin> plugin;
  uint32_t device = 0;
  std::string label;  // "cpp_openmp cpu:0"
};

Result<CompiledGraph> select_and_compile(const Graph& graph,
                                         const std::shared_ptr<const OpRegistry>& registry,
                                         const std::vector<SelectionCandidate>& candidates,
                                         const Options& options, const DiskCache& cache,
                                         const Logging& logging);

}  // namespace kiln
