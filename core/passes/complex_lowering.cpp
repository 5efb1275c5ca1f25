#include "core/passes/complex_lowering.h"

#include <cmath>
#include <functional>
#include <map>

#include "core/graph/builder.h"
#include "core/ops/arg_view.h"
#include "core/ops/op_def.h"
#include "core/ops/op_error.h"
#include "core/passes/map_args.h"

namespace kiln {
namespace {

TensorType real_form(const TensorType& t) {
  if (!is_complex(t.dtype)) return t;
  TensorType r{DType::F32, t.sizes, t.strides};
  for (int64_t& s : r.strides) s *= 2;
  r.sizes.push_back(2);
  r.strides.push_back(1);
  return r;
}

// One node being rewritten: its arguments as they are in the new graph, and what was complex.
class Rewrite {
 public:
  Rewrite(const Graph& g, const Node& node, GraphBuilder& builder, const std::vector<ValueRef>& map)
      : b(builder), args(node.op->schema, node.args), g_(g), node_(node), map_(map) {}

  GraphBuilder& b;
  const ArgView args;

  ArgValue mapped(const ArgValue& a) const { return map_arg(a, map_); }
  std::vector<ArgValue> mapped_args() const {
    std::vector<ArgValue> out;
    for (const ArgValue& a : node_.args) out.push_back(mapped(a));
    return out;
  }
  ValueRef in(int i) const { return std::get<ValueRef>(mapped(args.at(i))); }
  const TensorType& type(int i) const { return g_.type(args.ref(i)); }
  bool complex(int i) const { return args.is_tensor(i) && is_complex(type(i).dtype); }
  const TensorType& out_type(size_t k = 0) const { return g_.type(node_.outputs[k]); }
  // The complex rank of the node's first operand (its dims, the pair's 2 left out).
  int64_t rank() const { return type(0).rank(); }

  ValueRef op(const std::string& name, std::vector<ArgValue> a, const Kwargs& kw = {}) {
    return b.op(name, std::move(a), kw);
  }
  // The same op with new arguments (schema order), dims already counted in the real form.
  ValueRef same(std::vector<ArgValue> a) {
    auto out = b.try_bound(node_.op->name, a, "");
    if (!out) op_bug(out.error().message());
    return out->front();
  }
  ValueRef re(ValueRef pair) { return op("aten.select.int", {pair, int64_t{-1}, int64_t{0}}); }
  ValueRef im(ValueRef pair) { return op("aten.select.int", {pair, int64_t{-1}, int64_t{1}}); }
  ValueRef pair(ValueRef real, ValueRef imag) {
    return op("aten.stack.default", {TensorList{{real, imag}}, int64_t{-1}});
  }
  ValueRef f32(ValueRef v) {
    return b.type(v).dtype == DType::F32
               ? v
               : op("aten._to_copy.default", {v}, {{"dtype", DType::F32}});
  }
  // Operand i as a complex pair: complex values as they are, real tensors with a zero
  // imaginary part, numbers as a one-element pair.
  ValueRef as_pair(int i) {
    if (args.is_tensor(i)) return pair_of(args.ref(i));
    return real_pair(
        op("aten.full.default", {IntList{}, args.get_float(i)}, {{"dtype", DType::F32}}));
  }
  // Real values (f32) as pairs with a zero imaginary part.
  ValueRef real_pair(ValueRef real) {
    return op("aten.constant_pad_nd.default",
              {op("aten.unsqueeze.default", {real, int64_t{-1}}), IntList{0, 1}, 0.0});
  }
  const TensorType& original(ValueRef v) const { return g_.type(v); }
  // A value of the old graph as a complex pair in the new one.
  ValueRef pair_of(ValueRef v) {
    const ValueRef now = map_[static_cast<size_t>(v.id)];
    if (is_complex(g_.type(v).dtype)) return now;
    return real_pair(f32(now));
  }
  // A real operand i made to scale pairs: a tensor gains a trailing dim of 1.
  ArgValue as_scale(int i) {
    if (!args.is_tensor(i)) return args.at(i);
    return op("aten.unsqueeze.default", {f32(in(i)), int64_t{-1}});
  }
  int64_t dim(int64_t d, int64_t rank) const {
    auto n = normalize_dim(d, rank);
    if (!n) op_fail(n.error().message());
    return *n;
  }

 private:
  const Graph& g_;
  const Node& node_;
  const std::vector<ValueRef>& map_;
};

using Rule = std::function<std::vector<ValueRef>(Rewrite&)>;

ValueRef normalized(Rewrite& w, ValueRef v, int norm, int64_t n) {
  if (norm == 0) return v;
  const double scale = norm == 1 ? 1 / std::sqrt(static_cast<double>(n)) : 1.0 / n;
  return w.op("aten.mul.Tensor", {v, scale});
}

IntList fft_dims(Rewrite& w, int64_t rank) {
  IntList dims = w.args.get_ints(1);
  for (int64_t& d : dims) d = w.dim(d, rank);
  return dims;
}

int64_t points(const Shape& sizes, const IntList& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[static_cast<size_t>(d)];
  return n;
}

std::vector<ValueRef> fft_r2c(Rewrite& w) {
  const IntList dims = fft_dims(w, w.rank());
  ValueRef y = w.op("kiln.rfft.default", {w.in(0), dims.back(), w.args.get_bool(3)});
  for (size_t i = 0; i + 1 < dims.size(); ++i) y = w.op("kiln.cfft.default", {y, dims[i], true});
  return {normalized(w, y, static_cast<int>(w.args.get_int(2)), points(w.type(0).sizes, dims))};
}

std::vector<ValueRef> fft_c2r(Rewrite& w) {
  const IntList dims = fft_dims(w, w.rank());
  const int64_t length = w.args.get_int(3), last = dims.back();
  ValueRef y = w.in(0);
  for (size_t i = 0; i + 1 < dims.size(); ++i) y = w.op("kiln.cfft.default", {y, dims[i], false});
  if (w.type(0).sizes[static_cast<size_t>(last)] > length / 2 + 1)
    y = w.op("aten.slice.Tensor", {y, last, int64_t{0}, length / 2 + 1, int64_t{1}});
  y = w.op("kiln.irfft.default", {y, last, length});
  return {normalized(w, y, static_cast<int>(w.args.get_int(2)), points(w.out_type().sizes, dims))};
}

std::vector<ValueRef> fft_c2c(Rewrite& w) {
  const IntList dims = fft_dims(w, w.rank());
  ValueRef y = w.in(0);
  for (int64_t d : dims) y = w.op("kiln.cfft.default", {y, d, w.args.get_bool(3)});
  return {normalized(w, y, static_cast<int>(w.args.get_int(2)), points(w.type(0).sizes, dims))};
}

std::vector<ValueRef> conj(Rewrite& w) {
  const ValueRef x = w.in(0);
  return {w.pair(w.re(x), w.op("aten.neg.default", {w.im(x)}))};
}

std::vector<ValueRef> magnitude(Rewrite& w) {
  const ValueRef x = w.in(0), a = w.re(x), b = w.im(x);
  return {w.op("aten.sqrt.default", {w.op("aten.add.Tensor", {w.op("aten.mul.Tensor", {a, a}),
                                                              w.op("aten.mul.Tensor", {b, b})})})};
}

// add and sub: pairs add as vectors; alpha scales both parts.
std::vector<ValueRef> add_sub(Rewrite& w) {
  return {w.same({w.as_pair(0), w.as_pair(1), w.args.at(2)})};
}

ValueRef complex_product(Rewrite& w, ValueRef x, ValueRef y) {
  const ValueRef a = w.re(x), b = w.im(x), c = w.re(y), d = w.im(y);
  const auto mul = [&](ValueRef p, ValueRef q) { return w.op("aten.mul.Tensor", {p, q}); };
  return w.pair(w.op("aten.sub.Tensor", {mul(a, c), mul(b, d)}),
                w.op("aten.add.Tensor", {mul(a, d), mul(b, c)}));
}

std::vector<ValueRef> product(Rewrite& w) {
  if (w.complex(0) && w.complex(1)) return {complex_product(w, w.in(0), w.in(1))};
  const int c = w.complex(0) ? 0 : 1;
  return {w.op("aten.mul.Tensor", {w.in(c), w.as_scale(1 - c)})};
}

std::vector<ValueRef> quotient(Rewrite& w) {
  if (!w.complex(1)) return {w.op("aten.div.Tensor", {w.in(0), w.as_scale(1)})};
  // x / y = x * conj(y) / |y|^2
  const ValueRef y = w.in(1), c = w.re(y), d = w.im(y);
  const ValueRef norm =
      w.op("aten.add.Tensor", {w.op("aten.mul.Tensor", {c, c}), w.op("aten.mul.Tensor", {d, d})});
  const ValueRef scaled =
      complex_product(w, w.as_pair(0), w.pair(c, w.op("aten.neg.default", {d})));
  return {w.op("aten.div.Tensor", {scaled, w.op("aten.unsqueeze.default", {norm, int64_t{-1}})})};
}

// Views and reductions: the same op on the pair, with its dims counted in the complex rank.
Rule with_dims(std::vector<int> dim_args, int64_t extra_rank = 0) {
  return [dim_args, extra_rank](Rewrite& w) {
    std::vector<ArgValue> a = w.mapped_args();
    for (ArgValue& v : a)  // sum(dtype=complex64): the pairs keep f32
      if (std::holds_alternative<DType>(v) && is_complex(std::get<DType>(v))) v = None{};
    const int64_t rank = w.rank() + extra_rank;
    for (int i : dim_args) {
      if (w.args.is_none(i)) continue;
      if (std::holds_alternative<IntList>(a[static_cast<size_t>(i)])) {
        IntList dims = std::get<IntList>(a[static_cast<size_t>(i)]);
        if (dims.empty() && w.args.schema().op != "aten.squeeze.dims") {
          for (int64_t d = 0; d < rank; ++d) dims.push_back(d);  // sum/mean: every dim
        }
        for (int64_t& d : dims) d = w.dim(d, rank);
        a[static_cast<size_t>(i)] = dims;
      } else {
        a[static_cast<size_t>(i)] = w.dim(w.args.get_int(i), rank);
      }
    }
    return std::vector{w.same(std::move(a))};
  };
}

// view, reshape and expand: the result's sizes and the pair's 2.
std::vector<ValueRef> resized(Rewrite& w) {
  std::vector<ArgValue> a = w.mapped_args();
  Shape sizes = w.out_type().sizes;
  sizes.push_back(2);
  a[1] = IntList(sizes);
  return {w.same(std::move(a))};
}

std::vector<ValueRef> permuted(Rewrite& w) {
  IntList dims = w.args.get_ints(1);
  for (int64_t& d : dims) d = w.dim(d, w.rank());
  dims.push_back(w.rank());
  return {w.op("aten.permute.default", {w.in(0), dims})};
}

std::vector<ValueRef> concatenated(Rewrite& w) {
  const TensorList& list = w.args.tensor_list(0);
  int64_t rank = 0;
  for (const auto& item : list.items)
    if (item && is_complex(w.original(*item).dtype)) rank = w.original(*item).rank();
  TensorList pairs;
  for (const auto& item : list.items)
    if (item) pairs.items.emplace_back(w.pair_of(*item));
  return {w.op("aten.cat.default", {pairs, w.dim(w.args.get_int(1), rank)})};
}

// _to_copy: complex to complex copies the pairs, real to complex gains a zero imaginary part,
// complex to real keeps the real part (as PyTorch does, which warns).
std::vector<ValueRef> converted(Rewrite& w) {
  const DType to = w.out_type().dtype;
  if (w.complex(0) && is_complex(to)) return {w.op("aten.clone.default", {w.in(0)})};
  if (is_complex(to)) return {w.as_pair(0)};
  return {w.op("aten._to_copy.default", {w.re(w.in(0))}, {{"dtype", to}})};
}

// full and full_like with a complex result: the real number as the real part.
std::vector<ValueRef> filled(Rewrite& w) {
  const ValueRef real =  // fill_value is argument 1 of both
      w.op("aten.full.default", {IntList(w.out_type().sizes), w.args.get_float(1)},
           {{"dtype", DType::F32}});
  return {w.real_pair(real)};
}

const std::map<std::string, Rule, std::less<>>& rules() {
  static const std::map<std::string, Rule, std::less<>> table = {
      {"aten._fft_r2c.default", fft_r2c},
      {"aten._fft_c2r.default", fft_c2r},
      {"aten._fft_c2c.default", fft_c2c},
      {"aten.view_as_real.default", [](Rewrite& w) { return std::vector{w.in(0)}; }},
      {"aten.view_as_complex.default", [](Rewrite& w) { return std::vector{w.in(0)}; }},
      {"aten._conj.default", conj},
      {"aten._neg_view.default",
       [](Rewrite& w) { return std::vector{w.op("aten.neg.default", {w.in(0)})}; }},
      {"aten.neg.default",
       [](Rewrite& w) { return std::vector{w.op("aten.neg.default", {w.in(0)})}; }},
      {"aten.abs.default", magnitude},
      {"aten.add.Tensor", add_sub},
      {"aten.sub.Tensor", add_sub},
      {"aten.mul.Tensor", product},
      {"aten.div.Tensor", quotient},
      {"aten.alias.default", with_dims({})},
      {"aten.clone.default", with_dims({})},
      {"aten.view.default", resized},
      {"aten.reshape.default", resized},
      {"aten.expand.default", resized},
      {"aten.permute.default", permuted},
      {"aten.select.int", with_dims({1})},
      {"aten.slice.Tensor", with_dims({1})},
      {"aten.transpose.int", with_dims({1, 2})},
      {"aten.unsqueeze.default", with_dims({1}, 1)},
      {"aten.squeeze.dim", with_dims({1})},
      {"aten.squeeze.dims", with_dims({1})},
      {"aten.sum.dim_IntList", with_dims({1})},
      {"aten.mean.dim", with_dims({1})},
      {"aten.cat.default", concatenated},
      {"aten._to_copy.default", converted},
      {"aten.full.default", filled},
      {"aten.full_like.default", filled},
  };
  return table;
}

bool touches_complex(const Graph& g, const Node& node) {
  for (ValueRef r : node.outputs)
    if (is_complex(g.type(r).dtype)) return true;
  for (ValueRef r : tensor_args(node))
    if (is_complex(g.type(r).dtype)) return true;
  return false;
}

}  // namespace

bool has_complex_values(const Graph& graph) {
  for (const Value& v : graph.values)
    if (is_complex(v.type.dtype)) return true;
  return false;
}

std::vector<std::string> complex_lowering_rules() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : rules()) names.push_back(name);
  return names;
}

Result<Graph> lower_complex(const Graph& graph) {
  if (!has_complex_values(graph)) return graph;
  GraphBuilder b(graph.registry, graph.name);
  std::vector<ValueRef> map(graph.values.size());
  for (ValueRef r : graph.inputs)
    map[static_cast<size_t>(r.id)] = b.input(graph.value(r).name, real_form(graph.type(r)));
  for (ValueRef r : graph.params)
    map[static_cast<size_t>(r.id)] = b.param(graph.value(r).name, real_form(graph.type(r)));
  for (const Node& node : graph.nodes) {
    std::vector<ValueRef> outs;
    if (!touches_complex(graph, node)) {
      Rewrite w(graph, node, b, map);
      auto result = b.try_bound(node.op->name, w.mapped_args(), node.name);
      if (!result) return std::move(result).error().with_context("node '" + node.name + "'");
      outs = *result;
    } else {
      const auto rule = rules().find(node.op->name);
      if (rule == rules().end())
        return Error::user("node '" + node.name + "': " + node.op->name +
                           " has no complex64 form in kiln");
      b.set_name_prefix(node.name + "/");
      try {
        Rewrite w(graph, node, b, map);
        outs = rule->second(w);
      } catch (const OpError& e) {
        return (e.internal ? Error::internal(e.message) : Error::user(e.message))
            .with_context("lowering complex node '" + node.name + "' (" + node.op->name + ")");
      }
      b.set_name_prefix("");
      // The node's result keeps its name (a view: free).
      if (outs.size() == 1 && b.ok())
        outs[0] = b.op("aten.alias.default", {outs[0]}, {}, node.name);
      if (!b.ok())
        return Error::internal("lowering complex node '" + node.name + "' (" + node.op->name +
                               "): " + b.finish().error().message());
      for (size_t k = 0; k < outs.size(); ++k) {
        if (!(b.type(outs[k]).sizes == real_form(graph.type(node.outputs[k])).sizes))
          return Error::internal("complex lowering of node '" + node.name + "' (" + node.op->name +
                                 ") gives " + b.type(outs[k]).to_string() + " for " +
                                 graph.type(node.outputs[k]).to_string());
      }
    }
    for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(node.outputs[k].id)] = outs[k];
  }
  for (ValueRef r : graph.outputs) b.output(map[static_cast<size_t>(r.id)]);
  auto result = b.finish();
  if (!result) return result;
  for (ValueRef r : graph.inputs)
    result->values[static_cast<size_t>(map[static_cast<size_t>(r.id)].id)].random_range =
        graph.value(r).random_range;
  for (const auto& [name, data] : graph.param_data) {
    if (!is_complex(data.dtype())) {
      result->param_data.emplace(name, data);
      continue;
    }
    if (!data.type().is_contiguous())
      return Error::user("complex parameter '" + name + "' must be contiguous");
    const auto bytes = data.bytes();
    auto pairs = HostTensor::from_bytes(DType::F32, real_form(data.type()).sizes,
                                        std::vector<std::byte>(bytes.begin(), bytes.end()));
    if (!pairs) return std::move(pairs).error().with_context("complex parameter '" + name + "'");
    result->param_data.emplace(name, std::move(*pairs));
  }
  return result;
}

}  // namespace kiln
