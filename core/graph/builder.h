// GraphBuilder: builds a Graph op by op, checking arguments against the op's schema and
// inferring output types as it goes.
//
//   GraphBuilder b(registry, "softmax");
//   ValueRef x = b.input("x", TensorType::contiguous(DType::F32, {32, 1024}));
//   ValueRef m = b.op("aten.amax.default", {x, ints{-1}, true});
//   b.output(b.div(b.exp(b.sub(x, m)), ...));
//   Result<Graph> g = b.finish();
//
// op() records the first error and returns an invalid ref; later ops that use it are
// skipped, and finish() returns that error. try_ops() returns errors directly.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/graph/graph.h"

namespace kiln {

class OpRegistry;

using Kwargs = std::vector<std::pair<std::string, ArgValue>>;

class GraphBuilder {
 public:
  GraphBuilder(std::shared_ptr<const OpRegistry> registry, std::string graph_name);

  ValueRef input(const std::string& name, TensorType type);
  ValueRef param(const std::string& name, TensorType type);

  Result<std::vector<ValueRef>> try_ops(const std::string& op, std::vector<ArgValue> args,
                                        const Kwargs& kwargs = {}, const std::string& name = "");
  // Adds a node from arguments already bound to the op's schema (every argument, in order).
  Result<std::vector<ValueRef>> try_bound(const std::string& op, const std::vector<ArgValue>& bound,
                                          const std::string& name = "");
  std::vector<ValueRef> ops(const std::string& op, std::vector<ArgValue> args,
                            const Kwargs& kwargs = {}, const std::string& name = "");
  ValueRef op(const std::string& op, std::vector<ArgValue> args, const Kwargs& kwargs = {},
              const std::string& name = "");

  void output(ValueRef value);
  // Names given to unnamed nodes start with this ("ln/" while decomposing node "ln").
  void set_name_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  void fail(Error error);

  const TensorType& type(ValueRef value) const { return graph_.type(value); }
  const Graph& graph() const { return graph_; }
  // The value named `name` so far, in constant time (Graph::find scans), invalid if none.
  ValueRef find(const std::string& name) const;
  const OpRegistry& registry() const { return *registry_; }
  bool ok() const { return !error_.has_value(); }
  Result<Graph> finish();

  // Sugar for common ops; arguments may be tensors or numbers.
  ValueRef add(ArgValue a, ArgValue b) {
    return op("aten.add.Tensor", {std::move(a), std::move(b)});
  }
  ValueRef sub(ArgValue a, ArgValue b) {
    return op("aten.sub.Tensor", {std::move(a), std::move(b)});
  }
  ValueRef mul(ArgValue a, ArgValue b) {
    return op("aten.mul.Tensor", {std::move(a), std::move(b)});
  }
  ValueRef div(ArgValue a, ArgValue b) {
    return op("aten.div.Tensor", {std::move(a), std::move(b)});
  }
  ValueRef unary(const std::string& name, ValueRef x) {
    return op("aten." + name + ".default", {x});
  }
  ValueRef cast(ValueRef x, DType dtype);  // no node when x already has that dtype
  ValueRef sum(ValueRef x, IntList dims, bool keepdim);
  ValueRef amax(ValueRef x, IntList dims, bool keepdim);

 private:
  std::string fresh_name(const std::string& op);
  // A complex operand is refused unless complex lowering knows the op.
  Status check_complex_operands(const std::string& op_name,
                                const std::vector<ArgValue>& args) const;
  ValueRef add_value(Value value);
  ValueRef push_value(Value value);  // appends and indexes by name

  std::shared_ptr<const OpRegistry> registry_;
  Graph graph_;
  std::optional<Error> error_;
  std::set<std::string> names_;
  std::unordered_map<std::string, ValueRef> by_name_;
  std::string prefix_;
};

// Binds positional and keyword arguments to `schema`: every argument in schema order,
// defaults filled, kinds checked. Errors name the argument.
struct Schema;
Result<std::vector<ArgValue>> bind_arguments(const Schema& schema, std::vector<ArgValue> args,
                                             const Kwargs& kwargs);

}  // namespace kiln
