// cumsum, sort and topk without a scan or sort primitive in KIR, from Reduction kernels:
//  - cumsum as a blocked prefix sum (prefix_sum.h), O(n * sqrt(n)) per line.
//  - sort and topk by rank: an element's place is the count of elements that sort before it
//    (scan_sort_order.h: NaN last ascending, first descending, ties by index), O(n^2) per
//    line; each output place then finds the element of that rank (the first index whose
//    rank matches) and reads it.
#include <cmath>

#include "core/lower/prefix_sum.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

// `vars` with the dim's variable replaced by `at`.
std::vector<Expr> with_dim(std::vector<Expr> vars, size_t dim, const Expr& at) {
  vars[dim] = at;
  return vars;
}

}  // namespace

void blocked_prefix_sum(NodeLowering& n, const Shape& sizes, size_t dim, DType acc,
                        const PrefixElement& element, const PrefixFinish& finish) {
  const int64_t len = sizes[dim];
  const auto block = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(len))));
  const int64_t blocks = (len + block - 1) / block;
  Shape per_block = sizes;
  per_block[dim] = blocks;
  const int sums = n.temp_buffer("block_sums", acc, shape_numel(per_block));
  const int before = n.temp_buffer("block_prefix", acc, shape_numel(per_block));
  const auto at_dim = [&](KernelBuilder& kb, const Expr& at, int mask) {
    return kb.cast(element(kb, with_dim(kb.pointwise_vars(), dim, at), mask), acc);
  };
  {  // each block's sum
    KernelBuilder kb = n.kernel(per_block, {block});
    const Expr at = kb.x(dim) * Expr::constant(block) + kb.r(0);
    const int inside = between(kb, at, 0, Expr::constant(len));
    const int v = at_dim(kb, clamp_index(at, 0, len - 1), inside);
    kb.store(sums, contiguous_index(per_block, kb.pointwise_vars()), kb.reduce("sum", acc, v));
    n.emit(std::move(kb).finish());
  }
  {  // the sum of the blocks before each block
    KernelBuilder kb = n.kernel(per_block, {blocks});
    const int earlier = kb.math("lt", DType::Bool, {kb.index(kb.r(0)), kb.index(kb.x(dim))});
    const int v = kb.load(
        sums, acc,
        kb.simplify_index(contiguous_index(per_block, with_dim(kb.pointwise_vars(), dim, kb.r(0)))),
        earlier);
    kb.store(before, contiguous_index(per_block, kb.pointwise_vars()), kb.reduce("sum", acc, v));
    n.emit(std::move(kb).finish());
  }
  KernelBuilder kb = n.kernel(sizes, {block});
  const Expr first = floordiv(kb.x(dim), Expr::constant(block)) * Expr::constant(block);
  const Expr at = first + kb.r(0);
  const int upto = kb.math("le", DType::Bool, {kb.index(at), kb.index(kb.x(dim))});
  const int partial = kb.reduce("sum", acc, at_dim(kb, clamp_index(at, 0, len - 1), upto));
  const int prefix = kb.load(before, acc,
                             kb.simplify_index(contiguous_index(
                                 per_block, with_dim(kb.pointwise_vars(), dim,
                                                     floordiv(kb.x(dim), Expr::constant(block))))));
  finish(kb, kb.math("add", acc, {prefix, partial}));
}

namespace {

bool cumsum(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0 || out.rank() == 0) return false;
  const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(1), out.rank()));
  blocked_prefix_sum(
      n, out.sizes, dim, compute_dtype(out.dtype),
      [&](KernelBuilder& kb, const std::vector<Expr>& at, int mask) {
        return kb.cast(n.load(kb, n.operand(0), at, mask), out.dtype);
      },
      [&](KernelBuilder& kb, int sum) { n.store_output(kb, sum); });
  return true;
}

// Whether element b (reduction side) sorts before element a (this row's element).
int sorts_before(KernelBuilder& kb, int b, int a, const Expr& ib, const Expr& ia, DType d,
                 bool descending) {
  const auto cmp = [&](const char* fn, int x, int y) { return kb.math(fn, DType::Bool, {x, y}); };
  const int earlier = cmp("lt", kb.index(ib), kb.index(ia));
  int same = cmp("eq", b, a);
  int ahead = cmp(descending ? "gt" : "lt", b, a);
  if (is_floating(d)) {
    const int bn = kb.math("isnan", DType::Bool, {b}), an = kb.math("isnan", DType::Bool, {a});
    same = cmp("or", same, cmp("and", bn, an));
    // Descending: a NaN b comes before any number; ascending: any number before a NaN a.
    const int nan_first = descending ? cmp("and", bn, kb.math("not", DType::Bool, {an}))
                                     : cmp("and", an, kb.math("not", DType::Bool, {bn}));
    ahead = cmp("or", ahead, nan_first);
  }
  return cmp("or", cmp("and", kb.math("not", DType::Bool, {same}), ahead),
             cmp("and", same, earlier));
}

// sort(self, dim, descending) and topk(self, k, dim, largest, sorted): the first `keep` places.
LowerFn sort_like(int dim_arg, int descending_arg, bool is_topk) {
  return [=](NodeLowering& n) {
    const TensorType& in = n.in_type(0);
    const TensorType& out = n.out_type(0);
    if (in.numel() == 0 || out.numel() == 0 || in.rank() == 0) return false;
    const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(dim_arg), in.rank()));
    const bool descending = n.args().get_bool(descending_arg);
    const int64_t len = in.sizes[dim];
    const DType d = compute_dtype(in.dtype);
    const int ranks = n.temp_buffer(is_topk ? "topk_rank" : "sort_rank", DType::I64, in.numel());
    {
      KernelBuilder kb = n.kernel(in.sizes, {len});
      const std::vector<Expr> self = kb.pointwise_vars();
      const int a = kb.cast(n.load(kb, n.operand(0), self), d);
      const int b = kb.cast(n.load(kb, n.operand(0), with_dim(self, dim, kb.r(0))), d);
      const int before = sorts_before(kb, b, a, kb.r(0), kb.x(dim), in.dtype, descending);
      kb.store(ranks, contiguous_index(in.sizes, self),
               kb.reduce("sum", DType::I64, kb.cast(before, DType::I64)));
      n.emit(std::move(kb).finish());
    }
    KernelBuilder kb = n.kernel(out.sizes, {len});
    const std::vector<Expr> place = kb.pointwise_vars();
    const int rank =
        kb.load(ranks, DType::I64,
                kb.simplify_index(contiguous_index(in.sizes, with_dim(place, dim, kb.r(0)))));
    const int match = kb.cast(kb.math("eq", DType::Bool, {rank, kb.index(kb.x(dim))}), DType::I64);
    const int found = kb.reduce("argmax", DType::I64, match);
    const Expr from = clamp_index(kb.indirect(found), 0, len - 1);
    const int value = n.load(kb, n.operand(0), with_dim(place, dim, from));
    const Access values = n.realize_output(0);
    const Access indices = n.realize_output(1);
    const Expr at = contiguous_index(out.sizes, place);
    kb.store(values.buffer, at, kb.cast(value, out.dtype));
    kb.store(indices.buffer, at, found);
    n.emit(std::move(kb).finish());
    return true;
  };
}

}  // namespace

std::map<std::string, LowerFn> scan_sort_lowerings() {
  return {{"aten.cumsum.default", cumsum},
          {"aten.sort.default", sort_like(1, 2, false)},
          {"aten.topk.default", sort_like(2, 3, true)}};
}

}  // namespace kiln
