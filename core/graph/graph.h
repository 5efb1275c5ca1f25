// The graph: inputs, parameters, nodes in topological order, outputs. A node is an ATen
// overload name and its arguments in schema order (defaults filled in), with the types of
// its outputs inferred when it was added.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/arg_value.h"
#include "core/graph/host_tensor.h"
#include "core/graph/tensor_type.h"

namespace kiln {

struct OpDef;
class OpRegistry;

enum class ValueKind { Input, Param, NodeOutput };

struct Value {
  std::string name;  // "x", "w", "ln.0" (output 0 of node "ln"), or "y" for a single output
  ValueKind kind = ValueKind::Input;
  TensorType type;
  int32_t node = -1;  // for NodeOutput
  int32_t output = 0;
  // For inputs: the [low, high) range random test data is drawn from (class indices, ...).
  std::optional<std::pair<double, double>> random_range = std::nullopt;
};

struct Node {
  std::string name;
  const OpDef* op = nullptr;
  std::vector<ArgValue> args;  // one per schema argument, in schema order
  std::vector<ValueRef> outputs;
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<ValueRef> inputs;
  std::vector<ValueRef> params;
  std::vector<Node> nodes;
  std::vector<ValueRef> outputs;
  std::map<std::string, HostTensor> param_data;  // by parameter name; may be empty
  // Owns the OpDefs the nodes point to, so a graph outlives whoever handed it the registry.
  std::shared_ptr<const OpRegistry> registry;

  const Value& value(ValueRef ref) const { return values.at(static_cast<size_t>(ref.id)); }
  const TensorType& type(ValueRef ref) const { return value(ref).type; }
  // The value named `name` ("x", "ln.0", "y"), or an invalid ref.
  ValueRef find(const std::string& name) const;
};

// Checks what a Graph must satisfy whoever built it: names unique, every reference points
// to an earlier value, types agree with inference. Errors name the node and the reason.
Status verify_graph(const Graph& graph);

const std::string& op_name(const Node& node);

// The tensors `node` reads, in argument order (a list's items in order, absent ones left out):
// what a host step of it moves to the host, before its outputs come back.
std::vector<ValueRef> tensor_args(const Node& node);

}  // namespace kiln
