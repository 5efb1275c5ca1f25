#include "core/graph/graph_json_writer.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/graph/schema.h"
#include "core/ops/op_def.h"

namespace kiln {
namespace {

using json = nlohmann::ordered_json;

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;  // nlohmann prints doubles so that they read back exactly
}

json ref_text(const Graph& g, ValueRef r) {
  return "%" + g.value(r).name;
}

json arg_json(const Graph& g, const ArgValue& a) {
  return std::visit(
      [&](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, None>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, ValueRef>) {
          return ref_text(g, v);
        } else if constexpr (std::is_same_v<T, double>) {
          return number(v);
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_name(v));
        } else if constexpr (std::is_same_v<T, FloatList>) {
          json list = json::array();
          for (double x : v) list.push_back(number(x));
          return list;
        } else if constexpr (std::is_same_v<T, TensorList>) {
          json list = json::array();
          for (const auto& item : v.items) list.push_back(item ? ref_text(g, *item) : json());
          return list;
        } else {
          return v;  // bool, int64_t, string, IntList
        }
      },
      a);
}

json value_decl(const Value& v) {
  json d = {{"name", v.name}, {"dtype", std::string(dtype_name(v.type.dtype))}};
  d["shape"] = v.type.sizes;
  if (!v.type.is_contiguous()) d["strides"] = v.type.strides;
  if (v.random_range) d["range"] = {v.random_range->first, v.random_range->second};
  return d;
}

// The nodes `outputs` depend on (all nodes when `outputs` is empty).
std::vector<bool> needed_nodes(const Graph& g, const std::vector<ValueRef>& outputs) {
  std::vector<bool> needed(g.nodes.size(), outputs.empty());
  std::vector<ValueRef> work = outputs;
  while (!work.empty()) {
    const Value& v = g.value(work.back());
    work.pop_back();
    if (v.kind != ValueKind::NodeOutput || needed[static_cast<size_t>(v.node)]) continue;
    needed[static_cast<size_t>(v.node)] = true;
    for (ValueRef r : tensor_args(g.nodes[static_cast<size_t>(v.node)])) work.push_back(r);
  }
  return needed;
}

}  // namespace

std::string write_graph_json(const Graph& graph, const std::vector<ValueRef>& only) {
  json doc;
  doc["format"] = "kiln.graph/1";
  doc["name"] = graph.name;
  doc["inputs"] = json::array();
  for (ValueRef r : graph.inputs) doc["inputs"].push_back(value_decl(graph.value(r)));
  if (!graph.params.empty()) {
    doc["params"] = json::array();
    for (ValueRef r : graph.params) doc["params"].push_back(value_decl(graph.value(r)));
  }
  const std::vector<bool> needed = needed_nodes(graph, only);
  doc["nodes"] = json::array();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!needed[i]) continue;
    const Node& n = graph.nodes[i];
    json node = {{"name", n.name}, {"op", n.op->name}};
    json args = json::array(), kwargs = json::object();
    for (size_t k = 0; k < n.args.size(); ++k) {
      const ArgSchema& s = n.op->schema.args.at(k);
      if (s.kind == ArgKind::Ignored && s.kwarg_only) continue;
      if (s.kind == ArgKind::Ignored) {
        args.push_back(nullptr);  // keeps the later positions
      } else if (s.kwarg_only) {
        kwargs[s.name] = arg_json(graph, n.args[k]);
      } else {
        args.push_back(arg_json(graph, n.args[k]));
      }
    }
    node["args"] = std::move(args);
    if (!kwargs.empty()) node["kwargs"] = std::move(kwargs);
    doc["nodes"].push_back(std::move(node));
  }
  doc["outputs"] = json::array();
  for (ValueRef r : only.empty() ? graph.outputs : only)
    doc["outputs"].push_back(ref_text(graph, r));
  return doc.dump(1) + "\n";
}

}  // namespace kiln
