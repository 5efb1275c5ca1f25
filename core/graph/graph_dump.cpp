#include "core/graph/graph_dump.h"

#include <fmt/format.h>

#include "core/ops/op_def.h"

namespace kiln {

std::string arg_text(const Graph& graph, const ArgValue& value) {
  struct Visitor {
    const Graph& g;
    std::string operator()(const None&) const { return "None"; }
    std::string operator()(const ValueRef& r) const { return "%" + g.value(r).name; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      std::string text = fmt::format("{}", v);
      // Keep floats visibly floats: 7.0, not 7.
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
      return text;
    }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(DType d) const { return std::string(dtype_name(d)); }
    std::string operator()(const IntList& l) const { return shape_text(l); }
    std::string operator()(const FloatList& l) const {
      std::string text = "[";
      for (size_t i = 0; i < l.size(); ++i) text += (i ? ", " : "") + fmt::format("{}", l[i]);
      return text + "]";
    }
    std::string operator()(const TensorList& l) const {
      std::string text = "[";
      for (size_t i = 0; i < l.items.size(); ++i) {
        text +=
            (i ? ", " : "") + (l.items[i] ? "%" + g.value(*l.items[i]).name : std::string("None"));
      }
      return text + "]";
    }
  };
  return std::visit(Visitor{graph}, value);
}

namespace {

bool is_default(const ArgSchema& schema, const ArgValue& value) {
  if (schema.default_value) return *schema.default_value == value;
  return (schema.optional || schema.kind == ArgKind::Ignored) &&
         std::holds_alternative<None>(value);
}

std::string node_args(const Graph& graph, const Node& node) {
  const auto& args = node.op->schema.args;
  // Positional arguments up to the last one that differs from its default; keyword-only
  // arguments only when they differ.
  size_t last = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].kwarg_only && !is_default(args[i], node.args[i])) last = i + 1;
  }
  std::string text;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool shown = args[i].kwarg_only ? !is_default(args[i], node.args[i]) : i < last;
    if (!shown) continue;
    if (!text.empty()) text += ", ";
    if (args[i].kwarg_only) text += args[i].name + "=";
    text += arg_text(graph, node.args[i]);
  }
  return text;
}

}  // namespace

std::string dump_graph(const Graph& graph) {
  std::string text = "graph " + graph.name + "\n";
  for (ValueRef r : graph.inputs)
    text += "  input  %" + graph.value(r).name + " : " + graph.type(r).to_string() + "\n";
  for (ValueRef r : graph.params)
    text += "  param  %" + graph.value(r).name + " : " + graph.type(r).to_string() + "\n";
  for (const auto& node : graph.nodes) {
    std::string outs, types;
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      outs += (k ? ", %" : "%") + graph.value(node.outputs[k]).name;
      types += (k ? ", " : "") + graph.type(node.outputs[k]).to_string();
    }
    text +=
        "  " + outs + " = " + node.op->name + "(" + node_args(graph, node) + ") : " + types + "\n";
  }
  for (ValueRef r : graph.outputs) text += "  output %" + graph.value(r).name + "\n";
  return text;
}

}  // namespace kiln
