// Lowers a graph of primitive ops (run core/passes/decompose first) to LoopIR: one kernel
// per realized node, views and broadcasts folded into index expressions. A node without a
// lowering rule (or an instance its rule declines) becomes an Extern "reference" step that
// runs the oracle on the host; `fallbacks` names them so nothing is silent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/lower/loop_ir.h"
#include "core/lower/lower_options.h"
#include "core/support/result.h"

namespace kiln {

struct LoweredGraph {
  LoopProgram program;
  std::vector<std::string> fallbacks;  // "node (op)" run on the host oracle
};

// `externs`: the plugin's library calls ("conv2d f32 f16 bf16", as extern_names lists them),
// for the lowerings that choose one over a generated kernel when it is there.
Result<LoweredGraph> lower_graph(const Graph& graph, const std::vector<std::string>& externs = {},
                                 const LowerOptions& options = {});

// Whether composite `node` has a lowering of its own (var through Welford, softmax; attention
// where the plugin's library call `externs` take it): decompose() keeps such nodes.
bool lowers_directly(const Graph& graph, const Node& node, const std::vector<std::string>& externs);

// Whether `op` has a lowering rule at all (views lower as index remaps without one).
bool has_lowering_rule(std::string_view op);

}  // namespace kiln
