// Reductions. sum, prod, amax, amin, argmax, argmin and any are primitive; the rest
// (mean, var, max.dim, softmax, ...) decompose into them.
#include <cmath>
#include <limits>

#include "core/graph/builder.h"
#include "core/ops/elementwise.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/promotion.h"
#include "core/ops/reduce_util.h"

namespace kiln {
namespace {

enum class Reduce { Sum, Prod, Max, Min, Any, ArgMax, ArgMin };

// The reference loop for every primitive reduction: f64 accumulation for floats, wrapping
// int64 for integers; NaN wins max/min; argmax/argmin take the first extreme.
HostTensor reduce(const HostTensor& x, const std::vector<bool>& mask, const TensorType& out_type,
                  Reduce kind) {
  HostTensor out = HostTensor::zeros(out_type.dtype, out_type.sizes);
  const int64_t n = out.numel();
  const ReduceWalk walk = reduce_walk(x.sizes(), mask);
  const bool fp = is_floating(x.dtype()) || kind == Reduce::Any;
  std::vector<double> acc(static_cast<size_t>(n), kind == Reduce::Prod ? 1.0 : 0.0);
  std::vector<int64_t> iacc(static_cast<size_t>(n), kind == Reduce::Prod ? 1 : 0);
  std::vector<int64_t> where(static_cast<size_t>(n),
                             -1);  // arg index, or -1 before the first element
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto o = static_cast<size_t>(walk.out_index[static_cast<size_t>(i)]);
    const int64_t inner = walk.inner_index[static_cast<size_t>(i)];
    const bool first = where[o] < 0;
    switch (kind) {
      case Reduce::Sum:
        if (fp)
          acc[o] += x.get(i);
        else
          iacc[o] = wrap_add(iacc[o], x.get_int(i));
        break;
      case Reduce::Prod:
        if (fp)
          acc[o] *= x.get(i);
        else
          iacc[o] = wrap_mul(iacc[o], x.get_int(i));
        break;
      case Reduce::Any:
        acc[o] = (acc[o] != 0 || x.get(i) != 0) ? 1.0 : 0.0;
        break;
      case Reduce::Max:
      case Reduce::Min:
      case Reduce::ArgMax:
      case Reduce::ArgMin: {
        const bool want_max = kind == Reduce::Max || kind == Reduce::ArgMax;
        bool take = first;
        if (fp) {
          const double v = x.get(i);
          const bool current_nan = !first && std::isnan(acc[o]);
          if (!first && !current_nan) take = std::isnan(v) || (want_max ? v > acc[o] : v < acc[o]);
          if (take) acc[o] = v;
        } else {
          const int64_t v = x.get_int(i);
          if (!first) take = want_max ? v > iacc[o] : v < iacc[o];
          if (take) iacc[o] = v;
        }
        if (take) where[o] = inner;
        break;
      }
    }
    if (where[o] < 0) where[o] = inner;
  }
  for (int64_t o = 0; o < n; ++o) {
    const auto k = static_cast<size_t>(o);
    if (kind == Reduce::ArgMax || kind == Reduce::ArgMin)
      out.set_int(o, where[k]);
    else if (fp)
      out.set(o, acc[k]);
    else
      out.set_int(o, iacc[k]);
  }
  return out;
}

DType sum_dtype(DType in, std::optional<DType> requested) {
  if (requested) return *requested;
  return is_floating(in) || is_complex(in) ? in : DType::I64;
}

// A primitive reduction row. `dims_arg` < 0: all dims. `single_dim`: the arg is an int?.
OpRow reduction_row(const std::string& overload, Reduce kind, int dims_arg, int keepdim_arg,
                    int dtype_arg) {
  auto plan = [=](const ArgView& c, const Shape& in) {
    std::optional<IntList> dims;
    if (dims_arg >= 0 && !c.is_none(dims_arg)) dims = c.get_ints(dims_arg);
    const bool keepdim = keepdim_arg >= 0 && c.get_bool(keepdim_arg);
    const std::vector<bool> mask = reduced_mask(static_cast<int64_t>(in.size()), dims);
    return std::pair{mask, reduced_shape(in, mask, keepdim)};
  };
  return {
      overload,
      [=](const InferContext& c) {
        const TensorType x = c.type(0);
        const auto [mask, shape] = plan(c, x.sizes);
        const bool needs_elements = kind == Reduce::Max || kind == Reduce::Min ||
                                    kind == Reduce::ArgMax || kind == Reduce::ArgMin;
        op_check(!needs_elements || reduced_count(x.sizes, mask) > 0,
                 c.schema().op + ": cannot reduce over a dimension of size 0 (no identity)");
        const std::optional<DType> requested =
            dtype_arg >= 0 ? c.opt_dtype(dtype_arg) : std::nullopt;
        DType out = x.dtype;
        if (kind == Reduce::Sum || kind == Reduce::Prod) out = sum_dtype(x.dtype, requested);
        if (kind == Reduce::Any) out = DType::Bool;
        if (kind == Reduce::ArgMax || kind == Reduce::ArgMin) out = DType::I64;
        return one(out, shape);
      },
      [=](const RefContext& c) {
        HostTensor x = c.tensor(0);
        const auto [mask, shape] = plan(c, x.sizes());
        // With a requested dtype, PyTorch casts the input first.
        if ((kind == Reduce::Sum || kind == Reduce::Prod) && x.dtype() != c.out_types[0].dtype) {
          x = x.to(c.out_types[0].dtype);
        }
        return std::vector{reduce(x, mask, c.out_types[0], kind)};
      }};
}

int64_t numel_of_dims(const TensorType& t, const std::optional<IntList>& dims) {
  return reduced_count(t.sizes, reduced_mask(t.rank(), dims));
}

// mean(x, dims) = sum(x, dims) / N, in the result dtype.
std::vector<ValueRef> decompose_mean(const DecomposeContext& c, const std::optional<IntList>& dims,
                                     bool keepdim, std::optional<DType> dtype) {
  const TensorType x = c.type(0);
  const DType out = c.out_types[0].dtype;
  ValueRef s = c.b.op("aten.sum.dim_IntList",
                      {c.tensor(0), dims ? ArgValue{*dims} : ArgValue{None{}}, keepdim},
                      {{"dtype", dtype ? ArgValue{*dtype} : ArgValue{out}}});
  return {c.b.div(s, numel_of_dims(x, dims))};
}

std::vector<TensorType> infer_mean(const InferContext& c, int dims_arg, int keepdim_arg,
                                   int dtype_arg) {
  const TensorType x = c.type(0);
  const std::optional<DType> requested = c.opt_dtype(dtype_arg);
  const DType out = requested.value_or(x.dtype);
  op_check(is_floating(out) || is_complex(out), c.schema().op +
                                                    ": mean needs a floating input or dtype, got " +
                                                    std::string(dtype_name(out)));
  std::optional<IntList> dims;
  if (dims_arg >= 0 && !c.is_none(dims_arg)) dims = c.get_ints(dims_arg);
  const bool keepdim = keepdim_arg >= 0 && c.get_bool(keepdim_arg);
  return one(out, reduced_shape(x.sizes, reduced_mask(x.rank(), dims), keepdim));
}

HostTensor mean_ref(const RefContext& c, const std::optional<IntList>& dims) {
  const HostTensor x = c.tensor(0).to(DType::F64);
  const auto mask = reduced_mask(x.rank(), dims);
  HostTensor sum =
      reduce(x, mask, TensorType::contiguous(DType::F64, c.out_types[0].sizes), Reduce::Sum);
  const double n = static_cast<double>(reduced_count(x.sizes(), mask));
  HostTensor out = c.output(0);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, sum.get(i) / n);
  return out;
}

// var with correction: sum((x - mean)^2) / (N - correction), two passes in f64.
HostTensor var_ref(const RefContext& c, const std::optional<IntList>& dims, double correction,
                   size_t out_slot) {
  const HostTensor x = c.tensor(0);
  const auto mask = reduced_mask(x.rank(), dims);
  const ReduceWalk walk = reduce_walk(x.sizes(), mask);
  HostTensor out = c.output(out_slot);
  const auto n = static_cast<size_t>(out.numel());
  std::vector<double> sum(n, 0.0), sq(n, 0.0);
  for (int64_t i = 0; i < x.numel(); ++i)
    sum[static_cast<size_t>(walk.out_index[static_cast<size_t>(i)])] += x.get(i);
  const double count = static_cast<double>(reduced_count(x.sizes(), mask));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto o = static_cast<size_t>(walk.out_index[static_cast<size_t>(i)]);
    const double d = x.get(i) - sum[o] / count;
    sq[o] += d * d;
  }
  for (size_t o = 0; o < n; ++o)
    out.set(static_cast<int64_t>(o), sq[o] / std::max(0.0, count - correction));
  return out;
}

// var via mean: sum((x - mean(x, keepdim))^2) / max(0, N - correction).
ValueRef decompose_var(const DecomposeContext& c, const std::optional<IntList>& dims,
                       double correction, bool keepdim) {
  const TensorType x = c.type(0);
  const ArgValue dims_arg = dims ? ArgValue{*dims} : ArgValue{None{}};
  ValueRef xs = c.b.cast(c.tensor(0), to_float(x.dtype));
  ValueRef mean = c.b.op("aten.mean.dim", {xs, dims_arg, true});
  ValueRef d = c.b.sub(xs, mean);
  ValueRef sq = c.b.op("aten.sum.dim_IntList", {c.b.mul(d, d), dims_arg, keepdim});
  const double denom = std::max(0.0, static_cast<double>(numel_of_dims(x, dims)) - correction);
  return c.b.div(sq, denom);
}

std::vector<TensorType> infer_var(const InferContext& c, int dims_arg, int keepdim_arg) {
  const TensorType x = c.type(0);
  op_check(is_floating(x.dtype), c.schema().op + ": var needs a floating input");
  std::optional<IntList> dims;
  if (!c.is_none(dims_arg)) dims = c.get_ints(dims_arg);
  return one(x.dtype,
             reduced_shape(x.sizes, reduced_mask(x.rank(), dims), c.get_bool(keepdim_arg)));
}

double correction_of(const ArgView& c) {
  return c.opt_float(2).value_or(1.0);
}

// softmax and log_softmax along `dim`, in f32 for half inputs.
DType softmax_out(const InferContext& c) {
  const DType in = c.type(0).dtype;
  op_check(is_floating(in), c.schema().op + " needs a floating input");
  const bool half_to_float = c.get_bool(2);
  return half_to_float && (in == DType::F16 || in == DType::BF16) ? DType::F32 : in;
}

}  // namespace

HostTensor softmax_reference(const HostTensor& x, int64_t dim_arg, const TensorType& out_type,
                             bool log) {
  auto dim = normalize_dim(dim_arg, x.rank());
  if (!dim) op_fail(dim.error().message());
  std::vector<bool> mask(static_cast<size_t>(x.rank()), false);
  if (x.rank() > 0) mask[static_cast<size_t>(*dim)] = true;
  const ReduceWalk walk = reduce_walk(x.sizes(), mask);
  const auto groups = static_cast<size_t>(shape_numel(reduced_shape(x.sizes(), mask, false)));
  std::vector<double> mx(groups, -INFINITY), sum(groups, 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto& m = mx[static_cast<size_t>(walk.out_index[static_cast<size_t>(i)])];
    m = std::max(m, x.get(i));
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto g = static_cast<size_t>(walk.out_index[static_cast<size_t>(i)]);
    sum[g] += std::exp(x.get(i) - mx[g]);
  }
  HostTensor out = HostTensor::zeros(out_type.dtype, out_type.sizes);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto g = static_cast<size_t>(walk.out_index[static_cast<size_t>(i)]);
    const double shifted = x.get(i) - mx[g];
    out.set(i, log ? shifted - std::log(sum[g]) : std::exp(shifted) / sum[g]);
  }
  return out;
}

namespace {

ValueRef decompose_softmax(const DecomposeContext& c, int64_t dim, DType out, bool log) {
  const DType compute = c.type(0).dtype == DType::F16 || c.type(0).dtype == DType::BF16
                            ? DType::F32
                            : c.type(0).dtype;
  ValueRef x = c.b.cast(c.tensor(0), compute);
  ValueRef shifted = c.b.sub(x, c.b.amax(x, {dim}, true));
  ValueRef e = c.b.unary("exp", shifted);
  ValueRef s = c.b.sum(e, {dim}, true);
  ValueRef result = log ? c.b.sub(shifted, c.b.unary("log", s)) : c.b.div(e, s);
  return c.b.cast(result, out);
}

// max.dim / min.dim: (values, indices) = (amax, argmax) along one dim.
OpRow max_min_dim(const std::string& overload, bool is_max) {
  return {overload,
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            const auto mask = reduced_mask(x.rank(), IntList{c.get_int(1)});
            op_check(reduced_count(x.sizes, mask) > 0,
                     c.schema().op + ": cannot reduce over a dimension of size 0");
            const Shape shape = reduced_shape(x.sizes, mask, c.get_bool(2));
            return std::vector{TensorType::contiguous(x.dtype, shape),
                               TensorType::contiguous(DType::I64, shape)};
          },
          [is_max](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const auto mask = reduced_mask(x.rank(), IntList{c.get_int(1)});
            return std::vector{
                reduce(x, mask, c.out_types[0], is_max ? Reduce::Max : Reduce::Min),
                reduce(x, mask, c.out_types[1], is_max ? Reduce::ArgMax : Reduce::ArgMin)};
          },
          [is_max](const DecomposeContext& c) {
            const IntList dim{c.get_int(1)};
            const bool keepdim = c.get_bool(2);
            ValueRef values = c.b.op(is_max ? "aten.amax.default" : "aten.amin.default",
                                     {c.tensor(0), dim, keepdim});
            ValueRef indices = c.b.op(is_max ? "aten.argmax.default" : "aten.argmin.default",
                                      {c.tensor(0), dim[0], keepdim});
            return std::vector{values, indices};
          }};
}

}  // namespace

std::vector<OpRow> reduction_ops() {
  std::vector<OpRow> rows;
  rows.push_back(reduction_row("aten.sum.dim_IntList", Reduce::Sum, 1, 2, 3));
  rows.push_back(reduction_row("aten.prod.dim_int", Reduce::Prod, 1, 2, 3));
  rows.push_back(reduction_row("aten.amax.default", Reduce::Max, 1, 2, -1));
  rows.push_back(reduction_row("aten.amin.default", Reduce::Min, 1, 2, -1));
  rows.push_back(reduction_row("aten.argmax.default", Reduce::ArgMax, 1, 2, -1));
  rows.push_back(reduction_row("aten.argmin.default", Reduce::ArgMin, 1, 2, -1));
  rows.push_back(reduction_row("aten.any.dims", Reduce::Any, 1, 2, -1));

  OpRow sum_all = reduction_row("aten.sum.default", Reduce::Sum, -1, -1, 1);
  sum_all.decompose = [](const DecomposeContext& c) {
    return std::vector{
        c.b.op("aten.sum.dim_IntList", {c.tensor(0), None{}, false}, {{"dtype", c.mapped(1)}})};
  };
  rows.push_back(std::move(sum_all));
  OpRow prod_all = reduction_row("aten.prod.default", Reduce::Prod, -1, -1, 1);
  prod_all.decompose = [](const DecomposeContext& c) {
    ValueRef flat = c.b.op("aten.view.default", {c.tensor(0), ints{-1}});
    return std::vector{
        c.b.op("aten.prod.dim_int", {flat, int64_t{0}, false}, {{"dtype", c.mapped(1)}})};
  };
  rows.push_back(std::move(prod_all));
  for (const char* overload : {"aten.any.default", "aten.any.dim"}) {
    const bool has_dim = std::string(overload) == "aten.any.dim";
    OpRow any = reduction_row(overload, Reduce::Any, has_dim ? 1 : -1, has_dim ? 2 : -1, -1);
    any.decompose = [has_dim](const DecomposeContext& c) {
      const ArgValue dims = has_dim ? ArgValue{IntList{c.get_int(1)}} : ArgValue{None{}};
      return std::vector{c.b.op("aten.any.dims", {c.tensor(0), dims, has_dim && c.get_bool(2)})};
    };
    rows.push_back(std::move(any));
  }

  rows.push_back({"aten.mean.dim", [](const InferContext& c) { return infer_mean(c, 1, 2, 3); },
                  [](const RefContext& c) { return std::vector{mean_ref(c, c.opt_ints(1))}; },
                  [](const DecomposeContext& c) {
                    return decompose_mean(c, c.opt_ints(1), c.get_bool(2), c.opt_dtype(3));
                  }});
  rows.push_back({"aten.mean.default",
                  [](const InferContext& c) { return infer_mean(c, -1, -1, 1); },
                  [](const RefContext& c) { return std::vector{mean_ref(c, std::nullopt)}; },
                  [](const DecomposeContext& c) {
                    return decompose_mean(c, std::nullopt, false, c.opt_dtype(1));
                  }});

  rows.push_back({"aten.var.correction", [](const InferContext& c) { return infer_var(c, 1, 3); },
                  [](const RefContext& c) {
                    return std::vector{var_ref(c, c.opt_ints(1), correction_of(c), 0)};
                  },
                  [](const DecomposeContext& c) {
                    return std::vector{
                        decompose_var(c, c.opt_ints(1), correction_of(c), c.get_bool(3))};
                  }});
  rows.push_back({"aten.var.dim", [](const InferContext& c) { return infer_var(c, 1, 3); },
                  [](const RefContext& c) {
                    return std::vector{var_ref(c, c.opt_ints(1), c.get_bool(2) ? 1.0 : 0.0, 0)};
                  },
                  [](const DecomposeContext& c) {
                    return std::vector{
                        decompose_var(c, c.opt_ints(1), c.get_bool(2) ? 1.0 : 0.0, c.get_bool(3))};
                  }});

  rows.push_back(max_min_dim("aten.max.dim", true));
  rows.push_back(max_min_dim("aten.min.dim", false));

  for (const bool log : {false, true}) {
    rows.push_back(
        {log ? "aten._log_softmax.default" : "aten._softmax.default",
         [](const InferContext& c) {
           auto dim = normalize_dim(c.get_int(1), c.type(0).rank());
           if (!dim) op_fail(dim.error().message());
           return one(softmax_out(c), c.type(0).sizes);
         },
         [log](const RefContext& c) {
           return std::vector{softmax_reference(c.tensor(0), c.get_int(1), c.out_types[0], log)};
         },
         [log](const DecomposeContext& c) {
           return std::vector{decompose_softmax(c, c.get_int(1), c.out_types[0].dtype, log)};
         }});
  }
  return rows;
}

}  // namespace kiln
