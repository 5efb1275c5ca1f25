#include "core/lower/long_line_sort.h"

#include <algorithm>
#include <bit>

#include "core/lower/sort_order.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

// Pairs of runs merge per level. Groups of four (three binary searches per element, half the
// levels) measured slower on an H200: 0.15 -> 0.18 ms for 8 vocabulary-long lines, 0.43 ->
// 0.53 ms for 2^20 values (bench/results/2026-11-27-h200-merge-tree/).
// A binary-search step (a dependent load) weighed as this many comparisons, and a kernel
// launch as this many comparisons (shared by the lines it sorts).
constexpr double kSearchStep = 4;
constexpr double kLaunch = 1 << 19;

// The runs of each level: level l's run j holds the first cap(l) in sort order of the line's
// elements [j * span(l), (j + 1) * span(l)).
struct MergeTree {
  int64_t len, keep, chunk, lines;

  int64_t span(int l) const { return chunk << l; }
  int64_t cap(int l) const { return std::min(keep, span(l)); }
  int64_t runs(int l) const { return (len + span(l) - 1) / span(l); }
  int64_t slots(int l) const { return runs(l) * cap(l); }
  // Levels above 0 until one run is left.
  int levels() const {
    int l = 0;
    while (runs(l) > 1) ++l;
    return l;
  }
  // How many elements run `j` (an index expression) holds: past the line's end, none.
  Expr length(int l, const Expr& j) const {
    return min(Expr::constant(cap(l)),
               max(Expr::constant(0), Expr::constant(len) + Expr::constant(-span(l)) * j));
  }
  double cost() const {
    double steps = static_cast<double>(len) * static_cast<double>(chunk);
    for (int l = 0; l < levels(); ++l)
      steps += kSearchStep * static_cast<double>(slots(l)) * std::bit_width(uint64_t(cap(l)));
    return steps + kLaunch / static_cast<double>(lines) * (levels() + 2);
  }
};

// Each element's rank inside its chunk of `chunk`, into `ranks` (i64, laid out like the input).
void chunk_ranks(NodeLowering& n, size_t dim, bool descending, int64_t chunk, int ranks) {
  const TensorType& in = n.in_type(0);
  const int64_t len = in.sizes[dim];
  const DType d = compute_dtype(in.dtype);
  KernelBuilder kb = n.kernel(in.sizes, {chunk});
  const std::vector<Expr> self = kb.pointwise_vars();
  const Expr pos = kb.simplify_index(
      floordiv(kb.x(dim), Expr::constant(chunk)) * Expr::constant(chunk) + kb.r(0));
  const int inside = kb.math("lt", DType::Bool,
                             {kb.index(pos), kb.constant(DType::I64, static_cast<double>(len))});
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

// A level's storage: the line's runs one after another, `values` (compute dtype) and
// `indices` (each element's position in the input line).
struct Runs {
  int values, indices;
};

Shape with_size(Shape sizes, size_t dim, int64_t size) {
  sizes[dim] = size;
  return sizes;
}

}  // namespace

int64_t merge_tree_chunk(int64_t len, int64_t keep, int64_t lines) {
  int64_t best = 0;
  // One round: every element ranked against the line, then each kept place finds its element.
  double best_cost = static_cast<double>(len) * static_cast<double>(len + keep) +
                     2 * kLaunch / static_cast<double>(lines);
  for (int64_t chunk = 16; chunk < len; chunk *= 2) {
    if (const double cost = MergeTree{len, keep, chunk, lines}.cost(); cost < best_cost)
      best = chunk, best_cost = cost;
  }
  return best;
}

void merge_tree_sort(NodeLowering& n, size_t dim, bool descending, int64_t keep, int64_t chunk) {
  const TensorType& in = n.in_type(0);
  const TensorType& out = n.out_type(0);
  const int64_t lines = in.numel() / in.sizes[dim];
  const MergeTree tree{in.sizes[dim], keep, chunk, lines};
  const int levels = tree.levels();
  const DType d = compute_dtype(in.dtype);
  int64_t most = 0;  // the largest level kept in a temporary buffer
  for (int l = 0; l < levels; ++l) most = std::max(most, tree.slots(l));
  const Runs buffers[2] = {{n.temp_buffer("merge_values_a", d, lines * most),
                            n.temp_buffer("merge_indices_a", DType::I64, lines * most)},
                           {n.temp_buffer("merge_values_b", d, lines * most),
                            n.temp_buffer("merge_indices_b", DType::I64, lines * most)}};
  const int ranks = n.temp_buffer("merge_chunk_rank", DType::I64, in.numel());
  chunk_ranks(n, dim, descending, chunk, ranks);
  {  // level 0: each chunk's first cap(0) in order
    KernelBuilder kb = n.kernel(in.sizes);
    const std::vector<Expr> self = kb.pointwise_vars();
    const int rank = kb.load(ranks, DType::I64, contiguous_index(in.sizes, self));
    const int kept = kb.math("lt", DType::Bool,
                             {rank, kb.constant(DType::I64, static_cast<double>(tree.cap(0)))});
    const Expr slot = kb.simplify_index(contiguous_index(
        with_size(in.sizes, dim, tree.slots(0)),
        with_dim(self, dim,
                 floordiv(kb.x(dim), Expr::constant(chunk)) * Expr::constant(tree.cap(0)) +
                     clamp_index(kb.indirect(rank), 0, tree.cap(0) - 1))));
    kb.scatter("store", buffers[0].values, slot, kb.cast(n.load(kb, n.operand(0), self), d), kept);
    kb.scatter("store", buffers[0].indices, slot, kb.index(kb.x(dim)), kept);
    n.emit(std::move(kb).finish());
  }
  for (int l = 0; l < levels; ++l) {  // level l + 1: pairs of runs merged
    const Runs& from = buffers[l % 2];
    const Runs& to = buffers[(l + 1) % 2];
    const bool last = l + 1 == levels;
    const int64_t cap = tree.cap(l), next_cap = tree.cap(l + 1);
    const Shape sizes = with_size(in.sizes, dim, tree.slots(l));
    KernelBuilder kb = n.kernel(sizes);
    const std::vector<Expr> self = kb.pointwise_vars();
    const Expr run = floordiv(kb.x(dim), Expr::constant(cap));
    const Expr offset = mod(kb.x(dim), Expr::constant(cap));
    const Expr is_right = mod(run, Expr::constant(2));
    const Expr partner = run + Expr::constant(1) + Expr::constant(-2) * is_right;
    const auto cmp = [&](const char* fn, int x, int y) { return kb.math(fn, DType::Bool, {x, y}); };
    const int real = cmp("lt", kb.index(offset), kb.index(tree.length(l, run)));
    const int partner_length = kb.index(tree.length(l, partner));
    const Expr here = contiguous_index(sizes, self);
    const int a = kb.load(from.values, d, here, real);
    const SortPivot pivot = sort_pivot(kb, a, in.dtype);
    const int ia = kb.load(from.indices, DType::I64, here, real);
    // The slot before the partner's first, computed once (each step's index stays short).
    const int before_partner = kb.index(partner * Expr::constant(cap) + Expr::constant(-1));
    // Runs hold disjoint stretches of the line, so ties go the same way against the whole
    // partner: its elements come earlier in the line when it is the left run of the pair.
    const int partner_earlier = cmp("eq", kb.index(is_right), kb.constant(DType::I64, 1));
    // How many of the partner's elements sort before `a`: steps from the largest power of
    // two within cap reach every count up to cap.
    int count = kb.constant(DType::I64, 0);
    for (int64_t step = std::bit_floor(uint64_t(cap)); step >= 1; step /= 2) {
      const int next = kb.math("add", DType::I64, {count, kb.constant(DType::I64, step)});
      const int exists = cmp("and", real, cmp("le", next, partner_length));
      const Expr at = kb.simplify_index(contiguous_index(
          sizes, with_dim(self, dim,
                          clamp_index(kb.indirect(before_partner) + kb.indirect(next), 0,
                                      tree.slots(l) - 1))));
      const int b = kb.load(from.values, d, at, exists);
      count = kb.where(
          cmp("and", exists, sorts_before(kb, b, pivot, partner_earlier, in.dtype, descending)),
          next, count);
    }
    const int place = kb.math("add", DType::I64, {kb.index(offset), count});
    const int kept = cmp("and", real, cmp("lt", place, kb.constant(DType::I64, double(next_cap))));
    const Expr slot = floordiv(run, Expr::constant(2)) * Expr::constant(next_cap) +
                      clamp_index(kb.indirect(place), 0, next_cap - 1);
    if (last) {
      const Expr at = kb.simplify_index(contiguous_index(out.sizes, with_dim(self, dim, slot)));
      kb.scatter("store", n.realize_output(0).buffer, at, kb.cast(a, out.dtype), kept);
      kb.scatter("store", n.realize_output(1).buffer, at, ia, kept);
    } else {
      const Expr at = kb.simplify_index(
          contiguous_index(with_size(in.sizes, dim, tree.slots(l + 1)), with_dim(self, dim, slot)));
      kb.scatter("store", to.values, at, a, kept);
      kb.scatter("store", to.indices, at, ia, kept);
    }
    n.emit(std::move(kb).finish());
  }
}

}  // namespace kiln
