// cumsum, cumprod, sort and topk from Reduction kernels (KIR has no sort primitive):
//  - cumsum and cumprod as a scan along the dim (scan_lowering.h).
//  - sort and topk by rank: an element's place is the count of elements that sort before it
//    (scan_sort_order.h: NaN last ascending, first descending, ties by index), O(n^2) per
//    line; each output place then finds the element of that rank (the first index whose
//    rank matches) and reads it.
//  - topk of long lines in two rounds: each chunk of C elements ranks inside itself and keeps
//    its first k as candidates (value and index), then the candidates rank among themselves.
//    Every element of the top k is among its chunk's top k, so the result is the same, for
//    n*C + (n*k/C)^2 comparisons instead of n^2 (n = 50257, k = 50: 0.1% of them).
#include <cmath>

#include "core/lower/scan_lowering.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

// `vars` with the dim's variable replaced by `at`.
std::vector<Expr> with_dim(std::vector<Expr> vars, size_t dim, const Expr& at) {
  vars[dim] = at;
  return vars;
}

}  // namespace

namespace {

// cumsum/cumprod: a scan along the dim in the output's compute dtype.
LowerFn scan_along(const char* kind) {
  return [kind](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    if (out.numel() == 0 || out.rank() == 0) return false;
    const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(1), out.rank()));
    const Access o = n.realize_output(0);
    scan(
        n, kind, out.sizes, dim, compute_dtype(out.dtype),
        [&](KernelBuilder& kb, const std::vector<Expr>& at) {
          return kb.cast(n.load(kb, n.operand(0), at), out.dtype);
        },
        [&](KernelBuilder& kb, const std::vector<Expr>& at, int so_far, int mask) {
          kb.store(o.buffer, contiguous_index(out.sizes, at), kb.cast(so_far, out.dtype), mask);
          n.emit(std::move(kb).finish());
        });
    return true;
  };
}

// Whether element b (reduction side) sorts before element a (this row's element); `ib` and
// `ia` are their positions in the line (i64 values), which break ties.
int sorts_before(KernelBuilder& kb, int b, int a, int ib, int ia, DType d, bool descending) {
  const auto cmp = [&](const char* fn, int x, int y) { return kb.math(fn, DType::Bool, {x, y}); };
  const int earlier = cmp("lt", ib, ia);
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

// The chunk length that makes a two-round topk cheapest (n*C + (n*k/C)^2 comparisons, least
// near C = cbrt(2 n k^2)), at least 2k; 0 when one round over the whole line is as cheap.
int64_t topk_chunk(int64_t len, int64_t k) {
  const double ideal = std::cbrt(2.0 * static_cast<double>(len) * static_cast<double>(k * k));
  const int64_t chunk = std::max<int64_t>(2 * k, (static_cast<int64_t>(ideal) + 31) / 32 * 32);
  const int64_t chunks = (len + chunk - 1) / chunk;
  const double two_rounds = static_cast<double>(len) * static_cast<double>(chunk) +
                            std::pow(static_cast<double>(chunks * k), 2);
  return chunk < len && two_rounds < 0.5 * static_cast<double>(len) * static_cast<double>(len)
             ? chunk
             : 0;
}

// topk in two rounds (the file's comment). Candidate m of a line is place m % k of chunk
// m / k; a chunk shorter than k leaves places empty, marked by a negative index, which sort
// after every real candidate.
void chunked_topk(NodeLowering& n, size_t dim, bool descending, int64_t k, int64_t chunk) {
  const TensorType& in = n.in_type(0);
  const TensorType& out = n.out_type(0);
  const int64_t len = in.sizes[dim], chunks = (len + chunk - 1) / chunk, m = chunks * k;
  const DType d = compute_dtype(in.dtype);
  Shape cand_sizes = in.sizes;
  cand_sizes[dim] = m;
  const int64_t cand_numel = shape_numel(cand_sizes);
  const int chunk_rank = n.temp_buffer("topk_chunk_rank", DType::I64, in.numel());
  const int cand_value = n.temp_buffer("topk_candidate", d, cand_numel);
  const int cand_index = n.temp_buffer("topk_candidate_index", DType::I64, cand_numel);
  const int cand_rank = n.temp_buffer("topk_candidate_rank", DType::I64, cand_numel);
  // Element j of the chunk that holds position `at`, and whether it lies inside the line.
  const auto in_chunk = [&](KernelBuilder& kb, const Expr& chunk_index, const Expr& j) {
    const Expr pos = kb.simplify_index(chunk_index * Expr::constant(chunk) + j);
    const int inside = kb.math("lt", DType::Bool,
                               {kb.index(pos), kb.constant(DType::I64, static_cast<double>(len))});
    return std::pair{pos, inside};
  };
  {  // 1: each element's rank inside its chunk
    KernelBuilder kb = n.kernel(in.sizes, {chunk});
    const std::vector<Expr> self = kb.pointwise_vars();
    const auto [pos, inside] = in_chunk(kb, floordiv(kb.x(dim), Expr::constant(chunk)), kb.r(0));
    const int a = kb.cast(n.load(kb, n.operand(0), self), d);
    const int b = kb.cast(
        n.load(kb, n.operand(0), with_dim(self, dim, clamp_index(pos, 0, len - 1)), inside), d);
    const int before = kb.math(
        "and", DType::Bool,
        {inside, sorts_before(kb, b, a, kb.index(pos), kb.index(kb.x(dim)), in.dtype, descending)});
    kb.store(chunk_rank, contiguous_index(in.sizes, self),
             kb.reduce("sum", DType::I64, kb.cast(before, DType::I64)));
    n.emit(std::move(kb).finish());
  }
  {  // 2: candidate m is the element of rank m % k in chunk m / k
    KernelBuilder kb = n.kernel(cand_sizes, {chunk});
    const std::vector<Expr> slot = kb.pointwise_vars();
    const Expr place = mod(kb.x(dim), Expr::constant(k));
    const auto [pos, inside] = in_chunk(kb, floordiv(kb.x(dim), Expr::constant(k)), kb.r(0));
    const Expr at = clamp_index(pos, 0, len - 1);
    const int rank =
        kb.load(chunk_rank, DType::I64,
                kb.simplify_index(contiguous_index(in.sizes, with_dim(slot, dim, at))), inside, -1);
    const int match = kb.math("eq", DType::Bool, {rank, kb.index(place)});
    const int found = kb.reduce("argmax", DType::I64, kb.cast(match, DType::I64));
    const int any = kb.reduce("max", DType::I64, kb.cast(match, DType::I64));
    const Expr from = kb.simplify_index(clamp_index(
        floordiv(kb.x(dim), Expr::constant(k)) * Expr::constant(chunk) + kb.indirect(found), 0,
        len - 1));
    const Expr here = contiguous_index(cand_sizes, slot);
    kb.store(cand_value, here, kb.cast(n.load(kb, n.operand(0), with_dim(slot, dim, from)), d));
    // -1 - m: distinct and negative
    const int empty = kb.index(Expr::constant(-1) + Expr::constant(-1) * kb.x(dim));
    kb.store(cand_index, here,
             kb.where(kb.math("gt", DType::Bool, {any, kb.constant(DType::I64, 0)}), kb.index(from),
                      empty));
    n.emit(std::move(kb).finish());
  }
  {  // 3: each candidate's rank among its line's candidates (empty places last)
    KernelBuilder kb = n.kernel(cand_sizes, {m});
    const std::vector<Expr> self = kb.pointwise_vars();
    const std::vector<Expr> other = with_dim(self, dim, kb.r(0));
    const auto at = [&](const std::vector<Expr>& v) {
      return kb.simplify_index(contiguous_index(cand_sizes, v));
    };
    const int a = kb.load(cand_value, d, at(self)), ia = kb.load(cand_index, DType::I64, at(self));
    const int b = kb.load(cand_value, d, at(other)),
              ib = kb.load(cand_index, DType::I64, at(other));
    const auto cmp = [&](const char* fn, int x, int y) { return kb.math(fn, DType::Bool, {x, y}); };
    const int zero = kb.constant(DType::I64, 0);
    const int real_a = cmp("ge", ia, zero), real_b = cmp("ge", ib, zero);
    // Empty places: after every real one, among themselves by (negated) position.
    const int both_empty =
        cmp("and", kb.math("not", DType::Bool, {real_a}), kb.math("not", DType::Bool, {real_b}));
    const int before = cmp("or", cmp("and", real_b, kb.math("not", DType::Bool, {real_a})),
                           cmp("or", cmp("and", both_empty, cmp("gt", ib, ia)),
                               cmp("and", cmp("and", real_a, real_b),
                                   sorts_before(kb, b, a, ib, ia, in.dtype, descending))));
    kb.store(cand_rank, at(self), kb.reduce("sum", DType::I64, kb.cast(before, DType::I64)));
    n.emit(std::move(kb).finish());
  }
  // 4: output place p is the candidate of rank p
  KernelBuilder kb = n.kernel(out.sizes, {m});
  const std::vector<Expr> place = kb.pointwise_vars();
  const auto cand_at = [&](const Expr& j) {
    return kb.simplify_index(contiguous_index(cand_sizes, with_dim(place, dim, j)));
  };
  const int rank = kb.load(cand_rank, DType::I64, cand_at(kb.r(0)));
  const int match = kb.cast(kb.math("eq", DType::Bool, {rank, kb.index(kb.x(dim))}), DType::I64);
  const int found = kb.reduce("argmax", DType::I64, match);
  const Expr from = clamp_index(kb.indirect(found), 0, m - 1);
  const Access values = n.realize_output(0);
  const Access indices = n.realize_output(1);
  const Expr here = contiguous_index(out.sizes, place);
  kb.store(values.buffer, here, kb.cast(kb.load(cand_value, d, cand_at(from)), out.dtype));
  kb.store(indices.buffer, here, kb.load(cand_index, DType::I64, cand_at(from)));
  n.emit(std::move(kb).finish());
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
    if (is_topk) {
      if (const int64_t chunk = topk_chunk(len, out.sizes[dim]); chunk > 0) {
        chunked_topk(n, dim, descending, out.sizes[dim], chunk);
        return true;
      }
    }
    const DType d = compute_dtype(in.dtype);
    const int ranks = n.temp_buffer(is_topk ? "topk_rank" : "sort_rank", DType::I64, in.numel());
    {
      KernelBuilder kb = n.kernel(in.sizes, {len});
      const std::vector<Expr> self = kb.pointwise_vars();
      const int a = kb.cast(n.load(kb, n.operand(0), self), d);
      const int b = kb.cast(n.load(kb, n.operand(0), with_dim(self, dim, kb.r(0))), d);
      const int before =
          sorts_before(kb, b, a, kb.index(kb.r(0)), kb.index(kb.x(dim)), in.dtype, descending);
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
  return {{"aten.cumsum.default", scan_along("sum")},
          {"aten.cumprod.default", scan_along("prod")},
          {"aten.sort.default", sort_like(1, 2, false)},
          {"aten.topk.default", sort_like(2, 3, true)}};
}

}  // namespace kiln
