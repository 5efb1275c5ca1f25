#include "core/graph/builder.h"

#include <exception>

#include "core/ops/complex_forms.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/unsupported_ops.h"

namespace kiln {
namespace {

std::string describe(const ArgValue& v) {
  struct Visitor {
    std::string operator()(const None&) const { return "None"; }
    std::string operator()(const ValueRef&) const { return "a tensor"; }
    std::string operator()(bool) const { return "a bool"; }
    std::string operator()(int64_t) const { return "an int"; }
    std::string operator()(double) const { return "a float"; }
    std::string operator()(const std::string&) const { return "a string"; }
    std::string operator()(DType) const { return "a dtype"; }
    std::string operator()(const IntList&) const { return "an int list"; }
    std::string operator()(const FloatList&) const { return "a float list"; }
    std::string operator()(const TensorList&) const { return "a tensor list"; }
  };
  return std::visit(Visitor{}, v);
}

std::string expected(const ArgSchema& a) {
  std::string text(arg_kind_name(a.kind));
  if (a.is_list) text += a.element_optional ? "?[]" : "[]";
  if (a.optional) text += " or None";
  return text;
}

bool is_number(const ArgValue& v) {
  return std::holds_alternative<bool>(v) || std::holds_alternative<int64_t>(v) ||
         std::holds_alternative<double>(v);
}

// Checks `v` against `a`, converting where the schema allows (an int where a float is
// expected, one int for a fixed-size int list). Returns an error message, or "".
std::string coerce(const ArgSchema& a, ArgValue& v, size_t position) {
  if (std::holds_alternative<None>(v)) {
    return a.optional || a.kind == ArgKind::Ignored ? "" : "must not be None";
  }
  if (a.kind == ArgKind::Ignored) {
    v = None{};
    return "";
  }
  const std::string wrong = "expects " + expected(a) + ", got " + describe(v);
  if (a.is_list) {
    if (a.kind == ArgKind::Tensor) {
      auto* list = std::get_if<TensorList>(&v);
      if (list == nullptr) {
        if (const auto* ints = std::get_if<IntList>(&v); ints != nullptr && ints->empty()) {
          v = TensorList{};
          return "";
        }
        return wrong;
      }
      for (const auto& item : list->items) {
        if (!item && !a.element_optional) return "has a None entry where a tensor is required";
        if (item && !item->valid()) return "refers to a value that failed to build";
      }
      return "";
    }
    if (a.kind == ArgKind::Int || a.kind == ArgKind::Bool) {
      if (const auto* one = std::get_if<int64_t>(&v); one != nullptr && a.list_size > 0) {
        v = IntList(static_cast<size_t>(a.list_size), *one);
      }
      if (!std::holds_alternative<IntList>(v)) return wrong;
      const auto& list = std::get<IntList>(v);
      // An empty list stands for "derive it" (pooling's stride=[]).
      if (a.list_size > 1 && !list.empty() && static_cast<int>(list.size()) != a.list_size) {
        return "expects " + std::to_string(a.list_size) + " values, got " +
               std::to_string(list.size());
      }
      return "";
    }
    if (a.kind == ArgKind::Float) {
      if (const auto* l = std::get_if<IntList>(&v)) v = FloatList(l->begin(), l->end());
      return std::holds_alternative<FloatList>(v) ? "" : wrong;
    }
    return wrong;
  }
  switch (a.kind) {
    case ArgKind::Tensor:
      if (const auto* r = std::get_if<ValueRef>(&v))
        return r->valid() ? "" : "refers to a value that failed to build";
      // A number is a wrapped scalar, as PyTorch makes of `x + 2`; never the op's first operand.
      if (is_number(v) && position == 0) return "expects a tensor, got a number";
      return is_number(v) ? "" : wrong;
    case ArgKind::Int:
      if (std::holds_alternative<int64_t>(v)) return "";
      return wrong;
    case ArgKind::Float:
      if (const auto* i = std::get_if<int64_t>(&v)) v = static_cast<double>(*i);
      return std::holds_alternative<double>(v) ? "" : wrong;
    case ArgKind::Bool:
      return std::holds_alternative<bool>(v) ? "" : wrong;
    case ArgKind::Scalar:
      return is_number(v) ? "" : wrong;
    case ArgKind::ScalarType:
      return std::holds_alternative<DType>(v) ? "" : wrong;
    case ArgKind::Str:
      return std::holds_alternative<std::string>(v) ? "" : wrong;
    case ArgKind::Ignored:
      return "";
  }
  return wrong;
}

}  // namespace

Result<std::vector<ArgValue>> bind_arguments(const Schema& schema, std::vector<ArgValue> args,
                                             const Kwargs& kwargs) {
  std::vector<std::optional<ArgValue>> bound(schema.args.size());
  size_t positional = 0;
  for (auto& value : args) {
    if (positional >= schema.args.size() || schema.args[positional].kwarg_only) {
      return Error::user(schema.op + " takes at most " + std::to_string(positional) +
                         " positional arguments, got " + std::to_string(args.size()));
    }
    bound[positional++] = std::move(value);
  }
  for (const auto& [key, value] : kwargs) {
    const int index = schema.index_of(key);
    if (index < 0) return Error::user(schema.op + " has no argument named '" + key + "'");
    if (bound[static_cast<size_t>(index)]) {
      return Error::user(schema.op + ": argument '" + key + "' is given twice");
    }
    bound[static_cast<size_t>(index)] = value;
  }
  std::vector<ArgValue> out;
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const ArgSchema& a = schema.args[i];
    ArgValue v;
    if (bound[i]) {
      v = std::move(*bound[i]);
    } else if (a.default_value) {
      v = *a.default_value;
    } else if (a.optional || a.kind == ArgKind::Ignored) {
      v = None{};
    } else {
      return Error::user(schema.op + ": missing argument '" + a.name + "'");
    }
    if (std::string why = coerce(a, v, i); !why.empty()) {
      return Error::user(schema.op + ": argument '" + a.name + "' " + why);
    }
    out.push_back(std::move(v));
  }
  return out;
}

GraphBuilder::GraphBuilder(std::shared_ptr<const OpRegistry> registry, std::string graph_name)
    : registry_(std::move(registry)) {
  graph_.name = std::move(graph_name);
}

ValueRef GraphBuilder::add_value(Value value) {
  if (!names_.insert(value.name).second) {
    fail(Error::user("the name '" + value.name + "' is used twice"));
    return {};
  }
  return push_value(std::move(value));
}

ValueRef GraphBuilder::push_value(Value value) {
  const ValueRef ref{static_cast<int32_t>(graph_.values.size())};
  by_name_.emplace(value.name, ref);
  graph_.values.push_back(std::move(value));
  return ref;
}

ValueRef GraphBuilder::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? ValueRef{} : it->second;
}

ValueRef GraphBuilder::input(const std::string& name, TensorType type) {
  if (auto s = check_shape(type.sizes); !s) {
    fail(Error::user("input '" + name + "': " + s.error().message()));
    return {};
  }
  ValueRef ref = add_value(Value{name, ValueKind::Input, std::move(type), -1, 0});
  if (ref.valid()) graph_.inputs.push_back(ref);
  return ref;
}

ValueRef GraphBuilder::param(const std::string& name, TensorType type) {
  if (auto s = check_shape(type.sizes); !s) {
    fail(Error::user("parameter '" + name + "': " + s.error().message()));
    return {};
  }
  ValueRef ref = add_value(Value{name, ValueKind::Param, std::move(type), -1, 0});
  if (ref.valid()) graph_.params.push_back(ref);
  return ref;
}

std::string GraphBuilder::fresh_name(const std::string& op) {
  // "aten.amax.default" -> "amax"
  const size_t first = op.find('.');
  const size_t second = op.find('.', first + 1);
  const std::string base = prefix_ + op.substr(first + 1, second - first - 1);
  if (names_.count(base) == 0) return base;
  for (int n = 1;; ++n) {
    std::string candidate = base + "_" + std::to_string(n);
    if (names_.count(candidate) == 0) return candidate;
  }
}

Status GraphBuilder::check_complex_operands(const std::string& op_name,
                                            const std::vector<ArgValue>& args) const {
  if (has_complex_form(op_name)) return Ok{};
  std::vector<ValueRef> refs;
  for (const ArgValue& a : args) {
    if (const auto* r = std::get_if<ValueRef>(&a)) refs.push_back(*r);
    if (const auto* l = std::get_if<TensorList>(&a))
      for (const auto& item : l->items)
        if (item) refs.push_back(*item);
  }
  for (ValueRef r : refs) {
    if (r.valid() && is_complex(graph_.type(r).dtype))
      return Error::user(op_name + " does not take complex64 values in kiln; complex values " +
                         "run through FFTs, view_as_real/view_as_complex, conj, + - * /, neg, " +
                         "abs, sum, mean and shape ops");
  }
  return Ok{};
}

Result<std::vector<ValueRef>> GraphBuilder::try_ops(const std::string& op_name,
                                                    std::vector<ArgValue> args,
                                                    const Kwargs& kwargs, const std::string& name) {
  const OpDef* def = registry_->find(op_name);
  if (def == nullptr) {
    const bool known = registry_->schemas().count(op_name) != 0;
    const Unsupported why = unsupported_reason(op_name);
    return Error::user(!known ? "unknown op '" + op_name + "'"
                              : "op '" + op_name + "' is not supported by kiln" +
                                    (why.reason.empty() ? " yet" : ": " + why.reason));
  }
  auto bound = bind_arguments(def->schema, std::move(args), kwargs);
  if (!bound) return std::move(bound).error();
  if (auto s = check_complex_operands(op_name, *bound); !s) return std::move(s).error();
  std::vector<TensorType> types;
  try {
    const InferContext context(def->schema, *bound,
                               [this](ValueRef r) -> const TensorType& { return graph_.type(r); });
    types = def->infer(context);
  } catch (const OpError& e) {
    return e.internal ? Error::internal(op_name + ": " + e.message)
                      : Error::user(op_name + ": " + e.message);
  } catch (const std::exception& e) {
    return Error::internal(op_name + ": shape inference failed: " + e.what());
  }
  // One place guards every op: no output may be negative or beyond the size limits.
  for (const auto& t : types) {
    if (auto s = check_shape(t.sizes); !s)
      return Error::user(op_name + ": the result " + s.error().message());
  }
  const std::string node_name = name.empty() ? fresh_name(op_name) : name;
  if (names_.count(node_name) != 0)
    return Error::user("the name '" + node_name + "' is used twice");
  names_.insert(node_name);
  Node node{node_name, def, std::move(*bound), {}};
  const auto node_index = static_cast<int32_t>(graph_.nodes.size());
  for (size_t k = 0; k < types.size(); ++k) {
    // One output is named like the node; several are "node.k".
    std::string value_name = types.size() == 1 && !def->schema.returns_list
                                 ? node_name
                                 : node_name + "." + std::to_string(k);
    if (types.size() == 1 && !def->schema.returns_list) {
      push_value(Value{value_name, ValueKind::NodeOutput, types[k], node_index, 0});
    } else {
      if (!names_.insert(value_name).second)
        return Error::user("the name '" + value_name + "' is used twice");
      push_value(
          Value{value_name, ValueKind::NodeOutput, types[k], node_index, static_cast<int32_t>(k)});
    }
    node.outputs.push_back(ValueRef{static_cast<int32_t>(graph_.values.size() - 1)});
  }
  std::vector<ValueRef> outputs = node.outputs;
  graph_.nodes.push_back(std::move(node));
  return outputs;
}

Result<std::vector<ValueRef>> GraphBuilder::try_bound(const std::string& op_name,
                                                      const std::vector<ArgValue>& bound,
                                                      const std::string& name) {
  const OpDef* def = registry_->find(op_name);
  if (def == nullptr) return Error::internal("try_bound: unknown op '" + op_name + "'");
  std::vector<ArgValue> positional;
  Kwargs kwargs;
  for (size_t i = 0; i < bound.size() && i < def->schema.args.size(); ++i) {
    if (def->schema.args[i].kwarg_only) {
      kwargs.emplace_back(def->schema.args[i].name, bound[i]);
    } else {
      positional.push_back(bound[i]);
    }
  }
  return try_ops(op_name, std::move(positional), kwargs, name);
}

std::vector<ValueRef> GraphBuilder::ops(const std::string& op_name, std::vector<ArgValue> args,
                                        const Kwargs& kwargs, const std::string& name) {
  if (error_) return {};
  auto outputs = try_ops(op_name, std::move(args), kwargs, name);
  if (!outputs) {
    fail(std::move(outputs).error());
    return {};
  }
  return *outputs;
}

ValueRef GraphBuilder::op(const std::string& op_name, std::vector<ArgValue> args,
                          const Kwargs& kwargs, const std::string& name) {
  auto outputs = ops(op_name, std::move(args), kwargs, name);
  return outputs.empty() ? ValueRef{} : outputs.front();
}

void GraphBuilder::fail(Error error) {
  if (!error_) error_ = std::move(error);
}

void GraphBuilder::output(ValueRef value) {
  if (!value.valid()) {
    fail(Error::user("an output refers to a value that failed to build"));
    return;
  }
  graph_.outputs.push_back(value);
}

ValueRef GraphBuilder::cast(ValueRef x, DType dtype) {
  if (!x.valid() || type(x).dtype == dtype) return x;
  return op("aten._to_copy.default", {x}, {{"dtype", dtype}});
}

ValueRef GraphBuilder::sum(ValueRef x, IntList dims, bool keepdim) {
  return op("aten.sum.dim_IntList", {x, std::move(dims), keepdim});
}

ValueRef GraphBuilder::amax(ValueRef x, IntList dims, bool keepdim) {
  return op("aten.amax.default", {x, std::move(dims), keepdim});
}

Result<Graph> GraphBuilder::finish() {
  if (error_) return *error_;
  if (auto s = verify_graph(graph_); !s) return std::move(s).error();
  graph_.registry = registry_;
  return std::move(graph_);
}

}  // namespace kiln
