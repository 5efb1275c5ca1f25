// _cdist_forward and _pdist_forward as Reduction kernels: one row per pair of vectors over
// their columns, combined as p_norm.h says for p. pdist's rows are its output's pairs.
#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/p_norm.h"

namespace kiln {
namespace {

// The row's distance from the differences `diff` (one per reduction step).
int distance(KernelBuilder& kb, int diff, double p, DType acc) {
  const int a = kb.math("abs", acc, {diff});
  switch (p_norm_kind(p)) {
    case PNorm::Zero:
      return kb.reduce("sum", acc,
                       kb.cast(kb.math("ne", DType::Bool, {diff, kb.constant(acc, 0)}), acc));
    case PNorm::One:
      return kb.reduce("sum", acc, a);
    case PNorm::Two:
      return kb.math("sqrt", acc, {kb.reduce("sum", acc, kb.math("mul", acc, {diff, diff}))});
    case PNorm::Inf:
      return kb.reduce("max", acc, a);
    case PNorm::General:
      break;
  }
  const int sum = kb.reduce("sum", acc, kb.math("pow", acc, {a, kb.constant(acc, p)}));
  return kb.math("pow", acc, {sum, kb.constant(acc, 1 / p)});
}

int difference(NodeLowering& n, KernelBuilder& kb, const Access& a, const std::vector<Expr>& ia,
               const Access& b, const std::vector<Expr>& ib, DType acc) {
  return kb.math("sub", acc, {kb.cast(n.load(kb, a, ia), acc), kb.cast(n.load(kb, b, ib), acc)});
}

// _cdist_forward(x1 [*, P, M], x2 [*, R, M], p, compute_mode)
bool cdist(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const int64_t m = n.in_type(0).sizes.back();
  if (m == 0 || out.numel() == 0) return false;
  const size_t r = out.sizes.size();
  KernelBuilder kb = n.kernel(out.sizes, {m});
  std::vector<Expr> i1, i2;
  for (size_t d = 0; d + 2 < r; ++d) {
    i1.push_back(kb.x(d));
    i2.push_back(kb.x(d));
  }
  i1.insert(i1.end(), {kb.x(r - 2), kb.r(0)});
  i2.insert(i2.end(), {kb.x(r - 1), kb.r(0)});
  const DType acc = compute_dtype(out.dtype);
  const int diff = difference(n, kb, n.operand(0), i1, n.operand(1), i2, acc);
  const int dist = distance(kb, diff, n.args().get_float(2), acc);
  n.store_output(kb, dist);
  return true;
}

// The row of pair k (k < N*(N-1)/2) in the upper triangle, row-major: pair (i, j), j > i,
// sits at start(i) + (j - i - 1) with start(i) = i*(2N - i - 1)/2. A square root in f64
// estimates i; integer steps correct the estimate by one either way.
int pair_row(KernelBuilder& kb, int k, int64_t rows) {
  const auto i64 = [&](int64_t v) { return kb.constant(DType::I64, static_cast<double>(v)); };
  const auto f64 = [&](double v) { return kb.constant(DType::F64, v); };
  const double b = 2.0 * static_cast<double>(rows) - 1;
  const int disc =
      kb.math("sub", DType::F64,
              {f64(b * b), kb.math("mul", DType::F64, {f64(8), kb.cast(k, DType::F64)})});
  const int root = kb.math("sqrt", DType::F64, {kb.math("max", DType::F64, {disc, f64(0)})});
  int i = kb.cast(
      kb.math("floor", DType::F64,
              {kb.math("mul", DType::F64, {kb.math("sub", DType::F64, {f64(b), root}), f64(0.5)})}),
      DType::I64);
  i = kb.math("min", DType::I64, {kb.math("max", DType::I64, {i, i64(0)}), i64(rows - 2)});
  auto start = [&](int row) {  // row*(2N - row - 1)/2
    return kb.math(
        "floordiv", DType::I64,
        {kb.math("mul", DType::I64, {row, kb.math("sub", DType::I64, {i64(2 * rows - 1), row})}),
         i64(2)});
  };
  const int below = kb.math("gt", DType::Bool, {start(i), k});
  i = kb.where(below, kb.math("sub", DType::I64, {i, i64(1)}), i);
  const int next = kb.math("add", DType::I64, {i, i64(1)});
  const int above = kb.math("le", DType::Bool, {start(next), k});
  return kb.where(above, next, i);
}

// _pdist_forward(self [N, M], p): a row per pair, over the pair's columns.
bool pdist(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const int64_t rows = n.in_type(0).sizes[0], m = n.in_type(0).sizes[1];
  if (m == 0 || out.numel() == 0) return false;
  KernelBuilder kb = n.kernel(out.sizes, {m});
  const int k = kb.index(kb.x(0));
  const int i = pair_row(kb, k, rows);
  const int start = kb.math(
      "floordiv", DType::I64,
      {kb.math("mul", DType::I64,
               {i, kb.math("sub", DType::I64,
                           {kb.constant(DType::I64, static_cast<double>(2 * rows - 1)), i})}),
       kb.constant(DType::I64, 2)});
  // j = k - start(i) + i + 1
  const int j = kb.math("add", DType::I64,
                        {kb.math("sub", DType::I64, {k, start}),
                         kb.math("add", DType::I64, {i, kb.constant(DType::I64, 1)})});
  const Expr row_i = clamp_index(kb.indirect(i), 0, rows - 1);
  const Expr row_j = clamp_index(kb.indirect(j), 0, rows - 1);
  const DType acc = compute_dtype(out.dtype);
  const int diff =
      difference(n, kb, n.operand(0), {row_i, kb.r(0)}, n.operand(0), {row_j, kb.r(0)}, acc);
  const int dist = distance(kb, diff, n.args().get_float(1), acc);
  n.store_output(kb, dist);
  return true;
}

}  // namespace

std::map<std::string, LowerFn> distance_lowerings() {
  return {{"aten._cdist_forward.default", cdist}, {"aten._pdist_forward.default", pdist}};
}

}  // namespace kiln
