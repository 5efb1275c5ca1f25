// A readable printout of a graph, one line per node with its output types. Golden tests
// and the debug dump read this text.
#pragma once

#include <string>

#include "core/graph/graph.h"

namespace kiln {

std::string dump_graph(const Graph& graph);
std::string arg_text(const Graph& graph, const ArgValue& value);

}  // namespace kiln
