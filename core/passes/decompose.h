// decompose: rewrites every composite op (softmax, layer_norm, linear, var, ...) into
// primitive ops, repeating until none is left.
// Precondition: `graph` verifies. Postcondition: every node's op is primitive, inputs,
// parameters and outputs are unchanged in order and type, and node names of expanded ops
// are "<node>/<op>".
#pragma once

#include <memory>

#include "core/graph/graph.h"
#include "core/support/result.h"

namespace kiln {

class OpRegistry;

Result<Graph> decompose(const Graph& graph, std::shared_ptr<const OpRegistry> registry);

}  // namespace kiln
