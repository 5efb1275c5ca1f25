// The reference interpreter: runs a graph op by op with each op's reference
// implementation (plain loops, f64 accumulation). It is the oracle every numeric test
// compares against, so it favours being obviously right over being fast.
#pragma once

#include <functional>
#include <vector>

#include "core/graph/graph.h"
#include "core/ops/random_stream.h"
#include "core/support/result.h"

namespace kiln {

// `inputs` in graph.inputs order; each must match its input's dtype and sizes (any
// strides). Parameters come from graph.param_data; random ops draw from `random`. Returns
// graph.outputs in order.
// `magnitudes`: the oracle's bound run (RefContext::magnitudes). `perturbation` > 0: the
// oracle's sensitivity run; each float node output element is scaled by 1 + or - that many
// units of its dtype's accumulation roundoff, the sign drawn from the node and element.
Result<std::vector<HostTensor>> interpret(const Graph& graph, const std::vector<HostTensor>& inputs,
                                          const RandomState& random = {}, bool magnitudes = false,
                                          double perturbation = 0);

// Runs one node with its reference implementation; `value_of` returns each tensor operand
// (nullptr: not available, an internal error). Outputs are checked against inference.
Result<std::vector<HostTensor>> run_node(const Graph& graph, const Node& node,
                                         const std::function<const HostTensor*(ValueRef)>& value_of,
                                         const RandomState& random = {}, bool magnitudes = false);

}  // namespace kiln
