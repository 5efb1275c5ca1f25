// decompose: rewrites every composite op (softmax, layer_norm, linear, var, ...) into
// primitive ops, repeating until none is left.
// Precondition: `graph` verifies. Postcondition: every node's op is primitive, inputs,
// parameters and outputs are unchanged in order and type, and node names of expanded ops
// are "<node>/<op>".
#pragma once

#include <functional>
#include <memory>

#include "core/graph/graph.h"
#include "core/support/result.h"

namespace kiln {

class OpRegistry;

// Composite nodes for which `keep` returns true stay as they are (a backend lowers them
// directly, e.g. var through Welford); all others expand until only primitives remain.
using KeepOp = std::function<bool(const Graph& graph, const Node& node)>;
Result<Graph> decompose(const Graph& graph, std::shared_ptr<const OpRegistry> registry,
                        const KeepOp& keep = nullptr);

}  // namespace kiln
