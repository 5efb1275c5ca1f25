#include "core/passes/constant_value.h"

#include <map>
#include <set>
#include <vector>

#include "core/interp/interpreter.h"
#include "core/ops/op_def.h"

namespace kiln {

std::optional<HostTensor> constant_value(const Graph& graph, ValueRef value, int64_t max_elements) {
  // The nodes `value` needs, found walking back from it; any input, parameter or random op
  // on the way makes it no constant.
  std::set<int32_t> needed;
  std::vector<ValueRef> todo = {value};
  int64_t elements = 0;
  while (!todo.empty()) {
    const Value& v = graph.value(todo.back());
    todo.pop_back();
    if (v.kind != ValueKind::NodeOutput) return std::nullopt;
    if (!needed.insert(v.node).second) continue;
    const Node& node = graph.nodes[static_cast<size_t>(v.node)];
    if (node.op->category == "random") return std::nullopt;
    for (ValueRef out : node.outputs) elements += graph.type(out).numel();
    if (elements > max_elements) return std::nullopt;
    for (ValueRef r : tensor_args(node)) todo.push_back(r);
  }
  std::map<int32_t, HostTensor> values;
  for (int32_t n : needed) {  // ascending: the graph's order
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    auto outs = run_node(graph, node, [&](ValueRef r) -> const HostTensor* {
      const auto found = values.find(r.id);
      return found == values.end() ? nullptr : &found->second;
    });
    if (!outs) return std::nullopt;
    for (size_t k = 0; k < node.outputs.size(); ++k)
      values.insert_or_assign(node.outputs[k].id, std::move((*outs)[k]));
  }
  return values.at(value.id);
}

}  // namespace kiln
