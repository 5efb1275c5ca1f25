// `kiln run --explain`: what the scheduler made of a graph, in a few lines.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/compiled_graph.h"

namespace kiln::cli {

void print_explain(const Graph& graph, const CompiledGraph& compiled);

}  // namespace kiln::cli
