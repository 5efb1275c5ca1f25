#include "core/lower/long_line_sort.h"

#include <cmath>

#include "core/lower/sort_order.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

// Element j of chunk `chunk_index` (its position in the line), and whether it lies inside
// the line (the last chunk may be short).
std::pair<Expr, int> in_chunk(KernelBuilder& kb, const Expr& chunk_index, const Expr& j,
                              int64_t chunk, int64_t len) {
  const Expr pos = kb.simplify_index(chunk_index * Expr::constant(chunk) + j);
  const int inside = kb.math("lt", DType::Bool,
                             {kb.index(pos), kb.constant(DType::I64, static_cast<double>(len))});
  return {pos, inside};
}

// Each element's rank inside its chunk of `chunk`, into `ranks` (i64, laid out like the input).
void chunk_ranks(NodeLowering& n, size_t dim, bool descending, int64_t chunk, int ranks) {
  const TensorType& in = n.in_type(0);
  const int64_t len = in.sizes[dim];
  const DType d = compute_dtype(in.dtype);
  KernelBuilder kb = n.kernel(in.sizes, {chunk});
  const std::vector<Expr> self = kb.pointwise_vars();
  const auto [pos, inside] =
      in_chunk(kb, floordiv(kb.x(dim), Expr::constant(chunk)), kb.r(0), chunk, len);
  const int a = kb.cast(n.load(kb, n.operand(0), self), d);
  const int b = kb.cast(
      n.load(kb, n.operand(0), with_dim(self, dim, clamp_index(pos, 0, len - 1)), inside), d);
  const int before = kb.math(
      "and", DType::Bool,
      {inside, sorts_before(kb, b, a, kb.index(pos), kb.index(kb.x(dim)), in.dtype, descending)});
  kb.store(ranks, contiguous_index(in.sizes, self),
           kb.reduce("sum", DType::I64, kb.cast(before, DType::I64)));
  n.emit(std::move(kb).finish());
}

}  // namespace

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

// topk in two rounds (long_line_sort.h). Candidate m of a line is place m % k of chunk
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
  chunk_ranks(n, dim, descending, chunk, chunk_rank);
  {  // 2: candidate m is the element of rank m % k in chunk m / k
    KernelBuilder kb = n.kernel(cand_sizes, {chunk});
    const std::vector<Expr> slot = kb.pointwise_vars();
    const Expr place = mod(kb.x(dim), Expr::constant(k));
    const auto [pos, inside] =
        in_chunk(kb, floordiv(kb.x(dim), Expr::constant(k)), kb.r(0), chunk, len);
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

// n*C comparisons to rank the chunks, n*(n/C)*log2(C) dependent loads to place every
// element, a load weighed as kSearchStep comparisons (each waits for the one before): the
// power of two that minimises it, when that is less than half of n^2.
constexpr double kSearchStep = 4;

int64_t sort_chunk(int64_t len) {
  int64_t best = 0;
  double best_cost = 0.5 * static_cast<double>(len) * static_cast<double>(len);
  for (int64_t chunk = 32; chunk < len; chunk *= 2) {
    const double chunks = std::ceil(static_cast<double>(len) / static_cast<double>(chunk));
    const double cost =
        static_cast<double>(len) * static_cast<double>(chunk) +
        kSearchStep * static_cast<double>(len) * chunks * std::log2(static_cast<double>(chunk));
    if (cost < best_cost) best = chunk, best_cost = cost;
  }
  return best;
}

// sort by chunks (long_line_sort.h). Slot g * C + r of a line's sorted chunks holds chunk g's
// element of rank r; the slots past a short last chunk's end are never read.
void chunked_sort(NodeLowering& n, size_t dim, bool descending, int64_t chunk) {
  const TensorType& in = n.in_type(0);
  const TensorType& out = n.out_type(0);
  const int64_t len = in.sizes[dim], chunks = (len + chunk - 1) / chunk;
  const DType d = compute_dtype(in.dtype);
  Shape sorted_sizes = in.sizes;
  sorted_sizes[dim] = chunks * chunk;
  const int64_t sorted_numel = shape_numel(sorted_sizes);
  const int chunk_rank = n.temp_buffer("sort_chunk_rank", DType::I64, in.numel());
  const int sorted_value = n.temp_buffer("sort_chunk_value", d, sorted_numel);
  const int sorted_index = n.temp_buffer("sort_chunk_index", DType::I64, sorted_numel);
  const int place = n.temp_buffer("sort_place", DType::I64, in.numel());
  chunk_ranks(n, dim, descending, chunk, chunk_rank);
  {  // each element to its chunk's sorted slots
    KernelBuilder kb = n.kernel(in.sizes);
    const std::vector<Expr> self = kb.pointwise_vars();
    const int rank = kb.load(chunk_rank, DType::I64, contiguous_index(in.sizes, self));
    const Expr slot = kb.simplify_index(contiguous_index(
        sorted_sizes, with_dim(self, dim,
                               floordiv(kb.x(dim), Expr::constant(chunk)) * Expr::constant(chunk) +
                                   clamp_index(kb.indirect(rank), 0, chunk - 1))));
    kb.scatter("store", sorted_value, slot, kb.cast(n.load(kb, n.operand(0), self), d));
    kb.scatter("store", sorted_index, slot, kb.index(kb.x(dim)));
    n.emit(std::move(kb).finish());
  }
  {  // each element's place: over the chunks, how many of theirs sort before it
    KernelBuilder kb = n.kernel(in.sizes, {chunks});
    const std::vector<Expr> self = kb.pointwise_vars();
    const int a = kb.cast(n.load(kb, n.operand(0), self), d);
    const int ia = kb.index(kb.x(dim));
    // The chunk's length: C, or what is left of the line.
    const int length = kb.index(
        min(Expr::constant(chunk), Expr::constant(len) + Expr::constant(-chunk) * kb.r(0)));
    // The count of the chunk's sorted elements before `a` grows by halving steps: a slot is
    // taken when it exists and its element sorts before `a` (the order is monotone along the
    // sorted chunk, and a is never before itself).
    int count = kb.constant(DType::I64, 0);
    for (int64_t step = chunk / 2; step >= 1; step /= 2) {
      const int next = kb.math("add", DType::I64, {count, kb.constant(DType::I64, step)});
      const int exists = kb.math("le", DType::Bool, {next, length});
      const Expr at = kb.simplify_index(contiguous_index(
          sorted_sizes,
          with_dim(self, dim,
                   kb.r(0) * Expr::constant(chunk) +
                       clamp_index(kb.indirect(next) + Expr::constant(-1), 0, chunk - 1))));
      const int b = kb.load(sorted_value, d, at, exists);
      const int ib = kb.load(sorted_index, DType::I64, at, exists);
      const int take = kb.math("and", DType::Bool,
                               {exists, sorts_before(kb, b, a, ib, ia, in.dtype, descending)});
      count = kb.where(take, next, count);
    }
    // The last slot (step 1 covers a chunk of C = 2^j with counts up to C - 1; a whole chunk
    // before `a` needs one more look).
    const int full = kb.math("eq", DType::Bool, {count, kb.constant(DType::I64, chunk - 1)});
    const Expr last = kb.simplify_index(contiguous_index(
        sorted_sizes,
        with_dim(self, dim, kb.r(0) * Expr::constant(chunk) + Expr::constant(chunk - 1))));
    const int last_exists =
        kb.math("and", DType::Bool,
                {full, kb.math("ge", DType::Bool, {length, kb.constant(DType::I64, chunk)})});
    const int b = kb.load(sorted_value, d, last, last_exists);
    const int ib = kb.load(sorted_index, DType::I64, last, last_exists);
    const int take = kb.math("and", DType::Bool,
                             {last_exists, sorts_before(kb, b, a, ib, ia, in.dtype, descending)});
    count = kb.where(take, kb.constant(DType::I64, chunk), count);
    kb.store(place, contiguous_index(in.sizes, self), kb.reduce("sum", DType::I64, count));
    n.emit(std::move(kb).finish());
  }
  // Every element to its place: the places are a permutation of the line.
  const Access values = n.realize_output(0);
  const Access indices = n.realize_output(1);
  KernelBuilder kb = n.kernel(in.sizes);
  const std::vector<Expr> self = kb.pointwise_vars();
  const int at = kb.check_index(kb.load(place, DType::I64, contiguous_index(in.sizes, self)), len);
  const Expr to =
      kb.simplify_index(contiguous_index(out.sizes, with_dim(self, dim, kb.indirect(at))));
  kb.scatter("store", values.buffer, to, kb.cast(n.load(kb, n.operand(0), self), out.dtype));
  kb.scatter("store", indices.buffer, to, kb.index(kb.x(dim)));
  n.emit(std::move(kb).finish());
}

}  // namespace kiln
