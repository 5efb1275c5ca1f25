// Elementwise ops: one row per ATen overload, built from a few shapes of rule.
#include <cmath>
#include <limits>

#include "core/ops/elementwise.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/promotion.h"

namespace kiln {
namespace {

using Unary = double (*)(double);

void require_not_bool(const InferContext& c, DType d) {
  op_check(d != DType::Bool, c.schema().op + " is not defined for bool tensors");
}

// sin, exp, ...: integers and bools compute in the default float dtype.
OpRow unary_float(const std::string& name, Unary f) {
  return {"aten." + name + ".default",
          [](const InferContext& c) { return one(to_float(c.type(0).dtype), c.type(0).sizes); },
          [f](const RefContext& c) {
            return std::vector{map_unary(c, 0, DType::F64, f, [](int64_t v) { return v; })};
          }};
}

// abs, neg, ...: same dtype in and out; `fi` is the integer rule.
template <class FI>
OpRow unary_same(const std::string& name, Unary ff, FI fi, bool allow_bool = true) {
  return {"aten." + name + ".default",
          [allow_bool](const InferContext& c) {
            if (!allow_bool) require_not_bool(c, c.type(0).dtype);
            return one(c.type(0).dtype, c.type(0).sizes);
          },
          [ff, fi](const RefContext& c) {
            return std::vector{map_unary(c, 0, c.out_types[0].dtype, ff, fi)};
          }};
}

// isnan, logical_not, ...: a bool result computed from the input's own dtype.
OpRow unary_predicate(const std::string& name, bool (*f)(double)) {
  return {"aten." + name + ".default",
          [](const InferContext& c) { return one(DType::Bool, c.type(0).sizes); },
          [f](const RefContext& c) {
            return std::vector{map_unary(
                c, 0, DType::F64, [f](double v) { return f(v) ? 1.0 : 0.0; },
                [](int64_t v) { return v; })};
          }};
}

// A binary op whose result dtype is the promoted dtype of (self, other).
template <class FF, class FI>
OpRow binary_promoted(const std::string& overload, FF ff, FI fi, bool allow_bool = true) {
  return {overload,
          [allow_bool](const InferContext& c) {
            const DType d = result_type(c, {0, 1});
            if (!allow_bool) require_not_bool(c, d);
            return one(d, broadcast_args(c, {0, 1}));
          },
          [ff, fi](const RefContext& c) {
            return std::vector{map_binary(c, 0, 1, c.out_types[0].dtype, ff, fi)};
          }};
}

// eq, lt, ...: compare in the promoted dtype, produce bool.
template <class Cmp>
OpRow comparison(const std::string& overload, Cmp cmp) {
  return {overload,
          [](const InferContext& c) {
            return one(DType::Bool, broadcast_args(c, {0, 1}));
          },
          [cmp](const RefContext& c) {
            const DType compute = result_type(c, {0, 1});
            return std::vector{map_binary(
                c, 0, 1, compute, [cmp](double a, double b) { return cmp(a, b) ? 1.0 : 0.0; },
                [cmp](int64_t a, int64_t b) -> int64_t { return cmp(a, b) ? 1 : 0; })};
          }};
}

// logical_and, ...: truthiness of each side, bool out.
template <class Op>
OpRow logical(const std::string& name, Op op) {
  return {"aten." + name + ".default",
          [](const InferContext& c) {
            return one(DType::Bool, broadcast_args(c, {0, 1}));
          },
          [op](const RefContext& c) {
            return std::vector{map_binary(
                c, 0, 1, DType::F64,
                [op](double a, double b) { return op(a != 0, b != 0) ? 1.0 : 0.0; },
                [](int64_t a, int64_t) { return a; })};
          }};
}

// bitwise_and, ...: integers and bools only.
template <class Op>
OpRow bitwise(const std::string& overload, Op op) {
  return {overload,
          [](const InferContext& c) {
            const DType d = result_type(c, {0, 1});
            op_check(!is_floating(d),
                     c.schema().op + " is only defined for integer and bool tensors");
            return one(d, broadcast_args(c, {0, 1}));
          },
          [op](const RefContext& c) {
            return std::vector{map_binary(
                c, 0, 1, c.out_types[0].dtype, [](double a, double) { return a; }, op)};
          }};
}

void check_alpha(const InferContext& c, DType result) {
  if (!is_floating(result) && !is_complex(result) && c.is_wrapped_scalar(2)) {
    op_check(
        c.scalar_dtype(2) != DType::F64,
        c.schema().op + ": for integral input tensors, alpha must not be a floating point number");
  }
}

// add/sub with alpha: self + sign * alpha * other.
OpRow add_like(const std::string& overload, double sign, bool reversed = false) {
  return {
      overload,
      [](const InferContext& c) {
        const DType d = result_type(c, {0, 1});
        check_alpha(c, d);
        op_check(!(d == DType::Bool && c.schema().op.find("sub") != std::string::npos),
                 c.schema().op + ": subtraction of bool tensors is not supported");
        return one(d, broadcast_args(c, {0, 1}));
      },
      [sign, reversed](const RefContext& c) {
        const double alpha = c.get_float(2);
        const int64_t ialpha = std::holds_alternative<double>(c.at(2)) ? 0 : c.get_int(2);
        const int a = reversed ? 1 : 0;
        const int b = reversed ? 0 : 1;
        const int64_t isign = static_cast<int64_t>(sign);
        return std::vector{map_binary(
            c, a, b, c.out_types[0].dtype, [=](double x, double y) { return x + sign * alpha * y; },
            [=](int64_t x, int64_t y) {
              return wrap_add(x, wrap_mul(isign, wrap_mul(ialpha, y)));
            })};
      }};
}

int64_t int_div_checked(int64_t a, int64_t b, bool floor) {
  op_check(b != 0, "integer division by zero");
  if (b == -1) return wrap_sub(0, a);  // INT64_MIN / -1 wraps instead of trapping
  int64_t q = a / b;
  if (floor && (a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t int_mod_checked(int64_t a, int64_t b, bool python_sign) {
  op_check(b != 0, "integer modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (python_sign && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Floor division of floats as PyTorch computes it: through fmod, so 1.0 // 0.1 is 9 (the
// remainder is 0.0999...), not floor(1.0 / 0.1) = 10.
double floor_divide(double a, double b) {
  if (b == 0) return a / b;
  const double m = std::fmod(a, b);
  double div = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double floored = std::floor(div);
  if (div - floored > 0.5) floored += 1;
  return floored;
}

double py_remainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// div with rounding_mode: None (true division, float out), "trunc" or "floor".
OpRow div_mode(const std::string& overload) {
  return {overload,
          [](const InferContext& c) {
            const auto mode = c.opt_str(2);
            op_check(!mode || *mode == "trunc" || *mode == "floor",
                     c.schema().op + ": rounding_mode must be None, 'trunc' or 'floor', got '" +
                         mode.value_or("") + "'");
            const DType d = result_type(c, {0, 1});
            return one(mode ? d : to_float(d), broadcast_args(c, {0, 1}));
          },
          [](const RefContext& c) {
            const auto mode = c.opt_str(2);
            const bool floor = mode && *mode == "floor";
            return std::vector{map_binary(
                c, 0, 1, c.out_types[0].dtype,
                [mode, floor](double a, double b) {
                  const double q = a / b;
                  return !mode ? q : floor ? floor_divide(a, b) : std::trunc(q);
                },
                [floor](int64_t a, int64_t b) { return int_div_checked(a, b, floor); })};
          }};
}

OpRow true_div(const std::string& overload) {
  return {overload,
          [](const InferContext& c) {
            return one(to_float(result_type(c, {0, 1})), broadcast_args(c, {0, 1}));
          },
          [](const RefContext& c) {
            return std::vector{map_binary(
                c, 0, 1, DType::F64, [](double a, double b) { return a / b; },
                [](int64_t a, int64_t) { return a; })};
          }};
}

int64_t int_pow(int64_t base, int64_t exponent) {
  op_check(exponent >= 0, "integers to negative integer powers are not allowed");
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

OpRow pow_row(const std::string& overload) {
  return binary_promoted(
      overload, [](double a, double b) { return std::pow(a, b); }, int_pow);
}

// clamp with optional bounds (Scalars or tensors at 1 and 2).
OpRow clamp_row(const std::string& overload) {
  return {overload,
          [](const InferContext& c) {
            op_check(!c.is_none(1) || !c.is_none(2),
                     c.schema().op + ": at least one of min and max must be given");
            const DType d = result_type(c, {0, 1, 2});
            return one(d, broadcast_args(c, {0, 1, 2}));
          },
          [](const RefContext& c) {
            HostTensor out = c.output(0);
            const HostTensor x = c.tensor(0);
            const std::optional<HostTensor> lo =
                c.is_none(1) ? std::nullopt : std::optional(c.tensor(1));
            const std::optional<HostTensor> hi =
                c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
            const Broadcaster bx(x.sizes(), out.sizes());
            const Broadcaster bl(lo ? lo->sizes() : Shape{}, out.sizes());
            const Broadcaster bh(hi ? hi->sizes() : Shape{}, out.sizes());
            const bool fp = is_floating(out.dtype());
            for (int64_t i = 0; i < out.numel(); ++i) {
              if (fp) {
                double v = x.get(bx(i));
                // NaN stays NaN: compare only when the bound is smaller/larger.
                if (lo && !std::isnan(v))
                  v = std::isnan(lo->get(bl(i))) ? lo->get(bl(i)) : std::max(v, lo->get(bl(i)));
                if (hi && !std::isnan(v))
                  v = std::isnan(hi->get(bh(i))) ? hi->get(bh(i)) : std::min(v, hi->get(bh(i)));
                out.set(i, v);
              } else {
                int64_t v = x.get_int(bx(i));
                if (lo) v = std::max(v, lo->get_int(bl(i)));
                if (hi) v = std::min(v, hi->get_int(bh(i)));
                out.set_int(i, v);
              }
            }
            return std::vector{out};
          }};
}

// relu-like activations with float parameters: same dtype, computed in double.
template <class F>
OpRow activation(const std::string& name, F f, bool floating_only = false) {
  return {"aten." + name + ".default",
          [floating_only](const InferContext& c) {
            require_not_bool(c, c.type(0).dtype);
            // As in PyTorch: a fractional slope has no integer meaning.
            op_check(!floating_only || is_floating(c.type(0).dtype),
                     c.schema().op + " is defined for float tensors only, got " +
                         std::string(dtype_name(c.type(0).dtype)));
            return one(c.type(0).dtype, c.type(0).sizes);
          },
          [f](const RefContext& c) {
            return std::vector{map_unary(
                c, 0, c.out_types[0].dtype, [&](double v) { return f(c, v); },
                [&](int64_t v) { return static_cast<int64_t>(f(c, static_cast<double>(v))); })};
          }};
}

double sign_of(double v) {
  return static_cast<double>((0 < v) - (v < 0));
}
double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}
double rsqrt(double v) {
  return 1.0 / std::sqrt(v);
}
double reciprocal(double v) {
  return 1.0 / v;
}
int64_t int_abs(int64_t v) {
  return v < 0 ? wrap_sub(0, v) : v;
}
int64_t int_neg(int64_t v) {
  return wrap_sub(0, v);
}
int64_t int_sign(int64_t v) {
  return (0 < v) - (v < 0);
}
int64_t identity(int64_t v) {
  return v;
}

}  // namespace

std::vector<OpRow> pointwise_ops() {
  std::vector<OpRow> rows;
  const std::pair<const char*, Unary> floats[] = {
      {"sin", [](double v) { return std::sin(v); }},
      {"cos", [](double v) { return std::cos(v); }},
      {"tan", [](double v) { return std::tan(v); }},
      {"asin", [](double v) { return std::asin(v); }},
      {"acos", [](double v) { return std::acos(v); }},
      {"atan", [](double v) { return std::atan(v); }},
      {"sinh", [](double v) { return std::sinh(v); }},
      {"cosh", [](double v) { return std::cosh(v); }},
      {"tanh", [](double v) { return std::tanh(v); }},
      {"asinh", [](double v) { return std::asinh(v); }},
      {"acosh", [](double v) { return std::acosh(v); }},
      {"atanh", [](double v) { return std::atanh(v); }},
      {"exp", [](double v) { return std::exp(v); }},
      {"expm1", [](double v) { return std::expm1(v); }},
      {"log", [](double v) { return std::log(v); }},
      {"log1p", [](double v) { return std::log1p(v); }},
      {"log2", [](double v) { return std::log2(v); }},
      {"log10", [](double v) { return std::log10(v); }},
      {"sqrt", [](double v) { return std::sqrt(v); }},
      {"rsqrt", rsqrt},
      {"erf", [](double v) { return std::erf(v); }},
      {"sigmoid", sigmoid},
      {"reciprocal", reciprocal},
  };
  for (const auto& [name, f] : floats) rows.push_back(unary_float(name, f));

  OpRow abs = unary_same(
      "abs", [](double v) { return std::fabs(v); }, int_abs);
  // A complex value's magnitude is real (complex lowering computes it).
  abs.infer = [same = abs.infer](const InferContext& c) {
    std::vector<TensorType> types = same(c);
    if (is_complex(types[0].dtype)) types[0] = TensorType::contiguous(DType::F32, types[0].sizes);
    return types;
  };
  rows.push_back(std::move(abs));
  rows.push_back(unary_same(
      "neg", [](double v) { return -v; }, int_neg, false));
  rows.push_back(unary_same("sign", sign_of, int_sign));
  rows.push_back(unary_same(
      "ceil", [](double v) { return std::ceil(v); }, identity));
  rows.push_back(unary_same(
      "floor", [](double v) { return std::floor(v); }, identity));
  rows.push_back(unary_same(
      "round", [](double v) { return std::nearbyint(v); }, identity));
  rows.push_back(unary_same(
      "trunc", [](double v) { return std::trunc(v); }, identity));
  rows.push_back(unary_same(
      "relu", [](double v) { return v < 0 ? 0.0 : v; },  // PyTorch's: NaN and -0.0 stay
      [](int64_t v) { return std::max<int64_t>(v, 0); }, false));
  rows.push_back({"aten.bitwise_not.default",
                  [](const InferContext& c) {
                    op_check(!is_floating(c.type(0).dtype),
                             "bitwise_not is only defined for integer and bool tensors");
                    return one(c.type(0).dtype, c.type(0).sizes);
                  },
                  [](const RefContext& c) {
                    const bool is_bool = c.out_types[0].dtype == DType::Bool;
                    return std::vector{map_unary(
                        c, 0, c.out_types[0].dtype, [](double v) { return v; },
                        [is_bool](int64_t v) { return is_bool ? (v ? 0 : 1) : ~v; })};
                  }});
  rows.push_back(unary_predicate("logical_not", [](double v) { return v == 0; }));
  rows.push_back(unary_predicate("isnan", [](double v) { return std::isnan(v); }));
  rows.push_back(unary_predicate("isinf", [](double v) { return std::isinf(v); }));

  rows.push_back(add_like("aten.add.Tensor", 1));
  rows.push_back(add_like("aten.add.Scalar", 1));
  rows.push_back(add_like("aten.sub.Tensor", -1));
  rows.push_back(add_like("aten.sub.Scalar", -1));
  rows.push_back(add_like("aten.rsub.Scalar", -1, true));
  for (const char* overload : {"aten.mul.Tensor", "aten.mul.Scalar"}) {
    rows.push_back(binary_promoted(
        overload, [](double a, double b) { return a * b; },
        [](int64_t a, int64_t b) -> int64_t { return wrap_mul(a, b); }));
  }
  rows.push_back(true_div("aten.div.Tensor"));
  rows.push_back(true_div("aten.div.Scalar"));
  rows.push_back(div_mode("aten.div.Tensor_mode"));
  rows.push_back(div_mode("aten.div.Scalar_mode"));
  rows.push_back(binary_promoted(
      "aten.floor_divide.default", floor_divide,
      [](int64_t a, int64_t b) { return int_div_checked(a, b, true); }, false));
  for (const char* overload : {"aten.fmod.Tensor", "aten.fmod.Scalar"}) {
    rows.push_back(binary_promoted(
        overload, [](double a, double b) { return std::fmod(a, b); },
        [](int64_t a, int64_t b) { return int_mod_checked(a, b, false); }, false));
  }
  for (const char* overload : {"aten.remainder.Tensor", "aten.remainder.Scalar"}) {
    rows.push_back(binary_promoted(
        overload, py_remainder, [](int64_t a, int64_t b) { return int_mod_checked(a, b, true); },
        false));
  }
  auto nan_max = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  };
  auto nan_min = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  };
  rows.push_back(binary_promoted("aten.maximum.default", nan_max,
                                 [](int64_t a, int64_t b) { return std::max(a, b); }));
  rows.push_back(binary_promoted("aten.minimum.default", nan_min,
                                 [](int64_t a, int64_t b) { return std::min(a, b); }));
  rows.push_back(pow_row("aten.pow.Tensor_Tensor"));
  rows.push_back(pow_row("aten.pow.Tensor_Scalar"));
  rows.push_back(pow_row("aten.pow.Scalar"));
  rows.push_back({"aten.atan2.default",
                  [](const InferContext& c) {
                    return one(to_float(result_type(c, {0, 1})), broadcast_args(c, {0, 1}));
                  },
                  [](const RefContext& c) {
                    return std::vector{map_binary(
                        c, 0, 1, DType::F64, [](double a, double b) { return std::atan2(a, b); },
                        [](int64_t a, int64_t) { return a; })};
                  }});
  rows.push_back({"aten.atan2.out",
                  [](const InferContext& c) {
                    const Shape shape = broadcast_args(c, {0, 1});
                    const TensorType out = c.type(2);
                    op_check(out.sizes == shape,
                             "atan2.out: out has shape " + shape_text(out.sizes) +
                                 " but the result has shape " + shape_text(shape));
                    op_check(is_floating(out.dtype), "atan2.out: out must be a floating tensor");
                    return one(out.dtype, shape);
                  },
                  [](const RefContext& c) {
                    return std::vector{map_binary(
                        c, 0, 1, DType::F64, [](double a, double b) { return std::atan2(a, b); },
                        [](int64_t a, int64_t) { return a; })};
                  }});

  for (const char* kind : {"Tensor", "Scalar"}) {
    const std::string k = kind;
    rows.push_back(comparison("aten.eq." + k, [](auto a, auto b) { return a == b; }));
    rows.push_back(comparison("aten.ne." + k, [](auto a, auto b) { return a != b; }));
    rows.push_back(comparison("aten.lt." + k, [](auto a, auto b) { return a < b; }));
    rows.push_back(comparison("aten.le." + k, [](auto a, auto b) { return a <= b; }));
    rows.push_back(comparison("aten.gt." + k, [](auto a, auto b) { return a > b; }));
    rows.push_back(comparison("aten.ge." + k, [](auto a, auto b) { return a >= b; }));
    rows.push_back(bitwise("aten.bitwise_and." + k, [](int64_t a, int64_t b) { return a & b; }));
    rows.push_back(bitwise("aten.bitwise_or." + k, [](int64_t a, int64_t b) { return a | b; }));
    rows.push_back(bitwise("aten.bitwise_xor." + k, [](int64_t a, int64_t b) { return a ^ b; }));
  }
  rows.push_back(logical("logical_and", [](bool a, bool b) { return a && b; }));
  rows.push_back(logical("logical_or", [](bool a, bool b) { return a || b; }));
  rows.push_back(logical("logical_xor", [](bool a, bool b) { return a != b; }));

  rows.push_back({"aten.where.self",
                  [](const InferContext& c) {
                    return one(result_type(c, {1, 2}), broadcast_args(c, {0, 1, 2}));
                  },
                  [](const RefContext& c) {
                    HostTensor out = c.output(0);
                    const HostTensor cond = c.tensor(0), a = c.tensor(1), b = c.tensor(2);
                    const Broadcaster bc(cond.sizes(), out.sizes()), ba(a.sizes(), out.sizes()),
                        bb(b.sizes(), out.sizes());
                    const bool fp = is_floating(out.dtype());
                    for (int64_t i = 0; i < out.numel(); ++i) {
                      const bool take_a = cond.get(bc(i)) != 0;
                      const HostTensor& src = take_a ? a : b;
                      const int64_t j = take_a ? ba(i) : bb(i);
                      if (fp)
                        out.set(i, src.get(j));
                      else
                        out.set_int(i, src.get_int(j));
                    }
                    return std::vector{out};
                  }});
  rows.push_back(clamp_row("aten.clamp.default"));
  rows.push_back(clamp_row("aten.clamp.Tensor"));
  rows.push_back(activation("hardtanh", [](const RefContext& c, double v) {
    return std::min(std::max(v, c.get_float(1)), c.get_float(2));
  }));
  rows.push_back(activation(
      "leaky_relu", [](const RefContext& c, double v) { return v > 0 ? v : v * c.get_float(1); },
      true));
  rows.push_back(activation(
      "elu",
      [](const RefContext& c, double v) {
        const double alpha = c.get_float(1), scale = c.get_float(2), input_scale = c.get_float(3);
        return v > 0 ? scale * v : scale * alpha * std::expm1(v * input_scale);
      },
      true));

  // Copies and casts.
  rows.push_back(
      {"aten._to_copy.default",
       [](const InferContext& c) {
         return one(c.opt_dtype(1).value_or(c.type(0).dtype), c.type(0).sizes);
       },
       [](const RefContext& c) { return std::vector{c.tensor(0).to(c.out_types[0].dtype)}; }});
  rows.push_back(
      {"aten.clone.default",
       [](const InferContext& c) { return one(c.type(0).dtype, c.type(0).sizes); },
       [](const RefContext& c) { return std::vector{c.tensor(0).to(c.out_types[0].dtype)}; }});
  rows.push_back({"aten.copy.default",
                  [](const InferContext& c) {
                    const TensorType self = c.type(0);
                    auto shape = broadcast_shapes(c.type(1).sizes, self.sizes);
                    op_check(shape && *shape == self.sizes,
                             "copy: src of shape " + shape_text(c.type(1).sizes) +
                                 " does not broadcast to " + shape_text(self.sizes));
                    return one(self.dtype, self.sizes);
                  },
                  [](const RefContext& c) {
                    // A float source converts by value (0.5 into bool is true), so it is read
                    // as a float whatever the target; integers stay exact.
                    const DType src = c.tensor(1).dtype();
                    const DType compute = is_floating(src) ? DType::F64 : c.out_types[0].dtype;
                    return std::vector{map_unary(
                        c, 1, compute, [](double v) { return v; }, identity)};
                  }});
  return rows;
}

}  // namespace kiln
