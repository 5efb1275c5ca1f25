// _embedding_bag as kernels. A position's bag is its row of a 2-D `indices`, or, for 1-D
// indices, the last offset at or before it (a binary search of the offsets). Rows of 2-D
// indices are summed (per_sample_weights scaling), averaged or maxed by one reduction per
// bag; bags of 1-D indices, runs of any length, by one reduction per short bag and, for long
// bags, a reduction per chunk of positions and a scatter of its partials (kChunk).
// padding_idx rows count for nothing. For max, a second pass finds the first position whose
// row reaches the maximum (max_indices, as the reference: ties go to the earliest). Offsets
// that decrease, leave the indices or do not start at 0 fail the run (reported as an index
// out of range). Not matched yet: a NaN weight in max mode makes the kernel's bag NaN
// (max_indices -1), where the reference, as PyTorch, ignores a NaN that is not its bag's
// first element.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/lower/deterministic_scatter_sum.h"

namespace kiln {
namespace {

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

struct Bags {
  int64_t count = 0;      // B
  int64_t positions = 0;  // N: elements of indices
  int64_t width = 1;      // L for 2-D indices, 0 for 1-D
  int buffer = -1;        // 1-D: i64[N], the bag of each position (B or more: in no bag)
};

// The bag of a position: `bag`, a checked index (always in range: positions in no bag read
// bag 0, masked off), so every address built from it is provably inside its buffer; `valid`,
// whether it is a bag at all; `raw`, its number as numbered (count or more: no bag).
struct BagOf {
  int bag, valid, raw;
};

BagOf bag_of(KernelBuilder& kb, const Bags& bags, const Expr& i) {
  const int64_t count = bags.count;
  if (bags.width > 0) {
    const int bag = kb.check_index(kb.index(floordiv(i, Expr::constant(bags.width))), count);
    return {bag, kb.constant(DType::Bool, 1), bag};
  }
  const int raw = kb.load(bags.buffer, DType::I64, i);
  const int valid =
      kb.math("lt", DType::Bool, {raw, kb.constant(DType::I64, static_cast<double>(count))});
  return {kb.check_index(kb.where(valid, raw, kb.constant(DType::I64, 0)), count), valid, raw};
}

int i64_constant(KernelBuilder& kb, int64_t v) {
  return kb.constant(DType::I64, static_cast<double>(v));
}

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
  kb.check_index(
      kb.where(kb.math("and", DType::Bool, {ordered, inside}), at, i64_constant(kb, total + 1)),
      total + 1);
}

// The number of the last offset at or before `position` (i64): a binary search of the
// ascending offsets unrolled to log2(offsets) loads.
int bag_search(NodeLowering& n, KernelBuilder& kb, int position) {
  const Access& offsets = n.operand(2);
  const int64_t starts = offsets.type.numel();
  int bag = i64_constant(kb, 0);  // offset 0 is 0: at or before every position
  int64_t step = 1;
  while (step * 2 < starts) step *= 2;
  for (; step > 0; step /= 2) {
    const int next = kb.math("add", DType::I64, {bag, i64_constant(kb, step)});
    const int in_offsets = kb.math("lt", DType::Bool, {next, i64_constant(kb, starts)});
    const int read =
        kb.check_index(kb.math("min", DType::I64, {next, i64_constant(kb, starts - 1)}), starts);
    const int start = kb.cast(n.load(kb, offsets, {kb.indirect(read)}), DType::I64);
    const int reached =
        kb.math("and", DType::Bool, {in_offsets, kb.math("le", DType::Bool, {start, position})});
    bag = kb.where(reached, next, bag);
  }
  return bag;
}

// 1-D indices, where a position's own bag is needed (offset2bag, sizes that skip padding
// rows, max_indices): one kernel checks the offsets and numbers each position's bag. Element x
// checks offset x and numbers position x (past either's end, the last one again: checking
// twice changes nothing, and the number is not stored).
void number_bags(NodeLowering& n, Bags& bags) {
  const int64_t starts = n.operand(2).type.numel(), total = bags.positions;
  bags.buffer = n.temp_buffer("bag", DType::I64, total);
  KernelBuilder kb = n.kernel({std::max(starts, total)});
  const Expr x = kb.x(0);
  check_offset(n, kb, total, x);
  const int bag = bag_search(n, kb, kb.index(min(x, Expr::constant(total - 1))));
  kb.store(bags.buffer, x, bag, kb.math("lt", DType::Bool, {kb.index(x), i64_constant(kb, total)}));
  n.emit(std::move(kb).finish());
}

// What the kernels of one embedding bag read: its operands, its bags and the dtype it sums in.
struct BagSum {
  explicit BagSum(NodeLowering& node) : n(node) {}
  NodeLowering& n;
  Bags bags;
  int64_t rows = 0, dims = 0, padding = -1;
  bool weighted = false;
  DType acc = DType::F32;

  // Position i's place in the indices.
  std::vector<Expr> place(const Expr& i) const {
    return bags.width > 0 ? std::vector<Expr>{floordiv(i, Expr::constant(bags.width)),
                                              mod(i, Expr::constant(bags.width))}
                          : std::vector<Expr>{i};
  }
};

// Position i: its weight row (checked), its bag, and whether it counts: in a bag, not the
// padding row. A position in no bag (after the last offset) is never read by the reference:
// its index is not checked.
struct Position {
  int row, counts;
  BagOf bag;
};

Position position_at(const BagSum& s, KernelBuilder& kb, const Expr& i) {
  const BagOf bag = bag_of(kb, s.bags, i);
  const int raw = kb.cast(s.n.load(kb, s.n.operand(1), s.place(i)), DType::I64);
  const int row = kb.check_index(kb.where(bag.valid, raw, kb.constant(DType::I64, 0)), s.rows);
  int counts = bag.valid;
  if (s.padding >= 0)
    counts =
        kb.math("and", DType::Bool,
                {counts, kb.math("ne", DType::Bool,
                                 {row, kb.constant(DType::I64, static_cast<double>(s.padding))})});
  return {row, counts, bag};
}

// The weight element of `row` at `column` for position i, in acc, times the position's
// per-sample weight if there are any; `mask` (-1: none) skips the loads.
int value_at(const BagSum& s, KernelBuilder& kb, int row, const Expr& i, const Expr& column,
             int mask = -1) {
  int v = kb.cast(s.n.load(kb, s.n.operand(0), {kb.indirect(row), column}, mask), s.acc);
  if (s.weighted)
    v = kb.math("mul", s.acc, {v, kb.cast(s.n.load(kb, s.n.operand(6), s.place(i), mask), s.acc)});
  return v;
}

// Reductions of half types run in f32 (max's acc is the output's dtype): exact for max.
int reduce_in_acc(const BagSum& s, KernelBuilder& kb, const std::string& combine, int v) {
  const DType wide = compute_dtype(s.acc);
  return kb.cast(kb.reduce(combine, wide, kb.cast(v, wide)), s.acc);
}

int both(KernelBuilder& kb, int a, int b) {
  return kb.math("and", DType::Bool, {a, b});
}

// 2-D indices: bag x0 is row x0 of the indices, so one reduction over that row combines it
// into its cells: no scatter, and the same sum every run.
void combine_rows(const BagSum& s, int cells, const std::string& combine, double none) {
  const int64_t width = s.bags.width;
  KernelBuilder kb = s.n.kernel({s.bags.count, s.dims}, {width});
  const Expr i = kb.x(0) * Expr::constant(width) + kb.r(0);
  const Position at = position_at(s, kb, i);
  const int v = value_at(s, kb, at.row, i, kb.x(1));
  kb.store(cells, kb.x(0) * Expr::constant(s.dims) + kb.x(1),
           reduce_in_acc(s, kb, combine, kb.where(at.counts, v, kb.constant(s.acc, none))));
  s.n.emit(std::move(kb).finish());
}

// 1-D indices: bags are runs of consecutive positions of any length. Short bags (under
// kChunk positions) are combined by one reduction per bag over kChunk steps, the steps past
// the bag's end masked off, and stored. Long bags go in chunks of kChunk positions: a long
// bag cannot lie wholly inside a chunk, so a chunk's positions of long bags belong to its
// first bag or its last; per chunk and column a reduction combines each apart, and a scatter
// sends those two partials into the bags' cells: two scattered values per chunk and column
// instead of one per position. kChunk: rows this short go one per GPU thread, threads along
// the columns.
constexpr int64_t kChunk = 16;

// Bag b's first position and the position after its last (i64), b a checked index.
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

int is_long(KernelBuilder& kb, std::pair<int, int> span) {
  return kb.math("ge", DType::Bool,
                 {kb.math("sub", DType::I64, {span.second, span.first}), i64_constant(kb, kChunk)});
}

// Position `p` (i64, a checked index into the indices) when `inside` its bag: its weight row
// (checked only then, as the reference reads only positions in bags) and whether it counts
// (inside, not the padding row).
std::pair<int, int> row_at(const BagSum& s, KernelBuilder& kb, int p, int inside) {
  const int raw = kb.cast(s.n.load(kb, s.n.operand(1), {kb.indirect(p)}), DType::I64);
  const int row = kb.check_index(kb.where(inside, raw, i64_constant(kb, 0)), s.rows);
  int counts = inside;
  if (s.padding >= 0)
    counts = both(kb, counts, kb.math("ne", DType::Bool, {row, i64_constant(kb, s.padding)}));
  return {row, counts};
}

// Short bags, one reduction row per bag and column, stored into `cells`; a long bag's cells
// get `none` (nothing combined), for the chunks' partials to combine into.
void combine_short_bags(const BagSum& s, int cells, const std::string& combine, double none) {
  const int64_t count = s.bags.count, total = s.bags.positions;
  KernelBuilder kb = s.n.kernel({count, s.dims}, {kChunk});
  const auto span = bag_span(s, kb, kb.check_index(kb.index(kb.x(0)), count));
  const int longer = is_long(kb, span);
  const int step = kb.index(kb.r(0));
  const int p = kb.math("add", DType::I64, {span.first, step});
  const int inside =
      both(kb, kb.math("not", DType::Bool, {longer}), kb.math("lt", DType::Bool, {p, span.second}));
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
  const int64_t starts = s.n.operand(2).type.numel(), chunks = (total + kChunk - 1) / kChunk;
  const int info = s.n.temp_buffer("chunk_bags", DType::I64, chunks * 4);
  KernelBuilder kb = s.n.kernel({std::max(starts, chunks)});
  const Expr x = kb.x(0);
  check_offset(s.n, kb, total, x);
  const Expr c = min(x, Expr::constant(chunks - 1));
  const Expr begin = c * Expr::constant(kChunk);
  const int lo = kb.index(begin), hi = kb.index(begin + Expr::constant(kChunk));
  const int first = bag_search(s.n, kb, lo);
  const int last = bag_search(
      s.n, kb, kb.index(min(begin + Expr::constant(kChunk - 1), Expr::constant(total - 1))));
  const auto long_bag = [&](int b) {  // b < starts: a search's answer
    const int valid = kb.math("lt", DType::Bool, {b, i64_constant(kb, count)});
    const auto span = bag_span(s, kb, kb.check_index(b, starts));
    return std::pair{both(kb, valid, is_long(kb, span)), span};
  };
  const auto [first_long, first_span] = long_bag(first);
  const auto [last_long, last_span] = long_bag(last);
  const int last_apart = both(kb, last_long, kb.math("ne", DType::Bool, {last, first}));
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

// acc[chunks, 2, dims]: per chunk and column, its first long bag's positions combined, then
// its last's.
int combine_chunks(const BagSum& s, int info, const std::string& combine, double none) {
  const int64_t total = s.bags.positions, chunks = (total + kChunk - 1) / kChunk;
  const int parts = s.n.temp_buffer("chunk_parts", s.acc, chunks * 2 * s.dims);
  KernelBuilder kb = s.n.kernel({chunks, s.dims}, {kChunk});
  const Expr i = kb.x(0) * Expr::constant(kChunk) + kb.r(0);
  const int p = kb.index(i);
  const auto read = [&](int64_t k) {
    return kb.load(info, DType::I64, kb.x(0) * Expr::constant(4) + Expr::constant(k));
  };
  const int in_first = kb.math("lt", DType::Bool, {p, read(1)});
  const int in_last = both(kb, kb.math("ge", DType::Bool, {p, read(3)}),
                           kb.math("lt", DType::Bool, {p, i64_constant(kb, total)}));
  const int inside = kb.math("or", DType::Bool, {in_first, in_last});
  const int at = kb.check_index(kb.where(inside, p, i64_constant(kb, 0)), total);
  const auto [row, counts] = row_at(s, kb, at, inside);
  const int v = value_at(s, kb, row, kb.indirect(at), kb.x(1));
  const int nothing = kb.constant(s.acc, none);
  const Expr cell = kb.x(0) * Expr::constant(2 * s.dims) + kb.x(1);
  kb.store(parts, cell,
           reduce_in_acc(s, kb, combine, kb.where(both(kb, counts, in_first), v, nothing)));
  kb.store(parts, cell + Expr::constant(s.dims),
           reduce_in_acc(s, kb, combine, kb.where(both(kb, counts, in_last), v, nothing)));
  s.n.emit(std::move(kb).finish());
  return parts;
}

// Over [chunks, 2, dims]: partial (x0, x1) goes into its long bag's cell, if it has one.
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

bool lower_embedding_bag(NodeLowering& n) {
  const Access& weight = n.operand(0);
  const Access& indices = n.operand(1);
  const int64_t mode = n.args().get_int(4);
  const TensorType& out = n.out_type(0);
  BagSum s(n);
  s.bags.count = out.sizes[0];
  s.bags.positions = indices.type.numel();
  s.rows = weight.type.sizes[0];
  s.dims = weight.type.sizes[1];
  s.padding = n.args().get_int(8);
  s.weighted = !n.args().is_none(6);
  const Bags& bags = s.bags;
  const int64_t dims = s.dims;
  if (bags.positions == 0 || bags.count == 0 || dims == 0) return false;
  s.bags.width = indices.type.rank() == 2 ? indices.type.sizes[1] : 0;
  const bool sized = n.output_read(2) || mode != kSum;
  // Positions' own bags (1-D): what offset2bag, sizes without padding rows and max_indices
  // read; the sums themselves go by bag spans.
  if (bags.width == 0 &&
      (n.output_read(1) || (sized && s.padding >= 0) || (mode == kMax && n.output_read(3))))
    number_bags(n, s.bags);
  if (n.output_read(1)) {
    const Access offset2bag = n.realize_output(1);
    KernelBuilder kb = n.kernel({bags.positions});
    const BagOf bag = bag_of(kb, bags, kb.x(0));
    kb.store(offset2bag.buffer, kb.x(0), kb.where(bag.valid, bag.bag, kb.constant(DType::I64, 0)));
    n.emit(std::move(kb).finish());
  }
  // Bag sizes: an output, and what mean divides by and max tells empty bags by.
  int bag_size = -1;
  if (n.output_read(2))
    bag_size = n.realize_output(2).buffer;
  else if (sized)
    bag_size = n.temp_buffer("bag_size", DType::I64, bags.count);
  if (bag_size >= 0 && bags.width == 0 && s.padding < 0) {  // every position counts
    KernelBuilder kb = n.kernel({bags.count});
    const auto [start, end] = bag_span(s, kb, kb.check_index(kb.index(kb.x(0)), bags.count));
    kb.store(bag_size, kb.x(0), kb.math("sub", DType::I64, {end, start}));
    n.emit(std::move(kb).finish());
  } else if (bag_size >= 0) {
    n.fill(bag_size, {bags.count}, DType::I64, 0);
    KernelBuilder kb = n.kernel({bags.positions});
    const Position at = position_at(s, kb, kb.x(0));
    kb.scatter("sum", bag_size, kb.indirect(at.bag.bag), kb.constant(DType::I64, 1), at.counts);
    n.emit(std::move(kb).finish());
  }
  const bool half = out.dtype == DType::F16 || out.dtype == DType::BF16;
  s.acc = mode != kMax && half ? DType::F32 : out.dtype;
  const DType acc = s.acc;
  const int64_t cells = bags.count * dims;
  const std::string combine = mode == kMax ? "max" : "sum";
  const double none = mode == kMax ? -INFINITY : 0.0;
  std::optional<DeterministicScatterSum> fixed_point;
  // Float sums scattered from chunks depend on the order they arrive in (rows do not).
  const bool fixed = mode != kMax && bags.width == 0 && n.deterministic() && is_floating(acc);
  // Sums in the output's dtype go straight into it: no last pass.
  const bool into_output = mode == kSum && acc == out.dtype && !fixed;
  const int sums =
      into_output ? n.realize_output(0).buffer : n.temp_buffer("bag_values", acc, cells);
  if (bags.width > 0) {
    combine_rows(s, sums, combine, none);
  } else {
    combine_short_bags(s, sums, combine, none);  // every cell: long bags' hold `none`
    const int info = chunk_bags(s);
    const int parts = combine_chunks(s, info, combine, none);
    const auto site = [&](KernelBuilder& kb) { return chunk_site(s, info, parts, kb); };
    const Shape space{(bags.positions + kChunk - 1) / kChunk, 2, dims};
    if (fixed) {
      fixed_point.emplace(n, space, site, acc, cells);
    } else {
      KernelBuilder kb = n.kernel(space);
      const ScatterSite at = site(kb);
      kb.scatter(combine, sums, at.address, at.value, at.mask);
      n.emit(std::move(kb).finish());
    }
  }
  const bool max_indices = n.output_read(3);
  int first = -1;
  if (mode == kMax && max_indices) {
    first = n.temp_buffer("first_max", DType::I64, cells);
    n.fill(first, {bags.count, dims}, DType::I64, static_cast<double>(bags.positions));
    KernelBuilder kb = n.kernel({bags.positions, dims});
    const Position at = position_at(s, kb, kb.x(0));
    const Expr cell = kb.indirect(at.bag.bag) * Expr::constant(dims) + kb.x(1);
    // A position outside every bag reads cell 0 (any cell: it is masked off).
    const int reached = kb.math("eq", DType::Bool,
                                {value_at(s, kb, at.row, kb.x(0), kb.x(1)),
                                 kb.load(sums, acc, kb.simplify_index(cell), at.counts, 0)});
    kb.scatter("min", first, cell, kb.index(kb.x(0)), both(kb, at.counts, reached));
    n.emit(std::move(kb).finish());
  } else if (max_indices) {
    n.fill(n.realize_output(3).buffer, {bags.count}, DType::I64, 0);
  }
  if (into_output) return true;
  KernelBuilder kb = n.kernel({bags.count, dims});
  const Expr at = contiguous_index({bags.count, dims}, kb.pointwise_vars());
  int v = kb.load(sums, acc, at);
  // Mean divides by the bag's size; max gives empty bags 0 (sum needs no sizes).
  const int size = mode == kSum ? -1 : kb.load(bag_size, DType::I64, kb.x(0));
  const int empty =
      mode == kSum ? -1 : kb.math("eq", DType::Bool, {size, kb.constant(DType::I64, 0)});
  if (fixed_point) v = fixed_point->add_to(kb, at, v);
  if (mode == kMean)
    v = kb.math("div", acc, {v, kb.cast(kb.where(empty, kb.constant(DType::I64, 1), size), acc)});
  if (mode == kMax) v = kb.where(empty, kb.constant(acc, 0), v);
  if (mode == kMax && max_indices) {
    const int p = kb.load(first, DType::I64, at);
    const int found = kb.math("lt", DType::Bool,
                              {p, kb.constant(DType::I64, static_cast<double>(bags.positions))});
    const int clamped =
        kb.check_index(kb.where(found, p, kb.constant(DType::I64, 0)), bags.positions);
    const int row = kb.cast(n.load(kb, indices, s.place(kb.indirect(clamped))), DType::I64);
    // Wrapped like the reference's checked index (negative rows count from the end).
    const int wrapped = kb.where(
        kb.math("lt", DType::Bool, {row, kb.constant(DType::I64, 0)}),
        kb.math("add", DType::I64, {row, kb.constant(DType::I64, static_cast<double>(s.rows))}),
        row);
    kb.store(n.realize_output(3).buffer, at, kb.where(found, wrapped, kb.constant(DType::I64, -1)));
  }
  n.store_output(kb, v);
  return true;
}

}  // namespace

std::map<std::string, LowerFn> embedding_bag_lowerings() {
  return {{"aten._embedding_bag.default", lower_embedding_bag},
          {"aten._embedding_bag_forward_only.default", lower_embedding_bag}};
}

}  // namespace kiln
