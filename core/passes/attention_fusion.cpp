#include "core/passes/attention_fusion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "core/graph/builder.h"
#include "core/ops/arg_view.h"
#include "core/ops/op_def.h"
#include "core/passes/constant_value.h"
#include "core/passes/map_args.h"

namespace kiln {
namespace {

constexpr const char* kSdpa = "aten.scaled_dot_product_attention.default";

struct Match {
  ValueRef q, k, v;              // k is kᵀ's transpose source, or kᵀ itself (then transposed)
  bool k_is_transposed = false;  // k holds kᵀ: the rewrite adds the transpose
  std::optional<ValueRef> mask;
  bool causal = false;  // the mask was a constant hiding exactly the keys after each query
  double scale = 1.0;
  std::set<int> dead;  // nodes the rewrite leaves unread (the final product among them)
};

class Pattern {
 public:
  Pattern(const Graph& g, const AttentionTaken& takes)
      : g_(g), takes_(takes), users_(g.values.size()) {
    for (size_t n = 0; n < g.nodes.size(); ++n)
      for (ValueRef r : tensor_args(g.nodes[n])) users_[static_cast<size_t>(r.id)].insert(int(n));
    for (ValueRef r : g.outputs) outputs_.insert(r.id);
  }

  // The pattern ending in bmm node `n`, or none.
  std::optional<Match> at(int n) const {
    const Node& product = g_.nodes[static_cast<size_t>(n)];
    if (op_name(product) != "aten.bmm.default") return std::nullopt;
    std::vector<int> nodes = {n};
    const ArgView pv(product.op->schema, product.args);
    const Node* softmax = producer(through_layout(pv.ref(0), nodes));
    if (!softmax || op_name(*softmax) != "aten._softmax.default") return std::nullopt;
    const ArgView sa(softmax->op->schema, softmax->args);
    const TensorType& probs = g_.type(softmax->outputs[0]);
    if (sa.get_bool(2) || (sa.get_int(1) != -1 && sa.get_int(1) != probs.rank() - 1))
      return std::nullopt;
    const int softmax_node = node_index(*softmax);
    nodes.push_back(softmax_node);
    Match m;
    ValueRef scores = sa.ref(0);
    if (const Node* add = producer(scores); add && op_name(*add) == "aten.add.Tensor") {
      const ArgView aa(add->op->schema, add->args);
      if (!aa.is_tensor(0) || !aa.is_tensor(1) || aa.get_float(2) != 1.0) return std::nullopt;
      m.mask = aa.ref(1);
      scores = aa.ref(0);
      nodes.push_back(node_index(*add));
    }
    if (const Node* s = producer(scores);
        s && (op_name(*s) == "aten.div.Tensor" || op_name(*s) == "aten.mul.Tensor")) {
      const ArgView da(s->op->schema, s->args);
      if (!da.is_tensor(0) || !da.is_wrapped_scalar(1) || da.get_float(1) == 0.0)
        return std::nullopt;
      m.scale = op_name(*s) == "aten.div.Tensor" ? 1.0 / da.get_float(1) : da.get_float(1);
      scores = da.ref(0);
      nodes.push_back(node_index(*s));
    }
    const Node* first = producer(through_layout(scores, nodes));
    if (!first || op_name(*first) != "aten.bmm.default") return std::nullopt;
    nodes.push_back(node_index(*first));
    const ArgView fa(first->op->schema, first->args);
    m.q = through_layout(fa.ref(0), nodes);
    m.k = through_layout(fa.ref(1), nodes);
    m.v = through_layout(pv.ref(1), nodes);
    if (!shapes_fit(m, probs)) return std::nullopt;
    // kᵀ as a transpose of the last two dims of k, or k taken as it is and transposed.
    m.k_is_transposed = true;
    if (const Node* t = producer(m.k); t && swaps_last_two(*t)) {
      m.k = ArgView(t->op->schema, t->args).ref(0);
      m.k_is_transposed = false;
      nodes.push_back(node_index(*t));
    }
    m.dead = dead_nodes(nodes, n);
    // The scores and their softmax must go: read elsewhere, they would be computed anyway.
    for (int required : {softmax_node, node_index(*first)})
      if (!m.dead.contains(required)) return std::nullopt;
    // What the attention reads must stay (a mask computed from the scores would not).
    for (const std::optional<ValueRef>& operand :
         {std::optional(m.q), std::optional(m.k), std::optional(m.v), m.mask}) {
      if (!operand) continue;
      const Value& value = g_.value(*operand);
      if (value.kind == ValueKind::NodeOutput && m.dead.contains(value.node)) return std::nullopt;
    }
    if (!takes_(g_.type(m.q), g_.type(m.v))) return std::nullopt;
    return m;
  }

 private:
  const Node* producer(ValueRef v) const {
    const Value& value = g_.value(v);
    return value.kind == ValueKind::NodeOutput ? &g_.nodes[static_cast<size_t>(value.node)]
                                               : nullptr;
  }
  int node_index(const Node& node) const { return static_cast<int>(&node - g_.nodes.data()); }

  // `v` followed back through clones, expands to its own sizes and views that keep the last
  // two dims (those matmuls leave around a batched product); the nodes passed are added.
  ValueRef through_layout(ValueRef v, std::vector<int>& nodes) const {
    for (const Node* n = producer(v); n; n = producer(v)) {
      const std::string& name = op_name(*n);
      const bool clone = name == "aten.clone.default", expand = name == "aten.expand.default";
      const bool view = name == "aten.view.default" || name == "aten._unsafe_view.default" ||
                        name == "aten.reshape.default";
      if (!clone && !expand && !view) break;  // (a cat's first argument is no tensor)
      const ValueRef in = ArgView(n->op->schema, n->args).ref(0);
      const Shape &from = g_.type(in).sizes, &to = g_.type(v).sizes;
      const bool same_sizes = from == to;
      const bool same_rows = from.size() >= 2 && to.size() >= 2 && from.end()[-1] == to.end()[-1] &&
                             from.end()[-2] == to.end()[-2];
      if (!(clone || (expand && same_sizes) || (view && same_rows))) break;
      nodes.push_back(node_index(*n));
      v = in;
    }
    return v;
  }

  bool swaps_last_two(const Node& n) const {
    const ArgView a(n.op->schema, n.args);
    const int64_t rank = g_.type(n.outputs[0]).rank();
    auto wrap = [rank](int64_t d) { return d < 0 ? d + rank : d; };
    if (op_name(n) == "aten.transpose.int") {
      const int64_t d0 = wrap(a.get_int(1)), d1 = wrap(a.get_int(2));
      return std::min(d0, d1) == rank - 2 && std::max(d0, d1) == rank - 1;
    }
    if (op_name(n) != "aten.permute.default") return false;
    const IntList dims = a.get_ints(1);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t want = d < rank - 2 ? d : (d == rank - 2 ? rank - 1 : rank - 2);
      if (wrap(dims[static_cast<size_t>(d)]) != want) return false;
    }
    return true;
  }

  // q [L..., S, D], kᵀ [L..., D, T], v [L..., T, E] with the same leading dims L, whose count
  // is the products' batch; the softmax over [L..., S, T] (the mask's shape broadcasting to it).
  bool shapes_fit(const Match& m, const TensorType& probs) const {
    const TensorType &q = g_.type(m.q), &kt = g_.type(m.k), &v = g_.type(m.v);
    const size_t r = q.sizes.size();
    if (r < 3 || kt.sizes.size() != r || v.sizes.size() != r || !is_floating(q.dtype) ||
        kt.dtype != q.dtype || v.dtype != q.dtype || probs.dtype != q.dtype)
      return false;
    const Shape lead(q.sizes.begin(), q.sizes.end() - 2);
    if (!std::equal(lead.begin(), lead.end(), kt.sizes.begin()) ||
        !std::equal(lead.begin(), lead.end(), v.sizes.begin()))
      return false;
    const int64_t s = q.sizes[r - 2], d = q.sizes[r - 1], t = kt.sizes[r - 1];
    if (kt.sizes[r - 2] != d || v.sizes[r - 2] != t) return false;
    Shape scores = lead;
    scores.push_back(s);
    scores.push_back(t);
    if (probs.sizes != scores) return false;
    if (!m.mask) return true;
    const TensorType& mask = g_.type(*m.mask);
    const auto joint = broadcast_shapes(mask.sizes, scores);
    return mask.dtype == q.dtype && joint && *joint == scores;
  }

  // Of `candidates`, the nodes nothing would read once `product` is replaced: every reader
  // of each output is such a node, and no output is a graph output.
  std::set<int> dead_nodes(std::vector<int> candidates, int product) const {
    std::sort(candidates.rbegin(), candidates.rend());  // readers before what they read
    std::set<int> dead = {product};
    for (int c : candidates) {
      if (c == product) continue;
      bool unread = true;
      for (ValueRef out : g_.nodes[static_cast<size_t>(c)].outputs) {
        if (outputs_.contains(out.id)) unread = false;
        for (int user : users_[static_cast<size_t>(out.id)]) unread = unread && dead.contains(user);
      }
      if (unread) dead.insert(c);
    }
    return dead;
  }

  const Graph& g_;
  const AttentionTaken& takes_;
  std::vector<std::set<int>> users_;  // by value id: the nodes reading it
  std::set<int32_t> outputs_;
};

// Whether `mask` is a constant that adds 0 where key j <= query i and -inf where j > i over
// the scores' [rows, cols] (its own last two dims those, the same for every leading index):
// what is_causal means.
bool causal_mask(const Graph& graph, ValueRef mask, int64_t rows, int64_t cols) {
  const TensorType& t = graph.type(mask);
  if (t.rank() < 2 || t.sizes.end()[-2] != rows || t.sizes.end()[-1] != cols) return false;
  const std::optional<HostTensor> value = constant_value(graph, mask);
  if (!value) return false;
  for (int64_t e = 0; e < value->numel(); ++e) {
    const int64_t i = e / cols % rows, j = e % cols;
    const double m = value->get(e);
    if (j > i ? !(std::isinf(m) && m < 0) : m != 0.0) return false;
  }
  return true;
}

}  // namespace

Result<Graph> fuse_attention(const Graph& graph, const AttentionTaken& takes, int* rewritten) {
  if (rewritten) *rewritten = 0;
  const Pattern pattern(graph, takes);
  std::vector<std::optional<Match>> matches(graph.nodes.size());
  std::set<int> dead;
  // By mask value and scores' [S, T]: layers share one mask.
  std::map<std::tuple<int32_t, int64_t, int64_t>, bool> causal;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    matches[n] = pattern.at(static_cast<int>(n));
    if (!matches[n]) continue;
    dead.insert(matches[n]->dead.begin(), matches[n]->dead.end());
    // A causal mask built in the graph (GPT-2's) is is_causal: the fused call then skips the
    // hidden half instead of reading a mask.
    const std::optional<ValueRef> mask = matches[n]->mask;
    const int64_t s = graph.type(matches[n]->q).sizes.end()[-2];
    const int64_t t = graph.type(matches[n]->v).sizes.end()[-2];
    const auto key = std::tuple(mask ? mask->id : -1, s, t);
    if (mask && !causal.contains(key)) causal[key] = causal_mask(graph, *mask, s, t);
    if (mask && causal[key]) {
      matches[n]->mask.reset();
      matches[n]->causal = true;
    }
  }
  if (dead.empty()) return graph;
  GraphBuilder b(graph.registry, graph.name);
  std::vector<ValueRef> map(graph.values.size());
  auto mapped = [&map](ValueRef r) { return map[static_cast<size_t>(r.id)]; };
  for (ValueRef r : graph.inputs)
    map[static_cast<size_t>(r.id)] = b.input(graph.value(r).name, graph.type(r));
  for (ValueRef r : graph.params)
    map[static_cast<size_t>(r.id)] = b.param(graph.value(r).name, graph.type(r));
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (const std::optional<Match>& m = matches[n]) {
      const ValueRef k = m->k_is_transposed
                             ? b.op("aten.transpose.int", {mapped(m->k), int64_t{-2}, int64_t{-1}},
                                    {}, node.name + "/key")
                             : mapped(m->k);
      ArgValue mask = None{};
      if (m->mask) mask = mapped(*m->mask);
      const ValueRef out = b.op(kSdpa, {mapped(m->q), k, mapped(m->v), mask, 0.0, m->causal},
                                {{"scale", m->scale}}, node.name + "/attention");
      const IntList sizes = graph.type(node.outputs[0]).sizes;
      map[static_cast<size_t>(node.outputs[0].id)] =
          b.op("aten.view.default", {out, sizes}, {}, node.name);
      if (rewritten) ++*rewritten;
      continue;
    }
    if (dead.contains(static_cast<int>(n))) continue;
    std::vector<ArgValue> args;
    for (const ArgValue& a : node.args) args.push_back(map_arg(a, map));
    auto outs = b.try_bound(node.op->name, args, node.name);
    if (!outs) return std::move(outs).error().with_context("re-adding node '" + node.name + "'");
    for (size_t k = 0; k < outs->size(); ++k)
      map[static_cast<size_t>(node.outputs[k].id)] = (*outs)[k];
  }
  for (ValueRef r : graph.outputs) b.output(mapped(r));
  auto result = b.finish();
  if (!result) return Error::internal("fusing attention: " + result.error().message());
  for (ValueRef r : graph.inputs)
    result->values[static_cast<size_t>(mapped(r).id)].random_range = graph.value(r).random_range;
  result->param_data = graph.param_data;
  return result;
}

}  // namespace kiln
