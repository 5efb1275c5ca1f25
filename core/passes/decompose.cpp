#include "core/passes/decompose.h"

#include <exception>

#include "core/graph/builder.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/passes/map_args.h"

namespace kiln {
namespace {

bool expands(const Graph& graph, const Node& node, const KeepOp& keep) {
  return !node.op->is_primitive() && !(keep && keep(graph, node));
}

bool has_composite(const Graph& graph, const KeepOp& keep) {
  for (const auto& node : graph.nodes) {
    if (expands(graph, node, keep)) return true;
  }
  return false;
}

// One round: every composite node is replaced by its decomposition.
Result<Graph> decompose_once(const Graph& graph, const std::shared_ptr<const OpRegistry>& registry,
                             const KeepOp& keep) {
  GraphBuilder b(registry, graph.name);
  std::vector<ValueRef> map(graph.values.size());
  for (ValueRef r : graph.inputs)
    map[static_cast<size_t>(r.id)] = b.input(graph.value(r).name, graph.type(r));
  for (ValueRef r : graph.params)
    map[static_cast<size_t>(r.id)] = b.param(graph.value(r).name, graph.type(r));
  for (const auto& node : graph.nodes) {
    std::vector<ArgValue> args;
    for (const auto& a : node.args) args.push_back(map_arg(a, map));
    std::vector<ValueRef> outs;
    if (!expands(graph, node, keep)) {
      auto result = b.try_bound(node.op->name, args, node.name);
      if (!result)
        return std::move(result).error().with_context("re-adding node '" + node.name + "'");
      outs = *result;
    } else {
      std::vector<TensorType> out_types;
      for (ValueRef r : node.outputs) out_types.push_back(graph.type(r));
      b.set_name_prefix(node.name + "/");
      try {
        const DecomposeContext context(
            node.op->schema, node.args, b, [&](const ArgValue& a) { return map_arg(a, map); },
            out_types);
        outs = node.op->decompose(context);
      } catch (const OpError& e) {
        return Error::internal("decomposing node '" + node.name + "' (" + node.op->name +
                               "): " + e.message);
      } catch (const std::exception& e) {
        return Error::internal("decomposing node '" + node.name + "' (" + node.op->name +
                               "): " + e.what());
      }
      b.set_name_prefix("");
      // The node itself was valid, so a failure inside its decomposition is kiln's bug.
      if (!b.ok()) {
        return Error::internal("decomposing node '" + node.name + "' (" + node.op->name +
                               "): " + b.finish().error().message());
      }
      if (outs.size() != node.outputs.size()) {
        return Error::internal("the decomposition of " + node.op->name + " gives " +
                               std::to_string(outs.size()) + " values for " +
                               std::to_string(node.outputs.size()) + " outputs");
      }
      for (size_t k = 0; k < outs.size(); ++k) {
        if (!(b.type(outs[k]) == out_types[k])) {
          return Error::internal("the decomposition of " + node.op->name + " (node '" + node.name +
                                 "') gives " + b.type(outs[k]).to_string() + " for output " +
                                 std::to_string(k) + ", which is " + out_types[k].to_string());
        }
      }
    }
    for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(node.outputs[k].id)] = outs[k];
  }
  for (ValueRef r : graph.outputs) b.output(map[static_cast<size_t>(r.id)]);
  auto result = b.finish();
  if (!result) return result;
  result->param_data = graph.param_data;
  return result;
}

}  // namespace

Result<Graph> decompose(const Graph& graph, std::shared_ptr<const OpRegistry> registry,
                        const KeepOp& keep) {
  Graph current = graph;
  for (int round = 0; round < 16 && has_composite(current, keep); ++round) {
    auto next = decompose_once(current, registry, keep);
    if (!next) return next;
    current = std::move(*next);
  }
  if (has_composite(current, keep))
    return Error::internal("decomposition did not reach primitive ops in 16 rounds");
  return current;
}

}  // namespace kiln
