#include "core/interp/oracle.h"

#include <algorithm>
#include <cmath>

#include "core/interp/interpreter.h"

namespace kiln {
namespace {

// |t| for float tensors (contiguous copy); integer and bool tensors unchanged.
HostTensor magnitude_of(const HostTensor& t) {
  if (!is_floating(t.dtype())) return t;
  HostTensor out = t.to(t.dtype());  // a contiguous copy
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double m = std::fabs(out.get(i));
    out.set(i, std::isfinite(m) ? m : 0.0);  // an infinite term bounds nothing
  }
  return out;
}

}  // namespace

int64_t longest_reduction(const Graph& graph) {
  int64_t longest = 1;
  for (const Value& v : graph.values)
    for (int64_t size : v.type.sizes) longest = std::max(longest, size);
  for (const Node& node : graph.nodes) {
    if (node.outputs.empty()) continue;
    const int64_t out = std::max<int64_t>(graph.type(node.outputs[0]).numel(), 1);
    for (ValueRef r : tensor_args(node)) longest = std::max(longest, graph.type(r).numel() / out);
  }
  return longest;
}

Result<OracleResults> run_oracle(const Graph& graph, const std::vector<HostTensor>& inputs,
                                 const RandomState& random) {
  auto expected = interpret(graph, inputs, random);
  if (!expected) return std::move(expected).error();
  OracleResults r;
  r.expected = std::move(*expected);
  r.terms = longest_reduction(graph);
  Graph magnitudes = graph;
  for (auto& [name, tensor] : magnitudes.param_data) tensor = magnitude_of(tensor);
  std::vector<HostTensor> abs_inputs;
  abs_inputs.reserve(inputs.size());
  for (const HostTensor& t : inputs) abs_inputs.push_back(magnitude_of(t));
  if (auto m = interpret(magnitudes, abs_inputs, random, /*magnitudes=*/true);
      m && m->size() == r.expected.size())
    r.magnitude = std::move(*m);
  if (auto p = interpret(graph, inputs, random, /*magnitudes=*/false, kOpErrorUlps);
      p && p->size() == r.expected.size())
    r.perturbed = std::move(*p);
  return r;
}

}  // namespace kiln
