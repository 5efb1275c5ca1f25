#include "core/lower/embedding_bag_spans.h"

#include <algorithm>

#include "core/lower/window_index.h"

namespace kiln::embedding_bag {

std::pair<int, int> bag_span(const BagSum& s, KernelBuilder& kb, int b) {
  const Access& offsets = s.n.operand(2);
  const int64_t starts = offsets.type.numel();
  const int start = kb.cast(s.n.load(kb, offsets, {kb.indirect(b)}), DType::I64);
  const int next = kb.math("add", DType::I64, {b, i64_constant(kb, 1)});
  const int has_next = kb.math("lt", DType::Bool, {next, i64_constant(kb, starts)});
  const int read =
      kb.check_index(kb.math("min", DType::I64, {next, i64_constant(kb, starts - 1)}), starts);
  const int end =
      kb.where(has_next, kb.cast(s.n.load(kb, offsets, {kb.indirect(read)}), DType::I64),
               i64_constant(kb, s.bags.positions));
  return {start, end};
}

namespace {

// Checks offset min(x, starts - 1): 0 first, then ascending, none past the end of the
// indices. A bad offset fails the check as index `total + 1`.
void check_offset(NodeLowering& n, KernelBuilder& kb, int64_t total, const Expr& x) {
  const Access& offsets = n.operand(2);
  const int64_t starts = offsets.type.numel();
  const Expr b = min(x, Expr::constant(starts - 1));
  const int at = kb.cast(n.load(kb, offsets, {b}), DType::I64);
  const int before =
      kb.cast(n.load(kb, offsets, {max(b + Expr::constant(-1), Expr::constant(0))}), DType::I64);
  const int first = kb.math("eq", DType::Bool, {kb.index(b), i64_constant(kb, 0)});
  const int ordered = kb.where(first, kb.math("eq", DType::Bool, {at, i64_constant(kb, 0)}),
                               kb.math("ge", DType::Bool, {at, before}));
  const int inside = kb.math("le", DType::Bool, {at, i64_constant(kb, total)});
  kb.check_index(kb.where(mask_and(kb, ordered, inside), at, i64_constant(kb, total + 1)),
                 total + 1);
}

int is_long(const BagSum& s, KernelBuilder& kb, std::pair<int, int> span) {
  return kb.math(
      "ge", DType::Bool,
      {kb.math("sub", DType::I64, {span.second, span.first}), i64_constant(kb, s.chunk)});
}

// Position `p` (i64, a checked index into the indices) when `inside` its bag: its weight row
// (checked only then, as the reference reads only positions in bags) and whether it counts
// (inside, not the padding row).
std::pair<int, int> row_at(const BagSum& s, KernelBuilder& kb, int p, int inside) {
  const int raw = kb.cast(s.n.load(kb, s.n.operand(1), {kb.indirect(p)}), DType::I64);
  const int row = kb.check_index(kb.where(inside, raw, i64_constant(kb, 0)), s.rows);
  int counts = inside;
  if (s.padding >= 0)
    counts = mask_and(kb, counts, kb.math("ne", DType::Bool, {row, i64_constant(kb, s.padding)}));
  return {row, counts};
}

}  // namespace

void combine_short_bags(const BagSum& s, int cells, const std::string& combine, double none) {
  const int64_t count = s.bags.count, total = s.bags.positions;
  KernelBuilder kb = s.n.kernel({count, s.dims}, {s.chunk});
  const auto span = bag_span(s, kb, kb.check_index(kb.index(kb.x(0)), count));
  const int longer = is_long(s, kb, span);
  const int step = kb.index(kb.r(0));
  const int p = kb.math("add", DType::I64, {span.first, step});
  const int inside = mask_and(kb, kb.math("not", DType::Bool, {longer}),
                              kb.math("lt", DType::Bool, {p, span.second}));
  const int at = kb.check_index(kb.where(inside, p, i64_constant(kb, 0)), total);
  const auto [row, counts] = row_at(s, kb, at, inside);
  const int v = value_at(s, kb, row, kb.indirect(at), kb.x(1));
  kb.store(cells, kb.x(0) * Expr::constant(s.dims) + kb.x(1),
           reduce_in_acc(s, kb, combine, kb.where(counts, v, kb.constant(s.acc, none))));
  s.n.emit(std::move(kb).finish());
}

// i64[chunks, 2, 2]: per chunk, (the first bag if long, else count; the end of its positions
// in the chunk) and (the last bag if long and not the first, else count; the start of its
// positions in the chunk). The same kernel checks the offsets, element x offset x.
int chunk_bags(const BagSum& s) {
  const int64_t total = s.bags.positions, count = s.bags.count;
  const int64_t starts = s.n.operand(2).type.numel(), chunks = (total + s.chunk - 1) / s.chunk;
  const int info = s.n.temp_buffer("chunk_bags", DType::I64, chunks * 4);
  KernelBuilder kb = s.n.kernel({std::max(starts, chunks)});
  const Expr x = kb.x(0);
  check_offset(s.n, kb, total, x);
  const Expr c = min(x, Expr::constant(chunks - 1));
  const Expr begin = c * Expr::constant(s.chunk);
  const int lo = kb.index(begin), hi = kb.index(begin + Expr::constant(s.chunk));
  const int first = bag_search(s.n, kb, lo);
  const int last = bag_search(
      s.n, kb, kb.index(min(begin + Expr::constant(s.chunk - 1), Expr::constant(total - 1))));
  const auto long_bag = [&](int b) {  // b < starts: a search's answer
    const int valid = kb.math("lt", DType::Bool, {b, i64_constant(kb, count)});
    const auto span = bag_span(s, kb, kb.check_index(b, starts));
    return std::pair{mask_and(kb, valid, is_long(s, kb, span)), span};
  };
  const auto [first_long, first_span] = long_bag(first);
  const auto [last_long, last_span] = long_bag(last);
  const int last_apart = mask_and(kb, last_long, kb.math("ne", DType::Bool, {last, first}));
  const int none = i64_constant(kb, count);
  const int store = kb.math("lt", DType::Bool, {kb.index(x), i64_constant(kb, chunks)});
  const Expr at = c * Expr::constant(4);
  kb.store(info, at, kb.where(first_long, first, none), store);
  kb.store(info, at + Expr::constant(1),
           kb.where(first_long, kb.math("min", DType::I64, {first_span.second, hi}), lo), store);
  kb.store(info, at + Expr::constant(2), kb.where(last_apart, last, none), store);
  kb.store(info, at + Expr::constant(3),
           kb.where(last_apart, kb.math("max", DType::I64, {last_span.first, lo}), hi), store);
  s.n.emit(std::move(kb).finish());
  return info;
}

int combine_chunks(const BagSum& s, int info, const std::string& combine, double none) {
  const int64_t total = s.bags.positions, chunks = (total + s.chunk - 1) / s.chunk;
  const int parts = s.n.temp_buffer("chunk_parts", s.acc, chunks * 2 * s.dims);
  KernelBuilder kb = s.n.kernel({chunks, s.dims}, {s.chunk});
  const Expr i = kb.x(0) * Expr::constant(s.chunk) + kb.r(0);
  const int p = kb.index(i);
  const auto read = [&](int64_t k) {
    return kb.load(info, DType::I64, kb.x(0) * Expr::constant(4) + Expr::constant(k));
  };
  const int in_first = kb.math("lt", DType::Bool, {p, read(1)});
  const int in_last = mask_and(kb, kb.math("ge", DType::Bool, {p, read(3)}),
                               kb.math("lt", DType::Bool, {p, i64_constant(kb, total)}));
  const int inside = kb.math("or", DType::Bool, {in_first, in_last});
  const int at = kb.check_index(kb.where(inside, p, i64_constant(kb, 0)), total);
  const auto [row, counts] = row_at(s, kb, at, inside);
  const int v = value_at(s, kb, row, kb.indirect(at), kb.x(1));
  const int nothing = kb.constant(s.acc, none);
  const Expr cell = kb.x(0) * Expr::constant(2 * s.dims) + kb.x(1);
  // Stored only for a long bag (chunk_site reads no other): a chunk inside short bags writes
  // nothing (256 bags of 32 positions wrote 786 KB of partials nobody read).
  const auto has_bag = [&](int64_t k) {
    return kb.math("lt", DType::Bool, {read(k), i64_constant(kb, s.bags.count)});
  };
  kb.store(parts, cell,
           reduce_in_acc(s, kb, combine, kb.where(mask_and(kb, counts, in_first), v, nothing)),
           has_bag(0));
  kb.store(parts, cell + Expr::constant(s.dims),
           reduce_in_acc(s, kb, combine, kb.where(mask_and(kb, counts, in_last), v, nothing)),
           has_bag(2));
  s.n.emit(std::move(kb).finish());
  return parts;
}

ScatterSite chunk_site(const BagSum& s, int info, int parts, KernelBuilder& kb) {
  const int64_t count = s.bags.count;
  const int bag =
      kb.load(info, DType::I64, kb.x(0) * Expr::constant(4) + kb.x(1) * Expr::constant(2));
  const int valid = kb.math("lt", DType::Bool, {bag, i64_constant(kb, count)});
  const int target = kb.check_index(kb.where(valid, bag, i64_constant(kb, 0)), count);
  const Expr part =
      kb.x(0) * Expr::constant(2 * s.dims) + kb.x(1) * Expr::constant(s.dims) + kb.x(2);
  return {kb.indirect(target) * Expr::constant(s.dims) + kb.x(2),
          kb.load(parts, s.acc, kb.simplify_index(part), valid, 0), valid};
}

}  // namespace kiln::embedding_bag
