// Normalizations (inference): layer norm, batch norm, group norm. Each has a direct f64
// reference and a decomposition into mean, var, rsqrt and elementwise ops. Half inputs
// normalize in f32, as PyTorch does.
#include <cmath>

#include "core/graph/builder.h"
#include "core/ops/norm_stats.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"

namespace kiln {
namespace {

// Normalizes groups of `group` consecutive elements; `scale_shift(i)` gives the affine
// index of element i (or -1 for none). Returns (out, mean, rstd) with per-group stats.
struct NormResult {
  HostTensor out, mean, rstd;
};

template <class AffineIndex>
NormResult normalize_groups(const HostTensor& x, int64_t group, double eps,
                            const std::optional<HostTensor>& weight,
                            const std::optional<HostTensor>& bias, AffineIndex affine,
                            const std::vector<TensorType>& types) {
  NormResult r{HostTensor::zeros(types[0].dtype, types[0].sizes),
               HostTensor::zeros(types[1].dtype, types[1].sizes),
               HostTensor::zeros(types[2].dtype, types[2].sizes)};
  const int64_t groups = group == 0 ? 0 : x.numel() / group;
  for (int64_t g = 0; g < groups; ++g) {
    double sum = 0;
    for (int64_t i = 0; i < group; ++i) sum += x.get(g * group + i);
    const double mean = sum / static_cast<double>(group);
    double sq = 0;
    for (int64_t i = 0; i < group; ++i) {
      const double d = x.get(g * group + i) - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(group) + eps);
    r.mean.set(g, mean);
    r.rstd.set(g, rstd);
    for (int64_t i = 0; i < group; ++i) {
      const int64_t e = g * group + i;
      double v = (x.get(e) - mean) * rstd;
      const int64_t a = affine(e);
      if (weight) v *= weight->get(a);
      if (bias) v += bias->get(a);
      r.out.set(e, v);
    }
  }
  return r;
}

std::optional<HostTensor> optional_tensor(const RefContext& c, int i) {
  return c.is_none(i) ? std::nullopt : std::optional(c.tensor(i));
}

// ---- layer norm ------------------------------------------------------------------------

std::vector<TensorType> infer_layer_norm(const InferContext& c) {
  const TensorType x = c.type(0);
  const IntList shape = c.get_ints(1);
  op_check(is_floating(x.dtype), "layer_norm needs a floating input");
  op_check(
      !shape.empty() && shape.size() <= x.sizes.size() &&
          Shape(x.sizes.end() - static_cast<std::ptrdiff_t>(shape.size()), x.sizes.end()) == shape,
      "layer_norm: normalized_shape " + shape_text(shape) + " does not match the end of input " +
          shape_text(x.sizes));
  for (int i : {2, 3}) {
    if (!c.is_none(i))
      op_check(c.type(i).sizes == shape,
               "layer_norm: weight and bias must have shape " + shape_text(shape));
  }
  Shape stats = x.sizes;
  for (size_t k = 0; k < shape.size(); ++k) stats[stats.size() - 1 - k] = 1;
  return {TensorType::contiguous(x.dtype, x.sizes),
          TensorType::contiguous(stats_dtype(x.dtype), stats),
          TensorType::contiguous(stats_dtype(x.dtype), stats)};
}

std::vector<HostTensor> layer_norm_reference(const RefContext& c,
                                             const std::vector<TensorType>& types) {
  const int64_t group = shape_numel(c.get_ints(1));
  NormResult r = normalize_groups(
      c.tensor(0), group, c.get_float(4), optional_tensor(c, 2), optional_tensor(c, 3),
      [group](int64_t e) { return e % group; }, types);
  return {r.out, r.mean, r.rstd};
}

std::vector<ValueRef> decompose_layer_norm(const DecomposeContext& c) {
  GraphBuilder& b = c.b;
  const TensorType x = c.type(0);
  IntList dims;
  for (size_t k = 0; k < c.get_ints(1).size(); ++k)
    dims.push_back(x.rank() - 1 - static_cast<int64_t>(k));
  ValueRef xs = b.cast(c.tensor(0), stats_dtype(x.dtype));
  ValueRef mean = b.op("aten.mean.dim", {xs, dims, true});
  ValueRef var =
      b.op("aten.var.correction", {xs, dims}, {{"correction", int64_t{0}}, {"keepdim", true}});
  ValueRef rstd = b.unary("rsqrt", b.add(var, c.get_float(4)));
  ValueRef out = b.mul(b.sub(xs, mean), rstd);
  if (!c.is_none(2)) out = b.mul(out, c.tensor(2));
  if (!c.is_none(3)) out = b.add(out, c.tensor(3));
  return {b.cast(out, x.dtype), mean, rstd};
}

// ---- batch norm ------------------------------------------------------------------------

void check_channels(const InferContext& c, const std::vector<int>& args) {
  const TensorType x = c.type(0);
  op_check(x.rank() >= 2,
           c.schema().op + ": input must have a channel dim (rank ≥ 2), got " + x.to_string());
  op_check(is_floating(x.dtype), c.schema().op + " needs a floating input");
  for (int i : args) {
    if (!c.is_none(i)) {
      op_check(c.type(i).sizes == Shape{x.sizes[1]}, c.schema().op + ": '" + c.name(i) +
                                                         "' must have one entry per channel (" +
                                                         std::to_string(x.sizes[1]) + ")");
    }
  }
}

// out = (x - mean[c]) * rstd[c] * w[c] + b[c], channel dim 1.
HostTensor batch_norm_apply(const HostTensor& x, const TensorType& out_type,
                            const std::vector<double>& mean, const std::vector<double>& rstd,
                            const std::optional<HostTensor>& w,
                            const std::optional<HostTensor>& b) {
  HostTensor out = HostTensor::zeros(out_type.dtype, out_type.sizes);
  const int64_t channels = x.sizes()[1];
  const int64_t inner = shape_numel(Shape(x.sizes().begin() + 2, x.sizes().end()));
  for (int64_t e = 0; e < x.numel(); ++e) {
    const auto ch = static_cast<size_t>((e / inner) % channels);
    double v = (x.get(e) - mean[ch]) * rstd[ch];
    if (w) v *= w->get(static_cast<int64_t>(ch));
    if (b) v += b->get(static_cast<int64_t>(ch));
    out.set(e, v);
  }
  return out;
}

// Batch statistics per channel (biased variance), for training-mode normalization.
std::pair<std::vector<double>, std::vector<double>> batch_stats(const HostTensor& x, double eps) {
  const int64_t channels = x.sizes()[1];
  const int64_t inner = shape_numel(Shape(x.sizes().begin() + 2, x.sizes().end()));
  const double count = static_cast<double>(x.numel() / std::max<int64_t>(channels, 1));
  std::vector<double> mean(static_cast<size_t>(channels), 0.0),
      rstd(static_cast<size_t>(channels), 0.0);
  for (int64_t e = 0; e < x.numel(); ++e)
    mean[static_cast<size_t>((e / inner) % channels)] += x.get(e);
  for (auto& m : mean) m /= count;
  for (int64_t e = 0; e < x.numel(); ++e) {
    const auto ch = static_cast<size_t>((e / inner) % channels);
    const double d = x.get(e) - mean[ch];
    rstd[ch] += d * d;
  }
  for (auto& r : rstd) r = 1.0 / std::sqrt(r / count + eps);
  return {mean, rstd};
}

// Reshapes a per-channel vector to broadcast against an input of `rank` (channel dim 1).
ValueRef per_channel(GraphBuilder& b, ValueRef v, int64_t rank) {
  IntList shape(static_cast<size_t>(rank), 1);
  shape[1] = -1;
  return b.op("aten.view.default", {v, shape});
}

ValueRef batch_norm_decomposed(GraphBuilder& b, ValueRef x0, ValueRef mean, ValueRef rstd,
                               std::optional<ValueRef> w, std::optional<ValueRef> bias) {
  const TensorType x = b.type(x0);
  ValueRef xs = b.cast(x0, stats_dtype(x.dtype));
  ValueRef out = b.mul(b.sub(xs, per_channel(b, mean, x.rank())), per_channel(b, rstd, x.rank()));
  if (w) out = b.mul(out, per_channel(b, *w, x.rank()));
  if (bias) out = b.add(out, per_channel(b, *bias, x.rank()));
  return b.cast(out, x.dtype);
}

std::vector<TensorType> infer_bn_inference(const InferContext& c) {
  const TensorType x = c.type(0);
  return {TensorType::contiguous(x.dtype, x.sizes),
          TensorType::contiguous(stats_dtype(x.dtype), {0}),
          TensorType::contiguous(stats_dtype(x.dtype), {0})};
}

std::vector<TensorType> infer_bn_training(const InferContext& c) {
  const TensorType x = c.type(0);
  return {TensorType::contiguous(x.dtype, x.sizes),
          TensorType::contiguous(stats_dtype(x.dtype), {x.sizes[1]}),
          TensorType::contiguous(stats_dtype(x.dtype), {x.sizes[1]})};
}

// Inference with running stats: args (input, weight, bias, running_mean, running_var, ..., eps).
std::vector<HostTensor> bn_inference_reference(const RefContext& c, int mean_arg, int var_arg,
                                               int eps_arg) {
  const HostTensor x = c.tensor(0), rm = c.tensor(mean_arg), rv = c.tensor(var_arg);
  const double eps = c.get_float(eps_arg);
  std::vector<double> mean, rstd;
  for (int64_t ch = 0; ch < rm.numel(); ++ch) {
    mean.push_back(rm.get(ch));
    rstd.push_back(1.0 / std::sqrt(rv.get(ch) + eps));
  }
  const DType stats = stats_dtype(x.dtype());
  return {
      batch_norm_apply(x, c.out_types[0], mean, rstd, optional_tensor(c, 1), optional_tensor(c, 2)),
      HostTensor::zeros(stats, {0}), HostTensor::zeros(stats, {0})};
}

std::vector<ValueRef> decompose_bn_inference(const DecomposeContext& c, int mean_arg, int var_arg,
                                             int eps_arg) {
  GraphBuilder& b = c.b;
  const DType stats = stats_dtype(c.type(0).dtype);
  ValueRef mean = b.cast(c.tensor(mean_arg), stats);
  ValueRef rstd = b.unary("rsqrt", b.add(b.cast(c.tensor(var_arg), stats), c.get_float(eps_arg)));
  std::optional<ValueRef> w = c.is_none(1) ? std::nullopt : std::optional(c.tensor(1));
  std::optional<ValueRef> bias = c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
  ValueRef out = batch_norm_decomposed(b, c.tensor(0), mean, rstd, w, bias);
  ValueRef empty = b.op("aten.full.default", {IntList{0}, 0.0}, {{"dtype", stats}});
  return {out, empty, b.op("aten.full.default", {IntList{0}, 0.0}, {{"dtype", stats}})};
}

std::vector<ValueRef> decompose_bn_training(const DecomposeContext& c, int eps_arg) {
  GraphBuilder& b = c.b;
  const TensorType x = c.type(0);
  IntList dims{0};
  for (int64_t d = 2; d < x.rank(); ++d) dims.push_back(d);
  ValueRef xs = b.cast(c.tensor(0), stats_dtype(x.dtype));
  ValueRef mean = b.op("aten.mean.dim", {xs, dims, false});
  ValueRef var = b.op("aten.var.correction", {xs, dims}, {{"correction", int64_t{0}}});
  ValueRef rstd = b.unary("rsqrt", b.add(var, c.get_float(eps_arg)));
  std::optional<ValueRef> w = c.is_none(1) ? std::nullopt : std::optional(c.tensor(1));
  std::optional<ValueRef> bias = c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
  return {batch_norm_decomposed(b, c.tensor(0), mean, rstd, w, bias), mean, rstd};
}

std::vector<HostTensor> bn_training_reference(const RefContext& c, int eps_arg) {
  const HostTensor x = c.tensor(0);
  const auto [mean, rstd] = batch_stats(x, c.get_float(eps_arg));
  const DType stats = stats_dtype(x.dtype());
  HostTensor m = HostTensor::zeros(stats, {x.sizes()[1]}),
             r = HostTensor::zeros(stats, {x.sizes()[1]});
  for (size_t ch = 0; ch < mean.size(); ++ch) {
    m.set(static_cast<int64_t>(ch), mean[ch]);
    r.set(static_cast<int64_t>(ch), rstd[ch]);
  }
  return {
      batch_norm_apply(x, c.out_types[0], mean, rstd, optional_tensor(c, 1), optional_tensor(c, 2)),
      m, r};
}

// ---- group norm ------------------------------------------------------------------------

std::vector<TensorType> infer_group_norm(const InferContext& c) {
  const TensorType x = c.type(0);
  const int64_t n = c.get_int(3), ch = c.get_int(4), hw = c.get_int(5), groups = c.get_int(6);
  op_check(is_floating(x.dtype), "native_group_norm needs a floating input");
  op_check(x.rank() >= 2 && x.sizes[0] == n && x.sizes[1] == ch && x.numel() == n * ch * hw,
           "native_group_norm: N, C, HxW (" + std::to_string(n) + ", " + std::to_string(ch) + ", " +
               std::to_string(hw) + ") do not match input " + shape_text(x.sizes));
  op_check(groups > 0 && ch % groups == 0, "native_group_norm: C (" + std::to_string(ch) +
                                               ") must divide into " + std::to_string(groups) +
                                               " groups");
  for (int i : {1, 2}) {
    if (!c.is_none(i))
      op_check(c.type(i).sizes == Shape{ch},
               "native_group_norm: weight and bias need one entry per channel");
  }
  return {TensorType::contiguous(x.dtype, x.sizes),
          TensorType::contiguous(stats_dtype(x.dtype), {n, groups}),
          TensorType::contiguous(stats_dtype(x.dtype), {n, groups})};
}

std::vector<ValueRef> decompose_group_norm(const DecomposeContext& c) {
  GraphBuilder& b = c.b;
  const TensorType x = c.type(0);
  const int64_t n = c.get_int(3), groups = c.get_int(6);
  ValueRef xs = b.cast(c.tensor(0), stats_dtype(x.dtype));
  ValueRef grouped = b.op("aten.view.default", {xs, IntList{n, groups, -1}});
  ValueRef mean = b.op("aten.mean.dim", {grouped, IntList{2}, true});
  ValueRef var = b.op("aten.var.correction", {grouped, IntList{2}},
                      {{"correction", int64_t{0}}, {"keepdim", true}});
  ValueRef rstd = b.unary("rsqrt", b.add(var, c.get_float(7)));
  ValueRef out = b.op("aten.view.default", {b.mul(b.sub(grouped, mean), rstd), IntList(x.sizes)});
  if (!c.is_none(1)) out = b.mul(out, per_channel(b, c.tensor(1), x.rank()));
  if (!c.is_none(2)) out = b.add(out, per_channel(b, c.tensor(2), x.rank()));
  return {b.cast(out, x.dtype), b.op("aten.view.default", {mean, IntList{n, groups}}),
          b.op("aten.view.default", {rstd, IntList{n, groups}})};
}

// _native_batch_norm_legit_functional(input, weight, bias, running_mean, running_var,
// training, momentum, eps) -> (out, save_mean, save_rstd, running_mean_out, running_var_out):
// what a training graph's batch norm exports to. Training: batch statistics, and the running
// statistics moved toward them by `momentum` (the variance unbiased, as PyTorch keeps it);
// otherwise the running statistics normalize and pass through.
std::vector<TensorType> infer_bn_functional(const InferContext& c) {
  check_channels(c, {1, 2, 3, 4});
  std::vector<TensorType> t = c.get_bool(5) ? infer_bn_training(c) : infer_bn_inference(c);
  t.push_back(TensorType::contiguous(c.type(3).dtype, c.type(3).sizes));
  t.push_back(TensorType::contiguous(c.type(4).dtype, c.type(4).sizes));
  return t;
}

std::vector<HostTensor> bn_functional_reference(const RefContext& c) {
  const HostTensor rm = c.tensor(3), rv = c.tensor(4);
  if (!c.get_bool(5)) {
    std::vector<HostTensor> out = bn_inference_reference(c, 3, 4, 7);
    out.push_back(rm.to(rm.dtype()));
    out.push_back(rv.to(rv.dtype()));
    return out;
  }
  const HostTensor x = c.tensor(0);
  const double momentum = c.get_float(6);
  std::vector<HostTensor> out = bn_training_reference(c, 7);
  // The batch statistics again in f64 (eps 0 gives rstd = 1/sqrt(var)): the running
  // variance takes the unbiased variance, n/(n-1) of the batch's (NaN for one value, as
  // PyTorch's).
  const auto [mean, rstd] = batch_stats(x, 0.0);
  const double n = static_cast<double>(x.numel() / std::max<int64_t>(x.sizes()[1], 1));
  HostTensor new_mean = c.output(3), new_var = c.output(4);
  for (int64_t ch = 0; ch < rm.numel(); ++ch) {
    const double r = rstd[static_cast<size_t>(ch)];
    const double unbiased = 1 / (r * r) * n / (n - 1);
    new_mean.set(ch, (1 - momentum) * rm.get(ch) + momentum * mean[static_cast<size_t>(ch)]);
    new_var.set(ch, (1 - momentum) * rv.get(ch) + momentum * unbiased);
  }
  out.push_back(new_mean);
  out.push_back(new_var);
  return out;
}

std::vector<ValueRef> decompose_bn_functional(const DecomposeContext& c) {
  GraphBuilder& b = c.b;
  const ValueRef rm = c.tensor(3), rv = c.tensor(4);
  if (!c.get_bool(5)) {
    std::vector<ValueRef> out = decompose_bn_inference(c, 3, 4, 7);
    out.push_back(b.op("aten.clone.default", {rm}));
    out.push_back(b.op("aten.clone.default", {rv}));
    return out;
  }
  const TensorType x = c.type(0);
  std::vector<ValueRef> out = decompose_bn_training(c, 7);
  IntList dims{0};
  for (int64_t d = 2; d < x.rank(); ++d) dims.push_back(d);
  const ValueRef unbiased =
      b.op("aten.var.correction", {b.cast(c.tensor(0), stats_dtype(x.dtype)), dims},
           {{"correction", int64_t{1}}});
  const double m = c.get_float(6);
  const auto moved = [&](ValueRef running, ValueRef batch) {
    const DType d = c.type(running == rm ? 3 : 4).dtype;
    return b.cast(b.add(b.mul(b.cast(running, stats_dtype(x.dtype)), 1 - m), b.mul(batch, m)), d);
  };
  out.push_back(moved(rm, out[1]));
  out.push_back(moved(rv, unbiased));
  return out;
}

}  // namespace

std::vector<OpRow> norm_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.native_layer_norm.default", infer_layer_norm,
                  [](const RefContext& c) {
                    return layer_norm_reference(
                        c, std::vector<TensorType>(c.out_types.begin(), c.out_types.end()));
                  },
                  decompose_layer_norm});
  rows.push_back({"aten.layer_norm.default",
                  [](const InferContext& c) { return std::vector{infer_layer_norm(c)[0]}; },
                  [](const RefContext& c) {
                    std::vector<TensorType> types{c.out_types[0]};
                    const TensorType stats = TensorType::contiguous(
                        DType::F64,
                        {c.tensor(0).numel() / std::max<int64_t>(shape_numel(c.get_ints(1)), 1)});
                    types.push_back(stats);
                    types.push_back(stats);
                    return std::vector{layer_norm_reference(c, types)[0]};
                  },
                  [](const DecomposeContext& c) {
                    return std::vector{
                        c.b.op("aten.native_layer_norm.default",
                               {c.tensor(0), c.mapped(1), c.mapped(2), c.mapped(3), c.mapped(4)})};
                  }});
  rows.push_back({"aten._native_batch_norm_legit_no_training.default",
                  [](const InferContext& c) {
                    check_channels(c, {1, 2, 3, 4});
                    return infer_bn_inference(c);
                  },
                  [](const RefContext& c) { return bn_inference_reference(c, 3, 4, 6); },
                  [](const DecomposeContext& c) { return decompose_bn_inference(c, 3, 4, 6); }});
  rows.push_back(
      {"aten._native_batch_norm_legit.default",
       [](const InferContext& c) {
         check_channels(c, {1, 2, 3, 4});
         op_check(
             !c.get_bool(5),
             "_native_batch_norm_legit with training=true updates running_mean and running_var "
             "in place; kiln runs functional inference graphs");
         return infer_bn_inference(c);
       },
       [](const RefContext& c) { return bn_inference_reference(c, 3, 4, 7); },
       [](const DecomposeContext& c) { return decompose_bn_inference(c, 3, 4, 7); }});
  rows.push_back({"aten._native_batch_norm_legit_functional.default", infer_bn_functional,
                  bn_functional_reference, decompose_bn_functional});
  rows.push_back(
      {"aten._native_batch_norm_legit.no_stats",
       [](const InferContext& c) {
         check_channels(c, {1, 2});
         op_check(
             c.get_bool(3),
             "_native_batch_norm_legit.no_stats needs training=true (there are no running stats)");
         return infer_bn_training(c);
       },
       [](const RefContext& c) { return bn_training_reference(c, 5); },
       [](const DecomposeContext& c) { return decompose_bn_training(c, 5); }});
  rows.push_back({"aten.batch_norm.default",
                  [](const InferContext& c) {
                    check_channels(c, {1, 2, 3, 4});
                    const bool training = c.get_bool(5);
                    op_check(!training || (c.is_none(3) && c.is_none(4)),
                             "batch_norm with training=true and running stats updates them in "
                             "place; kiln runs functional inference graphs");
                    op_check(training || (!c.is_none(3) && !c.is_none(4)),
                             "batch_norm in inference needs running_mean and running_var");
                    return std::vector{TensorType::contiguous(c.type(0).dtype, c.type(0).sizes)};
                  },
                  [](const RefContext& c) {
                    return std::vector{c.get_bool(5) ? bn_training_reference(c, 7)[0]
                                                     : bn_inference_reference(c, 3, 4, 7)[0]};
                  },
                  [](const DecomposeContext& c) {
                    if (c.get_bool(5)) {
                      return std::vector{c.b.op(
                          "aten._native_batch_norm_legit.no_stats",
                          {c.tensor(0), c.mapped(1), c.mapped(2), true, c.mapped(6), c.mapped(7)})};
                    }
                    return std::vector{c.b.op("aten._native_batch_norm_legit_no_training.default",
                                              {c.tensor(0), c.mapped(1), c.mapped(2), c.tensor(3),
                                               c.tensor(4), c.mapped(6), c.mapped(7)})};
                  }});
  rows.push_back({"aten.native_group_norm.default", infer_group_norm,
                  [](const RefContext& c) {
                    const HostTensor x = c.tensor(0);
                    const int64_t ch = c.get_int(4), hw = c.get_int(5), groups = c.get_int(6);
                    const int64_t group = ch / groups * hw;
                    NormResult r = normalize_groups(
                        x, group, c.get_float(7), optional_tensor(c, 1), optional_tensor(c, 2),
                        [ch, hw](int64_t e) { return (e / hw) % ch; },
                        std::vector<TensorType>(c.out_types.begin(), c.out_types.end()));
                    return std::vector{r.out, r.mean, r.rstd};
                  },
                  decompose_group_norm});
  return rows;
}

}  // namespace kiln
