// Elementwise ops lower to one pointwise kernel over the output: each operand loaded
// through its broadcast index, cast to the compute dtype, combined, cast and stored.
#include "core/lower/lower_context.h"
#include "core/ops/promotion.h"

namespace kiln {
namespace {

// Builds the result from the loaded operand values (already in the compute dtype).
using Body = std::function<int(KernelBuilder&, const std::vector<int>&, DType)>;

InferContext infer_view(const NodeLowering& n) {
  return InferContext(n.node().op->schema, n.node().args, [&n](ValueRef r) -> const TensorType& {
    for (size_t i = 0; i < n.node().args.size(); ++i) {
      if (n.args().is_tensor(static_cast<int>(i)) && n.args().ref(static_cast<int>(i)) == r)
        return n.in_type(static_cast<int>(i));
    }
    return n.out_type(0);
  });
}

// Lowers `operands` of the node with `body`; `compute` of kNone means "from the output dtype".
bool lower_map(NodeLowering& n, const std::vector<int>& operands, DType compute, const Body& body,
               DType round = DType::F64) {
  const TensorType& out = n.out_type(0);
  KernelBuilder kb = n.kernel(out.sizes);
  std::vector<int> values;
  for (int arg : operands) {
    values.push_back(
        n.load_operand(kb, arg, out.sizes, compute, round == DType::F64 ? compute : round));
  }
  const int result = kb.cast(body(kb, values, compute), out.dtype);
  const Access a = n.realize_output(0);
  kb.store(a.buffer, contiguous_index(out.sizes, kb.pointwise_vars()), result);
  n.emit(std::move(kb).finish());
  return true;
}

DType promoted(const NodeLowering& n, std::initializer_list<int> args) {
  return result_type(infer_view(n), args);
}

LowerFn unary(const std::string& fn) {
  return [fn](NodeLowering& n) {
    // Bool stays bool: ~ on its widened form would give an int whose every pattern reads true.
    const DType out = n.out_type(0).dtype;
    const DType c = out == DType::Bool && fn == "bitwise_not" ? DType::Bool : compute_dtype(out);
    return lower_map(n, {0}, c, [fn](KernelBuilder& kb, const std::vector<int>& v, DType d) {
      return kb.math(fn == "bitwise_not" && d == DType::Bool ? "not" : fn, d, {v[0]});
    });
  };
}

// isnan, isinf: false for integer inputs, which have neither.
LowerFn float_predicate(const std::string& fn) {
  return [fn](NodeLowering& n) {
    const DType c = compute_dtype(n.in_type(0).dtype);
    return lower_map(n, {0}, c, [fn, c](KernelBuilder& kb, const std::vector<int>& v, DType) {
      if (!is_floating(c)) return kb.constant(DType::Bool, 0);
      return kb.math(fn, DType::Bool, {v[0]});
    });
  };
}

LowerFn binary(const std::string& fn, std::initializer_list<int> args = {0, 1}) {
  const std::vector<int> operands(args);
  return [fn, operands](NodeLowering& n) {
    const DType c = compute_dtype(n.out_type(0).dtype);
    return lower_map(
        n, operands, c,
        [fn](KernelBuilder& kb, const std::vector<int>& v, DType d) {
          return kb.math(fn, d, {v[0], v[1]});
        },
        n.out_type(0).dtype);
  };
}

// Ops whose math runs in the promoted operand dtype rather than the result's (comparisons,
// true division of integers).
LowerFn binary_in(const std::string& fn, DType result_math, bool to_float) {
  return [=](NodeLowering& n) {
    DType p = promoted(n, {0, 1});
    if (to_float && !is_floating(p)) p = kDefaultFloat;
    const DType c = compute_dtype(p);
    const DType r = result_math == DType::Bool ? DType::Bool : c;
    return lower_map(
        n, {0, 1}, c,
        [fn, r](KernelBuilder& kb, const std::vector<int>& v, DType) {
          return kb.math(fn, r, {v[0], v[1]});
        },
        p);
  };
}

// add/sub/rsub: a + sign * alpha * b.
LowerFn add_like(bool subtract, bool reversed) {
  return [=](NodeLowering& n) {
    const DType c = compute_dtype(n.out_type(0).dtype);
    const double alpha = n.args().get_float(2);
    const std::vector<int> operands = reversed ? std::vector{1, 0} : std::vector{0, 1};
    return lower_map(
        n, operands, c,
        [=](KernelBuilder& kb, const std::vector<int>& v, DType d) {
          int b = v[1];
          if (alpha != 1.0) b = kb.math("mul", d, {b, kb.constant(d, alpha)});
          return kb.math(subtract ? "sub" : "add", d, {v[0], b});
        },
        n.out_type(0).dtype);
  };
}

bool lower_logical(NodeLowering& n, const std::string& fn) {
  return lower_map(
      n, {0, 1}, compute_dtype(promoted(n, {0, 1})),
      [fn](KernelBuilder& kb, const std::vector<int>& v, DType) {
        return kb.math(fn, DType::Bool, {kb.cast(v[0], DType::Bool), kb.cast(v[1], DType::Bool)});
      });
}

bool lower_div_mode(NodeLowering& n) {
  const auto mode = n.args().opt_str(2);
  if (!mode) return binary_in("div", DType::F32, true)(n);
  return binary(*mode == "floor" ? "floordiv" : "truncdiv")(n);
}

bool lower_where(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const DType c = compute_dtype(out.dtype);
  KernelBuilder kb = n.kernel(out.sizes);
  const int cond = n.load_operand(kb, 0, out.sizes, DType::Bool, DType::Bool);
  const int a = n.load_operand(kb, 1, out.sizes, c, out.dtype);
  const int b = n.load_operand(kb, 2, out.sizes, c, out.dtype);
  const int result = kb.cast(kb.where(cond, a, b), out.dtype);
  const Access o = n.realize_output(0);
  kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()), result);
  n.emit(std::move(kb).finish());
  return true;
}

bool lower_clamp(NodeLowering& n) {
  std::vector<int> operands{0};
  const bool lo = !n.args().is_none(1), hi = !n.args().is_none(2);
  if (lo) operands.push_back(1);
  if (hi) operands.push_back(2);
  const DType c = compute_dtype(n.out_type(0).dtype);
  return lower_map(
      n, operands, c,
      [=](KernelBuilder& kb, const std::vector<int>& v, DType d) {
        int x = v[0];
        if (lo) x = kb.math("max", d, {x, v[1]});
        if (hi) x = kb.math("min", d, {x, v[lo ? 2 : 1]});
        return x;
      },
      n.out_type(0).dtype);
}

bool lower_hardtanh(NodeLowering& n) {
  const double lo = n.args().get_float(1), hi = n.args().get_float(2);
  const DType c = compute_dtype(n.out_type(0).dtype);
  return lower_map(n, {0}, c, [=](KernelBuilder& kb, const std::vector<int>& v, DType d) {
    return kb.math("min", d, {kb.math("max", d, {v[0], kb.constant(d, lo)}), kb.constant(d, hi)});
  });
}

bool lower_leaky_relu(NodeLowering& n) {
  const double slope = n.args().get_float(1);
  const DType c = compute_dtype(n.out_type(0).dtype);
  return lower_map(n, {0}, c, [=](KernelBuilder& kb, const std::vector<int>& v, DType d) {
    const int positive = kb.math("gt", DType::Bool, {v[0], kb.constant(d, 0)});
    return kb.where(positive, v[0], kb.math("mul", d, {v[0], kb.constant(d, slope)}));
  });
}

bool lower_elu(NodeLowering& n) {
  const double alpha = n.args().get_float(1), scale = n.args().get_float(2),
               input_scale = n.args().get_float(3);
  const DType c = compute_dtype(n.out_type(0).dtype);
  if (!is_floating(c)) return false;
  return lower_map(n, {0}, c, [=](KernelBuilder& kb, const std::vector<int>& v, DType d) {
    const int positive = kb.math("gt", DType::Bool, {v[0], kb.constant(d, 0)});
    const int neg =
        kb.math("mul", d,
                {kb.constant(d, scale * alpha),
                 kb.math("expm1", d, {kb.math("mul", d, {v[0], kb.constant(d, input_scale)})})});
    return kb.where(positive, kb.math("mul", d, {v[0], kb.constant(d, scale)}), neg);
  });
}

// Copies and casts: the value converted straight to the output dtype.
// Whether `a` lays a value of `sizes` out row-major (any offset; size-1 dims any stride).
bool row_major(const Access& a, const Shape& sizes) {
  const auto strides = affine_strides(a);
  if (!strides) return false;
  int64_t inner = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] != 1 && (*strides)[i + 1] != inner) return false;
    inner *= sizes[i];
  }
  return true;
}

LowerFn copy_of(int arg) {
  return [arg](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    // A copy of a row-major value of the same dtype and shape, which no caller sees, is that
    // value (graph values never change): a transpose made contiguous for the product after it
    // costs nothing when its operand already lies in that order.
    if (n.args().is_tensor(arg) && !n.graph_output(0)) {
      const Access& a = n.operand(arg);
      if (a.type.dtype == out.dtype && a.type.sizes == out.sizes && row_major(a, out.sizes)) {
        n.define_view(0, a.buffer, a.index);
        return true;
      }
    }
    KernelBuilder kb = n.kernel(out.sizes);
    const DType in = n.args().is_tensor(arg) ? n.in_type(arg).dtype : out.dtype;
    const int v = kb.cast(n.load_operand(kb, arg, out.sizes, in, in), out.dtype);
    const Access o = n.realize_output(0);
    kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()), v);
    n.emit(std::move(kb).finish());
    return true;
  };
}

}  // namespace

std::map<std::string, LowerFn> pointwise_lowerings() {
  std::map<std::string, LowerFn> t;
  for (const char* fn :
       {"sin",  "cos",   "tan",   "asin",  "acos",  "atan",    "sinh",       "cosh",
        "tanh", "asinh", "acosh", "atanh", "exp",   "expm1",   "log",        "log1p",
        "log2", "log10", "sqrt",  "rsqrt", "erf",   "sigmoid", "reciprocal", "abs",
        "neg",  "sign",  "ceil",  "floor", "round", "trunc",   "relu",       "bitwise_not"}) {
    t[std::string("aten.") + fn + ".default"] = unary(fn);
  }
  t["aten.logical_not.default"] = [](NodeLowering& n) {
    return lower_map(n, {0}, compute_dtype(n.in_type(0).dtype),
                     [](KernelBuilder& kb, const std::vector<int>& v, DType) {
                       return kb.math("not", DType::Bool, {kb.cast(v[0], DType::Bool)});
                     });
  };
  t["aten.isnan.default"] = float_predicate("isnan");
  t["aten.isinf.default"] = float_predicate("isinf");
  t["aten.add.Tensor"] = t["aten.add.Scalar"] = add_like(false, false);
  t["aten.sub.Tensor"] = t["aten.sub.Scalar"] = add_like(true, false);
  t["aten.rsub.Scalar"] = add_like(true, true);
  t["aten.mul.Tensor"] = t["aten.mul.Scalar"] = binary("mul");
  t["aten.div.Tensor"] = t["aten.div.Scalar"] = binary_in("div", DType::F32, true);
  t["aten.div.Tensor_mode"] = t["aten.div.Scalar_mode"] = lower_div_mode;
  t["aten.floor_divide.default"] = binary("floordiv");
  t["aten.fmod.Tensor"] = t["aten.fmod.Scalar"] = binary("fmod");
  t["aten.remainder.Tensor"] = t["aten.remainder.Scalar"] = binary("mod");
  t["aten.maximum.default"] = binary("max");
  t["aten.minimum.default"] = binary("min");
  t["aten.pow.Tensor_Tensor"] = t["aten.pow.Tensor_Scalar"] = t["aten.pow.Scalar"] = binary("pow");
  // The out= form computes the same; `out` only gives the result its dtype.
  t["aten.atan2.default"] = t["aten.atan2.out"] = binary_in("atan2", DType::F32, true);
  for (const char* kind : {"Tensor", "Scalar"}) {
    for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"})
      t[std::string("aten.") + cmp + "." + kind] = binary_in(cmp, DType::Bool, false);
    t[std::string("aten.bitwise_and.") + kind] = binary("and");
    t[std::string("aten.bitwise_or.") + kind] = binary("or");
    t[std::string("aten.bitwise_xor.") + kind] = binary("xor");
  }
  t["aten.logical_and.default"] = [](NodeLowering& n) { return lower_logical(n, "and"); };
  t["aten.logical_or.default"] = [](NodeLowering& n) { return lower_logical(n, "or"); };
  t["aten.logical_xor.default"] = [](NodeLowering& n) { return lower_logical(n, "xor"); };
  t["aten.where.self"] = lower_where;
  t["aten.clamp.default"] = t["aten.clamp.Tensor"] = lower_clamp;
  t["aten.hardtanh.default"] = lower_hardtanh;
  t["aten.leaky_relu.default"] = lower_leaky_relu;
  t["aten.elu.default"] = lower_elu;
  t["aten._to_copy.default"] = t["aten.clone.default"] = copy_of(0);
  t["aten.copy.default"] = copy_of(1);
  return t;
}

}  // namespace kiln
