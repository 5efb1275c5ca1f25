#include "core/interp/interpreter.h"

#include <algorithm>
#include <exception>
#include <new>

#include "core/interp/compare.h"
#include "core/ops/op_def.h"
#include "core/ops/op_error.h"

namespace kiln {
namespace {

// Index of the last node that reads each value, so dead intermediates can be dropped.
std::vector<int64_t> last_uses(const Graph& graph) {
  std::vector<int64_t> last(graph.values.size(), -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (const auto& a : graph.nodes[n].args) {
      if (const auto* r = std::get_if<ValueRef>(&a))
        last[static_cast<size_t>(r->id)] = static_cast<int64_t>(n);
      if (const auto* l = std::get_if<TensorList>(&a)) {
        for (const auto& item : l->items) {
          if (item) last[static_cast<size_t>(item->id)] = static_cast<int64_t>(n);
        }
      }
    }
  }
  for (ValueRef r : graph.outputs)
    last[static_cast<size_t>(r.id)] = static_cast<int64_t>(graph.nodes.size());
  return last;
}

Status check_value(const HostTensor& t, const TensorType& type, const std::string& what) {
  if (t.dtype() != type.dtype || t.sizes() != type.sizes) {
    return Error::user(what + " is " + std::string(dtype_name(t.dtype())) + shape_text(t.sizes()) +
                       " but the graph says " + std::string(dtype_name(type.dtype)) +
                       shape_text(type.sizes));
  }
  return Ok{};
}

// A fixed pseudo-random sign per (node, element): the perturbed run is reproducible, and
// neighbouring errors neither all add up nor all cancel.
double sign_of(uint64_t node, int64_t element) {
  uint64_t z = node * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(element) + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return ((z ^ (z >> 31)) & 1) ? 1.0 : -1.0;
}

void perturb(HostTensor& t, double units, uint64_t node) {
  if (!is_floating(t.dtype())) return;
  t = t.to(t.dtype());  // a copy: a view's output shares its operand's storage
  const double step = units * accumulation_roundoff(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) * (1 + sign_of(node, i) * step));
}

}  // namespace

Result<std::vector<HostTensor>> run_node(const Graph& graph, const Node& node,
                                         const std::function<const HostTensor*(ValueRef)>& value_of,
                                         const RandomState& random, bool magnitudes) {
  std::vector<TensorType> out_types;
  for (ValueRef r : node.outputs) out_types.push_back(graph.type(r));
  std::vector<HostTensor> outs;
  try {
    RefContext context(
        node.op->schema, node.args,
        [&](ValueRef r) -> const HostTensor& {
          const HostTensor* t = value_of(r);
          if (!t) op_bug("value '" + graph.value(r).name + "' is not computed");
          return *t;
        },
        out_types, RandomDraw{random, random_stream_id(node.name)});
    context.magnitudes = magnitudes;
    outs = node.op->reference(context);
  } catch (const OpError& e) {
    const std::string text = "node '" + node.name + "' (" + node.op->name + "): " + e.message;
    return e.internal ? Error::internal(text) : Error::user(text);
  } catch (const std::bad_alloc&) {
    std::string outputs;
    int64_t bytes = 0;
    for (const TensorType& t : out_types) {
      outputs += (outputs.empty() ? "" : ", ") + t.to_string();
      bytes = std::min<int64_t>(bytes + storage_extent(t) * dtype_size(t.dtype), INT64_MAX / 2);
    }
    return Error::user("node '" + node.name + "' (" + node.op->name +
                       "): out of memory computing " + outputs + " (" + std::to_string(bytes) +
                       " bytes)");
  } catch (const std::exception& e) {
    return Error::internal("node '" + node.name + "' (" + node.op->name + "): " + e.what());
  }
  if (outs.size() != node.outputs.size()) {
    return Error::internal("node '" + node.name + "' produced " + std::to_string(outs.size()) +
                           " outputs, expected " + std::to_string(node.outputs.size()));
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    // A reference that disagrees with its own inference is a kiln bug.
    if (auto s = check_value(outs[k], out_types[k],
                             "output " + std::to_string(k) + " of node '" + node.name + "'");
        !s) {
      return Error::internal(s.error().message());
    }
  }
  return outs;
}

Result<std::vector<HostTensor>> interpret(const Graph& graph, const std::vector<HostTensor>& inputs,
                                          const RandomState& random, bool magnitudes,
                                          double perturbation) {
  if (inputs.size() != graph.inputs.size()) {
    return Error::user("graph '" + graph.name + "' takes " + std::to_string(graph.inputs.size()) +
                       " inputs, got " + std::to_string(inputs.size()));
  }
  std::vector<std::optional<HostTensor>> values(graph.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs[i]);
    if (auto s = check_value(inputs[i], v.type, "input '" + v.name + "'"); !s)
      return std::move(s).error();
    values[static_cast<size_t>(graph.inputs[i].id)] = inputs[i];
  }
  for (ValueRef p : graph.params) {
    const Value& v = graph.value(p);
    auto it = graph.param_data.find(v.name);
    if (it == graph.param_data.end())
      return Error::user("parameter '" + v.name + "' has no data (missing from the weights?)");
    if (auto s = check_value(it->second, v.type, "parameter '" + v.name + "'"); !s)
      return std::move(s).error();
    values[static_cast<size_t>(p.id)] = it->second;
  }
  const std::vector<int64_t> last = last_uses(graph);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    auto outs = run_node(
        graph, node,
        [&](ValueRef r) -> const HostTensor* {
          const auto& slot = values[static_cast<size_t>(r.id)];
          return slot ? &*slot : nullptr;
        },
        random, magnitudes);
    if (!outs) return std::move(outs).error();
    if (perturbation > 0)
      for (HostTensor& out : *outs) perturb(out, perturbation, n);
    for (size_t k = 0; k < outs->size(); ++k)
      values[static_cast<size_t>(node.outputs[k].id)] = std::move((*outs)[k]);
    for (size_t v = 0; v < values.size(); ++v) {
      if (values[v] && last[v] <= static_cast<int64_t>(n) &&
          graph.values[v].kind == ValueKind::NodeOutput)
        values[v].reset();
    }
  }
  std::vector<HostTensor> results;
  for (ValueRef r : graph.outputs) results.push_back(*values[static_cast<size_t>(r.id)]);
  return results;
}

}  // namespace kiln
