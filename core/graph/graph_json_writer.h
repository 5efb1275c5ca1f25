// A Graph as `kiln.graph/1` text that load_graph reads back to the same graph: numbers with
// 17 significant digits, inf and nan as the strings the format takes, keyword-only arguments
// under "kwargs". Parameters are declared, their bytes are not written (they live in
// safetensors). With `only`, just the nodes the listed values depend on are kept, and those
// values are the outputs: how a failing case is cut down to what shows the failure.
#pragma once

#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace kiln {

std::string write_graph_json(const Graph& graph, const std::vector<ValueRef>& only = {});

}  // namespace kiln
