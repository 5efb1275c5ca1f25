// Composite ops that exported graphs carry: each has its own straightforward reference and
// a decomposition into primitive ops. Tests check that the two agree.
#include <cmath>

#include "core/graph/builder.h"
#include "core/ops/elementwise.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/promotion.h"
#include "core/ops/reduce_util.h"

namespace kiln {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

bool is_half(DType d) {
  return d == DType::F16 || d == DType::BF16;
}
DType compute_dtype(DType d) {
  return is_half(d) ? DType::F32 : d;
}

std::vector<TensorType> same_float(const InferContext& c) {
  op_check(is_floating(c.type(0).dtype),
           c.schema().op + " needs a floating input, got " + c.type(0).to_string());
  return one(c.type(0).dtype, c.type(0).sizes);
}

double gelu(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x * kSqrt1_2));
}

ValueRef decompose_gelu(GraphBuilder& b, ValueRef x0, bool tanh_form) {
  const DType out = b.type(x0).dtype;
  ValueRef x = b.cast(x0, compute_dtype(out));
  ValueRef inner;
  if (tanh_form) {
    ValueRef cube = b.mul(b.mul(x, x), x);
    inner = b.unary("tanh", b.mul(b.add(x, b.mul(cube, 0.044715)), kSqrt2OverPi));
  } else {
    inner = b.unary("erf", b.mul(x, kSqrt1_2));
  }
  return b.cast(b.mul(b.mul(x, 0.5), b.add(inner, 1.0)), out);
}

// nll_loss on log-probabilities `x` ([N, C] or [C]) and class indices `target`.
struct NllResult {
  HostTensor loss;
  HostTensor total_weight;
};

NllResult nll_reference(const RefContext& c, const HostTensor& x, const HostTensor& target,
                        const std::optional<HostTensor>& weight, int64_t reduction,
                        int64_t ignore_index) {
  const bool batched = x.rank() == 2;
  const int64_t n = batched ? x.sizes()[0] : 1, classes = x.sizes().back();
  HostTensor loss = c.output(0);
  double total = 0, total_weight = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = target.get_int(i);
    double value = 0;
    if (t != ignore_index) {
      op_check(t >= 0 && t < classes, "nll_loss: target " + std::to_string(t) +
                                          " is out of bounds for " + std::to_string(classes) +
                                          " classes");
      const double w = weight ? weight->get(t) : 1.0;
      value = -w * x.get(i * classes + t);
      total_weight += w;
    }
    total += value;
    if (reduction == 0) loss.set(i, value);
  }
  if (reduction == 1) loss.set(0, total / total_weight);
  if (reduction == 2) loss.set(0, total);
  // Like PyTorch, total_weight stays 0 when nothing is reduced.
  HostTensor tw = c.output(1 < c.out_types.size() ? 1 : 0);
  if (c.out_types.size() > 1 && reduction != 0) tw.set(0, total_weight);
  return {loss, tw};
}

std::vector<TensorType> infer_nll(const InferContext& c, int reduction_arg,
                                  bool with_total_weight) {
  const TensorType x = c.type(0), t = c.type(1);
  op_check(x.rank() == 1 || x.rank() == 2,
           "nll_loss: input must be 1-D or 2-D, got " + x.to_string());
  op_check(is_floating(x.dtype), "nll_loss: input must be floating");
  op_check(is_integral(t.dtype),
           "nll_loss: target must hold class indices (an integer tensor), got " + t.to_string());
  op_check(
      t.rank() == x.rank() - 1 && (x.rank() == 1 || t.sizes[0] == x.sizes[0]),
      "nll_loss: target " + shape_text(t.sizes) + " does not match input " + shape_text(x.sizes));
  if (!c.is_none(2)) {
    op_check(c.type(2).sizes == Shape{x.sizes.back()},
             "nll_loss: weight must have one entry per class");
  }
  const int64_t reduction = c.get_int(reduction_arg);
  op_check(reduction >= 0 && reduction <= 2,
           "nll_loss: reduction must be 0 (none), 1 (mean) or 2 (sum)");
  std::vector<TensorType> out = one(x.dtype, reduction == 0 ? Shape(t.sizes) : Shape{});
  if (with_total_weight) out.push_back(TensorType::contiguous(x.dtype, {}));
  return out;
}

// Picks -x[i, target[i]] with gather; ignored targets read class 0 and are masked out.
std::vector<ValueRef> decompose_nll(GraphBuilder& b, ValueRef x, ValueRef target,
                                    std::optional<ValueRef> weight, int64_t reduction,
                                    int64_t ignore_index, bool with_total_weight) {
  const bool batched = b.type(x).rank() == 2;
  ValueRef keep = b.op("aten.ne.Scalar", {target, ignore_index});
  ValueRef safe = b.op("aten.where.self", {keep, target, int64_t{0}});
  ValueRef picked;
  if (batched) {
    ValueRef index = b.op("aten.unsqueeze.default", {safe, int64_t{1}});
    picked = b.op("aten.squeeze.dims",
                  {b.op("aten.gather.default", {x, int64_t{1}, index}), IntList{1}});
  } else {
    picked = b.op("aten.squeeze.dims",
                  {b.op("aten.gather.default",
                        {x, int64_t{0}, b.op("aten.unsqueeze.default", {safe, int64_t{0}})}),
                   IntList{0}});
  }
  const DType dtype = b.type(x).dtype;
  ValueRef w = b.cast(keep, dtype);
  if (weight)
    w = b.mul(w, b.op("aten.index_select.default",
                      {*weight, int64_t{0},
                       batched ? safe : b.op("aten.unsqueeze.default", {safe, int64_t{0}})}));
  if (weight && !batched) w = b.op("aten.squeeze.dims", {w, IntList{0}});
  ValueRef loss = b.mul(b.unary("neg", picked), w);
  ValueRef total_weight = b.sum(w, {}, false);
  std::vector<ValueRef> out;
  if (reduction == 0) out.push_back(loss);
  if (reduction == 1) out.push_back(b.div(b.sum(loss, {}, false), total_weight));
  if (reduction == 2) out.push_back(b.sum(loss, {}, false));
  if (with_total_weight)
    out.push_back(reduction == 0 ? b.op("aten.full.default", {IntList{}, 0.0}, {{"dtype", dtype}})
                                 : total_weight);
  return out;
}

void check_cross_entropy(const InferContext& c) {
  op_check(c.get_float(5) == 0.0, "cross_entropy_loss: label_smoothing is not supported yet (got " +
                                      std::to_string(c.get_float(5)) + ")");
}

// Scaled dot-product attention straight from its definition.
HostTensor sdpa_reference(const RefContext& c) {
  const HostTensor q = c.tensor(0), k = c.tensor(1), v = c.tensor(2);
  const std::optional<HostTensor> mask = c.is_none(3) ? std::nullopt : std::optional(c.tensor(3));
  const bool causal = c.get_bool(5);
  const int64_t L = q.sizes()[q.rank() - 2], E = q.sizes().back(), S = k.sizes()[k.rank() - 2],
                Ev = v.sizes().back();
  const double scale = c.opt_float(6).value_or(1.0 / std::sqrt(static_cast<double>(E)));
  HostTensor out = c.output(0);
  const int64_t batches = out.numel() / std::max<int64_t>(L * Ev, 1);
  const Shape score_shape = [&] {
    Shape s(out.sizes().begin(), out.sizes().end() - 2);
    s.insert(s.end(), {L, S});
    return s;
  }();
  const std::optional<Broadcaster> mask_index =
      mask ? std::optional<Broadcaster>(Broadcaster(mask->sizes(), score_shape)) : std::nullopt;
  // Read once into doubles: the loops below touch each element L or S times.
  const auto doubles = [](const HostTensor& t) {
    std::vector<double> d(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) d[static_cast<size_t>(i)] = t.get(i);
    return d;
  };
  const std::vector<double> qd = doubles(q), kd = doubles(k), vd = doubles(v);
  std::vector<double> scores(static_cast<size_t>(S));
  for (int64_t p = 0; p < batches; ++p) {
    for (int64_t i = 0; i < L; ++i) {
      double mx = -INFINITY;
      const double* qi = qd.data() + (p * L + i) * E;
      for (int64_t j = 0; j < S; ++j) {
        const double* kj = kd.data() + (p * S + j) * E;
        double s = 0;
        for (int64_t e = 0; e < E; ++e) s += qi[e] * kj[e];
        s *= scale;
        if (causal && j > i) s = -INFINITY;
        if (mask) {
          const double m = mask->get((*mask_index)((p * L + i) * S + j));
          if (mask->dtype() == DType::Bool)
            s = m != 0 ? s : -INFINITY;
          else
            s += m;
        }
        scores[static_cast<size_t>(j)] = s;
        mx = std::max(mx, s);
      }
      // A row whose every score is hidden is 0 (PyTorch's attention since 2.5), not NaN.
      if (mx == -INFINITY) {
        for (int64_t e = 0; e < Ev; ++e) out.set((p * L + i) * Ev + e, 0.0);
        continue;
      }
      double sum = 0;
      for (auto& s : scores) sum += (s = std::exp(s - mx));
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j)
          acc +=
              scores[static_cast<size_t>(j)] / sum * vd[static_cast<size_t>((p * S + j) * Ev + e)];
        out.set((p * L + i) * Ev + e, acc);
      }
    }
  }
  return out;
}

std::vector<TensorType> infer_sdpa(const InferContext& c) {
  const TensorType q = c.type(0), k = c.type(1), v = c.type(2);
  op_check(q.rank() >= 2 && k.rank() == q.rank() && v.rank() == q.rank(),
           "sdpa: query, key and value must have the same rank ≥ 2");
  op_check(q.sizes.back() == k.sizes.back(),
           "sdpa: query and key must have the same embedding size");
  op_check(k.sizes[k.sizes.size() - 2] == v.sizes[v.sizes.size() - 2],
           "sdpa: key and value must have the same sequence length");
  op_check(
      Shape(q.sizes.begin(), q.sizes.end() - 2) == Shape(k.sizes.begin(), k.sizes.end() - 2) &&
          Shape(q.sizes.begin(), q.sizes.end() - 2) == Shape(v.sizes.begin(), v.sizes.end() - 2),
      "sdpa: query, key and value must share their batch dims (no broadcasting or grouped heads)");
  op_check(q.dtype == k.dtype && q.dtype == v.dtype && is_floating(q.dtype),
           "sdpa: query, key and value must share a floating dtype");
  op_check(c.get_float(4) == 0.0, "sdpa: dropout_p must be 0 (kiln runs inference graphs)");
  op_check(!c.get_bool(7), "sdpa: enable_gqa is not supported");
  if (!c.is_none(3)) {
    op_check(c.type(3).dtype == DType::Bool || c.type(3).dtype == q.dtype,
             "sdpa: attn_mask must be bool or have the query's dtype");
    Shape scores(q.sizes.begin(), q.sizes.end() - 1);
    scores.push_back(k.sizes[k.sizes.size() - 2]);
    auto s = broadcast_shapes(c.type(3).sizes, scores);
    op_check(s && *s == scores, "sdpa: attn_mask " + shape_text(c.type(3).sizes) +
                                    " does not broadcast to " + shape_text(scores));
  }
  Shape out(q.sizes.begin(), q.sizes.end() - 1);
  out.push_back(v.sizes.back());
  return one(q.dtype, out);
}

std::vector<ValueRef> decompose_sdpa(const DecomposeContext& c) {
  GraphBuilder& b = c.b;
  const TensorType q = c.type(0), k = c.type(1);
  const int64_t rank = q.rank(), L = q.sizes[static_cast<size_t>(rank - 2)],
                S = k.sizes[static_cast<size_t>(rank - 2)];
  const double scale =
      c.opt_float(6).value_or(1.0 / std::sqrt(static_cast<double>(q.sizes.back())));
  IntList perm(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  ValueRef kt = b.op("aten.permute.default", {c.tensor(1), perm});
  ValueRef scores = b.mul(b.op("aten.matmul.default", {c.tensor(0), kt}), scale);
  if (c.get_bool(5)) {
    ValueRef rows = b.op("aten.unsqueeze.default",
                         {b.op("aten.arange.start_step", {int64_t{0}, L, int64_t{1}}), int64_t{1}});
    ValueRef cols = b.op("aten.arange.start_step", {int64_t{0}, S, int64_t{1}});
    scores = b.op("aten.where.self", {b.op("aten.le.Tensor", {cols, rows}), scores, -INFINITY});
  }
  if (!c.is_none(3)) {
    scores = c.type(3).dtype == DType::Bool
                 ? b.op("aten.where.self", {c.tensor(3), scores, -INFINITY})
                 : b.add(scores, c.tensor(3));
  }
  ValueRef probs = b.op("aten._softmax.default", {scores, int64_t{-1}, false});
  // A mask may hide a whole row: its probabilities are 0 (PyTorch's), where softmax gives NaN.
  if (!c.is_none(3)) {
    ValueRef row_max = b.op("aten.amax.default", {scores, IntList{-1}, true});
    ValueRef hidden = b.op("aten.eq.Scalar", {row_max, -INFINITY});
    probs = b.op("aten.where.self", {hidden, 0.0, probs});
  }
  return {b.op("aten.matmul.default", {probs, c.tensor(2)})};
}

// var_mean / std share one f64 loop.
HostTensor moments(const RefContext& c, const std::optional<IntList>& dims, double correction,
                   size_t slot, bool want_var, bool take_sqrt) {
  const HostTensor x = c.tensor(0);
  const auto mask = reduced_mask(x.rank(), dims);
  const ReduceWalk walk = reduce_walk(x.sizes(), mask);
  HostTensor out = c.output(slot);
  const auto n = static_cast<size_t>(out.numel());
  std::vector<double> sum(n, 0.0), sq(n, 0.0);
  const double count = static_cast<double>(reduced_count(x.sizes(), mask));
  for (int64_t i = 0; i < x.numel(); ++i)
    sum[static_cast<size_t>(walk.out_index[static_cast<size_t>(i)])] += x.get(i);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto o = static_cast<size_t>(walk.out_index[static_cast<size_t>(i)]);
    const double d = x.get(i) - sum[o] / count;
    sq[o] += d * d;
  }
  for (size_t o = 0; o < n; ++o) {
    double v = want_var ? sq[o] / std::max(0.0, count - correction) : sum[o] / count;
    if (take_sqrt) v = std::sqrt(v);
    out.set(static_cast<int64_t>(o), v);
  }
  return out;
}

std::vector<TensorType> infer_moment(const InferContext& c, int outputs) {
  const TensorType x = c.type(0);
  op_check(is_floating(x.dtype), c.schema().op + " needs a floating input");
  const auto dims = c.opt_ints(1);
  const Shape shape = reduced_shape(x.sizes, reduced_mask(x.rank(), dims), c.get_bool(3));
  return std::vector<TensorType>(static_cast<size_t>(outputs),
                                 TensorType::contiguous(x.dtype, shape));
}

OpRow softmax_int(const std::string& overload, bool log) {
  return {overload,
          [](const InferContext& c) {
            const DType in = c.opt_dtype(2).value_or(c.type(0).dtype);
            op_check(is_floating(in), c.schema().op + " needs a floating input or dtype");
            auto dim = normalize_dim(c.get_int(1), c.type(0).rank());
            if (!dim) op_fail(dim.error().message());
            return one(in, c.type(0).sizes);
          },
          [log](const RefContext& c) {
            return std::vector{softmax_reference(c.tensor(0), c.get_int(1), c.out_types[0], log)};
          },
          [log](const DecomposeContext& c) {
            ValueRef x = c.b.cast(c.tensor(0), c.out_types[0].dtype);
            return std::vector{c.b.op(log ? "aten._log_softmax.default" : "aten._softmax.default",
                                      {x, c.mapped(1), false})};
          }};
}

}  // namespace

std::vector<OpRow> composite_ops() {
  std::vector<OpRow> rows;
  rows.push_back(softmax_int("aten.softmax.int", false));
  rows.push_back(softmax_int("aten.log_softmax.int", true));
  rows.push_back({"aten.gelu.default",
                  [](const InferContext& c) {
                    const std::string mode = c.get_str(1);
                    op_check(mode == "none" || mode == "tanh",
                             "gelu: approximate must be 'none' or 'tanh', got '" + mode + "'");
                    return same_float(c);
                  },
                  [](const RefContext& c) {
                    const bool tanh_form = c.get_str(1) == "tanh";
                    return std::vector{map_unary(
                        c, 0, DType::F64, [tanh_form](double x) { return gelu(x, tanh_form); },
                        [](int64_t v) { return v; })};
                  },
                  [](const DecomposeContext& c) {
                    return std::vector{decompose_gelu(c.b, c.tensor(0), c.get_str(1) == "tanh")};
                  }});
  rows.push_back({"aten.silu.default", same_float,
                  [](const RefContext& c) {
                    return std::vector{map_unary(
                        c, 0, DType::F64, [](double x) { return x / (1 + std::exp(-x)); },
                        [](int64_t v) { return v; })};
                  },
                  [](const DecomposeContext& c) {
                    const DType out = c.out_types[0].dtype;
                    ValueRef x = c.b.cast(c.tensor(0), compute_dtype(out));
                    return std::vector{c.b.cast(c.b.mul(x, c.b.unary("sigmoid", x)), out)};
                  }});
  rows.push_back({"aten.square.default",
                  [](const InferContext& c) {
                    return one(c.type(0).dtype == DType::Bool ? DType::I64 : c.type(0).dtype,
                               c.type(0).sizes);
                  },
                  [](const RefContext& c) {
                    return std::vector{map_unary(
                        c, 0, c.out_types[0].dtype, [](double x) { return x * x; },
                        [](int64_t v) { return wrap_mul(v, v); })};
                  },
                  [](const DecomposeContext& c) {
                    ValueRef x = c.b.cast(c.tensor(0), c.out_types[0].dtype);
                    return std::vector{c.b.mul(x, x)};
                  }});
  rows.push_back({"aten.dropout.default",
                  [](const InferContext& c) {
                    op_check(
                        !c.get_bool(2),
                        "dropout with train=true is random; kiln runs graphs in inference mode");
                    return one(c.type(0).dtype, c.type(0).sizes);
                  },
                  [](const RefContext& c) { return std::vector{c.tensor(0).contiguous()}; },
                  [](const DecomposeContext& c) {
                    return std::vector{c.b.op("aten.alias.default", {c.tensor(0)})};
                  }});
  rows.push_back({"aten.contiguous.default",
                  [](const InferContext& c) { return one(c.type(0).dtype, c.type(0).sizes); },
                  [](const RefContext& c) { return std::vector{c.tensor(0).contiguous()}; },
                  [](const DecomposeContext& c) {
                    return std::vector{c.b.op("aten.clone.default", {c.tensor(0)})};
                  }});

  rows.push_back(
      {"aten.nll_loss_forward.default", [](const InferContext& c) { return infer_nll(c, 3, true); },
       [](const RefContext& c) {
         const std::optional<HostTensor> w =
             c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
         NllResult r = nll_reference(c, c.tensor(0), c.tensor(1), w, c.get_int(3), c.get_int(4));
         return std::vector{r.loss, r.total_weight};
       },
       [](const DecomposeContext& c) {
         const std::optional<ValueRef> w = c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
         return decompose_nll(c.b, c.tensor(0), c.tensor(1), w, c.get_int(3), c.get_int(4), true);
       }});
  rows.push_back(
      {"aten.nll_loss.default", [](const InferContext& c) { return infer_nll(c, 3, false); },
       [](const RefContext& c) {
         const std::optional<HostTensor> w =
             c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
         return std::vector{
             nll_reference(c, c.tensor(0), c.tensor(1), w, c.get_int(3), c.get_int(4)).loss};
       },
       [](const DecomposeContext& c) {
         const std::optional<ValueRef> w = c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
         return decompose_nll(c.b, c.tensor(0), c.tensor(1), w, c.get_int(3), c.get_int(4), false);
       }});
  // cross_entropy_loss = nll_loss(log_softmax(x, class dim)), in f32 for half inputs.
  rows.push_back(
      {"aten.cross_entropy_loss.default",
       [](const InferContext& c) {
         check_cross_entropy(c);
         return infer_nll(c, 3, false);
       },
       [](const RefContext& c) {
         const HostTensor x = c.tensor(0);
         const TensorType logp_type = TensorType::contiguous(DType::F64, x.sizes());
         const HostTensor logp = softmax_reference(x, x.rank() == 2 ? 1 : 0, logp_type, true);
         const std::optional<HostTensor> w =
             c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
         return std::vector{
             nll_reference(c, logp, c.tensor(1), w, c.get_int(3), c.get_int(4)).loss};
       },
       [](const DecomposeContext& c) {
         const DType out = c.out_types[0].dtype;
         ValueRef x = c.b.cast(c.tensor(0), compute_dtype(out));
         ValueRef logp = c.b.op("aten._log_softmax.default",
                                {x, int64_t{c.type(0).rank() == 2 ? 1 : 0}, false});
         std::optional<ValueRef> w =
             c.is_none(2) ? std::nullopt : std::optional(c.b.cast(c.tensor(2), compute_dtype(out)));
         ValueRef loss =
             decompose_nll(c.b, logp, c.tensor(1), w, c.get_int(3), c.get_int(4), false)[0];
         return std::vector{c.b.cast(loss, out)};
       }});
  rows.push_back({"aten.scaled_dot_product_attention.default", infer_sdpa,
                  [](const RefContext& c) { return std::vector{sdpa_reference(c)}; },
                  decompose_sdpa});

  rows.push_back(
      {"aten.var_mean.correction", [](const InferContext& c) { return infer_moment(c, 2); },
       [](const RefContext& c) {
         const double correction = c.opt_float(2).value_or(1.0);
         return std::vector{moments(c, c.opt_ints(1), correction, 0, true, false),
                            moments(c, c.opt_ints(1), correction, 1, false, false)};
       },
       [](const DecomposeContext& c) {
         ValueRef var = c.b.op("aten.var.correction", {c.tensor(0), c.mapped(1)},
                               {{"correction", c.mapped(2)}, {"keepdim", c.get_bool(3)}});
         ValueRef mean = c.b.op("aten.mean.dim", {c.tensor(0), c.mapped(1), c.get_bool(3)});
         return std::vector{var, mean};
       }});
  rows.push_back(
      {"aten.std.correction", [](const InferContext& c) { return infer_moment(c, 1); },
       [](const RefContext& c) {
         return std::vector{moments(c, c.opt_ints(1), c.opt_float(2).value_or(1.0), 0, true, true)};
       },
       [](const DecomposeContext& c) {
         ValueRef var = c.b.op("aten.var.correction", {c.tensor(0), c.mapped(1)},
                               {{"correction", c.mapped(2)}, {"keepdim", c.get_bool(3)}});
         return std::vector{c.b.unary("sqrt", var)};
       }});
  // logsumexp = m + log(sum(exp(x - m))) with m the max (0 where the max is infinite).
  rows.push_back(
      {"aten.logsumexp.default",
       [](const InferContext& c) {
         const TensorType x = c.type(0);
         const Shape shape =
             reduced_shape(x.sizes, reduced_mask(x.rank(), c.get_ints(1)), c.get_bool(2));
         return one(to_float(x.dtype), shape);
       },
       [](const RefContext& c) {
         const HostTensor x = c.tensor(0);
         const auto mask = reduced_mask(x.rank(), c.get_ints(1));
         const ReduceWalk walk = reduce_walk(x.sizes(), mask);
         HostTensor out = c.output(0);
         const auto n = static_cast<size_t>(out.numel());
         std::vector<double> mx(n, -INFINITY), sum(n, 0.0);
         for (int64_t i = 0; i < x.numel(); ++i) {
           auto& m = mx[static_cast<size_t>(walk.out_index[static_cast<size_t>(i)])];
           m = std::max(m, x.get(i));
         }
         for (int64_t i = 0; i < x.numel(); ++i) {
           const auto o = static_cast<size_t>(walk.out_index[static_cast<size_t>(i)]);
           sum[o] += std::exp(x.get(i) - (std::isinf(mx[o]) ? 0.0 : mx[o]));
         }
         for (size_t o = 0; o < n; ++o) {
           out.set(static_cast<int64_t>(o), std::log(sum[o]) + (std::isinf(mx[o]) ? 0.0 : mx[o]));
         }
         return std::vector{out};
       },
       [](const DecomposeContext& c) {
         ValueRef x = c.b.cast(c.tensor(0), c.out_types[0].dtype);
         const IntList dims = c.get_ints(1);
         ValueRef m = c.b.amax(x, dims, true);
         ValueRef safe = c.b.op("aten.where.self", {c.b.unary("isinf", m), 0.0, m});
         ValueRef s = c.b.sum(c.b.unary("exp", c.b.sub(x, safe)), dims, true);
         ValueRef result = c.b.add(c.b.unary("log", s), safe);
         if (!c.get_bool(2))
           result = c.b.op("aten.view.default", {result, IntList(c.out_types[0].sizes)});
         return std::vector{result};
       }});
  // stack = unsqueeze each, then cat.
  rows.push_back(
      {"aten.stack.default",
       [](const InferContext& c) {
         const auto types = c.list_types(0);
         op_check(!types.empty(), "stack expects a non-empty list of tensors");
         const Shape& first = types[0]->sizes;
         DType dtype = types[0]->dtype;
         for (const auto& t : types) {
           op_check(t->sizes == first, "stack expects tensors of equal shape, got " +
                                           shape_text(first) + " and " + shape_text(t->sizes));
           dtype = promote_types(dtype, t->dtype);
         }
         const auto rank = static_cast<int64_t>(first.size()) + 1;
         int64_t dim = c.get_int(1);
         op_check(dim >= -rank && dim < rank,
                  "stack: dim " + std::to_string(dim) + " out of range");
         if (dim < 0) dim += rank;
         Shape out = first;
         out.insert(out.begin() + dim, static_cast<int64_t>(types.size()));
         return one(dtype, out);
       },
       [](const RefContext& c) {
         const auto parts = c.tensors(0);
         HostTensor out = c.output(0);
         const auto rank = out.rank();
         int64_t dim = c.get_int(1);
         if (dim < 0) dim += rank;
         const int64_t count = static_cast<int64_t>(parts.size());
         const int64_t inner =
             parts[0]->numel() /
             std::max<int64_t>(shape_numel(Shape(out.sizes().begin(), out.sizes().begin() + dim)),
                               1);
         const bool fp = is_floating(out.dtype());
         for (int64_t i = 0; i < out.numel(); ++i) {
           const int64_t outer = i / (count * inner), which = (i / inner) % count,
                         within = i % inner;
           const HostTensor& src = *parts[static_cast<size_t>(which)];
           if (fp)
             out.set(i, src.get(outer * inner + within));
           else
             out.set_int(i, src.get_int(outer * inner + within));
         }
         return std::vector{out};
       },
       [](const DecomposeContext& c) {
         const auto list = std::get<TensorList>(c.mapped(0));
         const int64_t dim = c.get_int(1) < 0 ? c.get_int(1) + c.out_types[0].rank() : c.get_int(1);
         TensorList parts;
         for (const auto& item : list.items)
           parts.items.push_back(c.b.op("aten.unsqueeze.default", {*item, dim}));
         return std::vector{c.b.op("aten.cat.default", {parts, dim})};
       }});
  return rows;
}

}  // namespace kiln
