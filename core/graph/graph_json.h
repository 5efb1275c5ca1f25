// Reading kiln.graph/1 files (docs/graph-format.md). A malformed file gives an error that
// names the JSON path (nodes[4].args[1]) and why; nothing is half-built.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/graph/graph.h"

namespace kiln {

class OpRegistry;

Result<Graph> parse_graph(std::string_view text, const std::string& source,
                          std::shared_ptr<const OpRegistry> registry);
Result<Graph> load_graph(const std::string& path, std::shared_ptr<const OpRegistry> registry);

// Fills graph.param_data by name from `weights`; dtype and shape must match.
Status attach_weights(Graph& graph, const std::map<std::string, HostTensor>& weights,
                      const std::string& source);

}  // namespace kiln
