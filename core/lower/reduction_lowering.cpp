// Reductions lower to one Reduction kernel: pointwise variables x.. walk the kept dims,
// reduction variables r.. the reduced ones; ops after the reduce run once per output.
// mean and var (Welford) are lowered directly rather than through their decompositions,
// and softmax becomes max, sum-of-exp and normalize kernels.
#include "core/lower/lower_context.h"
#include "core/ops/reduce_util.h"

namespace kiln {
namespace {

struct ReduceShape {
  std::vector<bool> mask;
  Shape kept;     // sizes of the kept dims, in order (the kernel's ranges)
  Shape reduced;  // sizes of the reduced dims, in order (the reduction ranges)
  int64_t count() const { return shape_numel(reduced); }
};

ReduceShape reduce_shape(const Shape& sizes, const std::vector<bool>& mask) {
  ReduceShape s{mask, {}, {}};
  for (size_t i = 0; i < sizes.size(); ++i) (mask[i] ? s.reduced : s.kept).push_back(sizes[i]);
  return s;
}

// The input element at (x.., r..) of a reduction over `rs`.
int load_for_reduce(NodeLowering& n, KernelBuilder& kb, const Access& a, const ReduceShape& rs) {
  std::vector<Expr> idx;
  size_t xi = 0, ri = 0;
  for (bool reduced : rs.mask) idx.push_back(reduced ? kb.r(ri++) : kb.x(xi++));
  return n.load(kb, a, idx);
}

Expr kept_index(const KernelBuilder& kb, const ReduceShape& rs) {
  return contiguous_index(rs.kept, kb.pointwise_vars());
}

std::vector<bool> mask_of(const NodeLowering& n, int dims_arg) {
  const int64_t rank = n.in_type(0).rank();
  if (dims_arg < 0 || n.args().is_none(dims_arg)) return reduced_mask(rank, std::nullopt);
  return reduced_mask(rank, n.args().get_ints(dims_arg));
}

// sum, prod, amax, amin, any, argmax, argmin over `dims_arg` (-1: all dims).
LowerFn simple_reduce(const std::string& kind, int dims_arg) {
  return [=](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const ReduceShape rs = reduce_shape(n.in_type(0).sizes, mask_of(n, dims_arg));
    const bool arg = kind == "argmax" || kind == "argmin";
    if (arg && rs.count() == 0) return false;  // the oracle reports the error
    KernelBuilder kb = n.kernel(rs.kept, rs.reduced);
    DType acc = compute_dtype(arg ? n.in_type(0).dtype : out.dtype);
    if (kind == "any") acc = DType::Bool;
    int v = load_for_reduce(n, kb, n.operand(0), rs);
    // `dtype=` casts the input before reducing, as PyTorch does: sum(x, dtype=bool) sums
    // x != 0 (not a truncated x), sum(x, dtype=f16) sums f16-rounded terms.
    if (!arg && out.dtype != n.in_type(0).dtype) v = kb.cast(v, out.dtype);
    v = kb.cast(v, acc);
    const int r = kb.reduce(kind, arg ? DType::I64 : acc, v);
    const Access o = n.realize_output(0);
    kb.store(o.buffer, kept_index(kb, rs), kb.cast(r, out.dtype));
    n.emit(std::move(kb).finish());
    return true;
  };
}

// argmax/argmin with dim=None index the flattened tensor: reduce every dim.
LowerFn arg_reduce(const std::string& kind) {
  return [kind](NodeLowering& n) { return simple_reduce(kind, n.args().is_none(1) ? -1 : 1)(n); };
}

bool lower_mean(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const ReduceShape rs = reduce_shape(n.in_type(0).sizes, mask_of(n, 1));
  KernelBuilder kb = n.kernel(rs.kept, rs.reduced);
  const DType acc = compute_dtype(out.dtype);
  const int v = kb.cast(load_for_reduce(n, kb, n.operand(0), rs), acc);
  const int sum = kb.reduce("sum", acc, v);
  const int mean = kb.math("div", acc, {sum, kb.constant(acc, static_cast<double>(rs.count()))});
  const Access o = n.realize_output(0);
  kb.store(o.buffer, kept_index(kb, rs), kb.cast(mean, out.dtype));
  n.emit(std::move(kb).finish());
  return true;
}

// var and var_mean through Welford's one-pass mean and m2.
LowerFn welford(bool with_mean) {
  return [with_mean](NodeLowering& n) {
    const ReduceShape rs = reduce_shape(n.in_type(0).sizes, mask_of(n, 1));
    const double correction = n.args().opt_float(2).value_or(1.0);
    KernelBuilder kb = n.kernel(rs.kept, rs.reduced);
    const DType acc = compute_dtype(n.out_type(0).dtype);
    const int v = kb.cast(load_for_reduce(n, kb, n.operand(0), rs), acc);
    const int w = kb.reduce("welford", acc, v);
    const int m2 = kb.extract(w, 1);
    const double denom = std::max(0.0, static_cast<double>(rs.count()) - correction);
    const int var = kb.math("div", acc, {m2, kb.constant(acc, denom)});
    const Access o = n.realize_output(0);
    kb.store(o.buffer, kept_index(kb, rs), kb.cast(var, n.out_type(0).dtype));
    if (with_mean) {
      const Access m = n.realize_output(1);
      kb.store(m.buffer, kept_index(kb, rs), kb.cast(kb.extract(w, 0), n.out_type(1).dtype));
    }
    n.emit(std::move(kb).finish());
    return true;
  };
}

// softmax / log_softmax along one dim: row max, sum of exp(x - max), then normalize.
LowerFn softmax(bool log) {
  return [log](NodeLowering& n) {
    const TensorType& in = n.in_type(0);
    const TensorType& out = n.out_type(0);
    if (in.rank() == 0) return false;
    auto dim = normalize_dim(n.args().get_int(1), in.rank());
    if (!dim) return false;
    std::vector<bool> mask(static_cast<size_t>(in.rank()), false);
    mask[static_cast<size_t>(*dim)] = true;
    const ReduceShape rs = reduce_shape(in.sizes, mask);
    const DType acc = compute_dtype(out.dtype);
    const int64_t rows = shape_numel(rs.kept);
    const int max_buf = n.temp_buffer("max", acc, rows);
    const int sum_buf = n.temp_buffer("sum", acc, rows);
    {
      KernelBuilder kb = n.kernel(rs.kept, rs.reduced);
      const int v = kb.cast(load_for_reduce(n, kb, n.operand(0), rs), acc);
      kb.store(max_buf, kept_index(kb, rs), kb.reduce("max", acc, v));
      n.emit(std::move(kb).finish());
    }
    {
      KernelBuilder kb = n.kernel(rs.kept, rs.reduced);
      const int v = kb.cast(load_for_reduce(n, kb, n.operand(0), rs), acc);
      const int m = kb.load(max_buf, acc, kept_index(kb, rs));
      const int e = kb.math("exp", acc, {kb.math("sub", acc, {v, m})});
      kb.store(sum_buf, kept_index(kb, rs), kb.reduce("sum", acc, e));
      n.emit(std::move(kb).finish());
    }
    KernelBuilder kb = n.kernel(in.sizes);
    const int v = kb.cast(n.load_operand(kb, 0, in.sizes, acc, acc), acc);
    std::vector<Expr> kept_vars;
    for (size_t i = 0; i < mask.size(); ++i)
      if (!mask[i]) kept_vars.push_back(kb.x(i));
    const Expr row = contiguous_index(rs.kept, kept_vars);
    const int m = kb.load(max_buf, acc, row);
    const int s = kb.load(sum_buf, acc, row);
    const int shifted = kb.math("sub", acc, {v, m});
    const int result = log ? kb.math("sub", acc, {shifted, kb.math("log", acc, {s})})
                           : kb.math("div", acc, {kb.math("exp", acc, {shifted}), s});
    const Access o = n.realize_output(0);
    kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()),
             kb.cast(result, out.dtype));
    n.emit(std::move(kb).finish());
    return true;
  };
}

}  // namespace

std::map<std::string, LowerFn> reduction_lowerings() {
  std::map<std::string, LowerFn> t;
  t["aten.sum.dim_IntList"] = simple_reduce("sum", 1);
  t["aten.prod.dim_int"] = simple_reduce("prod", 1);
  t["aten.amax.default"] = simple_reduce("max", 1);
  t["aten.amin.default"] = simple_reduce("min", 1);
  t["aten.any.dims"] = simple_reduce("any", 1);
  t["aten.argmax.default"] = arg_reduce("argmax");
  t["aten.argmin.default"] = arg_reduce("argmin");
  t["aten.mean.dim"] = lower_mean;
  t["aten.var.correction"] = welford(false);
  t["aten.var_mean.correction"] = welford(true);
  t["aten._softmax.default"] = softmax(false);
  t["aten._log_softmax.default"] = softmax(true);
  return t;
}

}  // namespace kiln
