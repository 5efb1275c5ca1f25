#include "core/graph/graph.h"

#include <set>

#include "core/ops/op_def.h"
#include "core/ops/op_error.h"

namespace kiln {

ValueRef Graph::find(const std::string& value_name) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].name == value_name) return ValueRef{static_cast<int32_t>(i)};
  }
  return {};
}

const std::string& op_name(const Node& node) {
  return node.op->name;
}

std::vector<ValueRef> tensor_args(const Node& node) {
  std::vector<ValueRef> refs;
  for (const ArgValue& a : node.args) {
    if (const auto* r = std::get_if<ValueRef>(&a)) refs.push_back(*r);
    if (const auto* l = std::get_if<TensorList>(&a))
      for (const auto& item : l->items)
        if (item) refs.push_back(*item);
  }
  return refs;
}

Status verify_graph(const Graph& graph) {
  std::set<std::string> names;
  for (const auto& v : graph.values) {
    if (!names.insert(v.name).second) return Error::user("the name '" + v.name + "' is used twice");
  }
  std::vector<bool> defined(graph.values.size(), false);
  auto check_ref = [&](ValueRef r, const std::string& where) -> Status {
    if (r.id < 0 || static_cast<size_t>(r.id) >= graph.values.size()) {
      return Error::internal(where + " refers to value #" + std::to_string(r.id) +
                             ", which does not exist");
    }
    if (!defined[static_cast<size_t>(r.id)]) {
      return Error::user(where + " uses '" + graph.value(r).name + "' before it is defined");
    }
    return Ok{};
  };
  for (ValueRef r : graph.inputs) defined.at(static_cast<size_t>(r.id)) = true;
  for (ValueRef r : graph.params) defined.at(static_cast<size_t>(r.id)) = true;
  for (const auto& node : graph.nodes) {
    const std::string where = "node '" + node.name + "'";
    if (node.op == nullptr) return Error::internal(where + " has no op");
    if (node.args.size() != node.op->schema.args.size()) {
      return Error::internal(where + " has " + std::to_string(node.args.size()) +
                             " arguments, its schema " +
                             std::to_string(node.op->schema.args.size()));
    }
    for (const auto& a : node.args) {
      if (const auto* r = std::get_if<ValueRef>(&a)) {
        if (auto s = check_ref(*r, where); !s) return s;
      } else if (const auto* list = std::get_if<TensorList>(&a)) {
        for (const auto& item : list->items) {
          if (!item) continue;
          if (auto s = check_ref(*item, where); !s) return s;
        }
      }
    }
    std::vector<TensorType> types;
    try {
      const InferContext context(node.op->schema, node.args,
                                 [&](ValueRef r) -> const TensorType& { return graph.type(r); });
      types = node.op->infer(context);
    } catch (const OpError& e) {
      const std::string text = where + " (" + node.op->name + "): " + e.message;
      return e.internal ? Error::internal(text) : Error::user(text);
    }
    if (types.size() != node.outputs.size()) {
      return Error::internal(where + " has " + std::to_string(node.outputs.size()) +
                             " outputs, inference gives " + std::to_string(types.size()));
    }
    for (size_t k = 0; k < types.size(); ++k) {
      const TensorType& stored = graph.type(node.outputs[k]);
      if (!(stored == types[k])) {
        return Error::user(where + " output " + std::to_string(k) + " is typed " +
                           stored.to_string() + " but " + node.op->name + " gives " +
                           types[k].to_string());
      }
      defined.at(static_cast<size_t>(node.outputs[k].id)) = true;
    }
  }
  for (ValueRef r : graph.outputs) {
    if (auto s = check_ref(r, "graph output"); !s) return s;
  }
  return Ok{};
}

}  // namespace kiln
