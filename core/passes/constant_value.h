// The value of a graph value computed from no input, parameter or random draw (a causal mask
// built from arange and comparisons): its nodes run on the reference interpreter at compile
// time. Passes use it to recognise such constants; nothing is folded into the graph.
#pragma once

#include <cstdint>
#include <optional>

#include "core/graph/graph.h"
#include "core/graph/host_tensor.h"

namespace kiln {

// None when `value` depends on an input, a parameter or a random op, when more than
// `max_elements` elements would be computed along the way, or when its reference fails.
std::optional<HostTensor> constant_value(const Graph& graph, ValueRef value,
                                         int64_t max_elements = int64_t{1} << 24);

}  // namespace kiln
