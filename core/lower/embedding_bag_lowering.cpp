// _embedding_bag as kernels. A position's bag is its row of a 2-D `indices`, or, for 1-D
// indices, the last offset at or before it (a binary search of the offsets). Rows of 2-D
// indices are summed (per_sample_weights scaling), averaged or maxed by one reduction per
// bag; bags of 1-D indices, runs of any length, by a reduction per chunk of positions and a
// scatter of its partials (combine_chunks). padding_idx rows count for nothing. For max, a
// second pass finds the first position whose row reaches the maximum (max_indices, as the
// reference: ties go to the earliest). Offsets that decrease, leave the indices or do not
// start at 0 fail the run (reported as an index out of range). Not matched yet: a NaN weight
// in max mode makes the kernel's bag NaN (max_indices -1), where the reference, as PyTorch,
// ignores a NaN that is not its bag's first element.
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

// 1-D indices: one kernel checks the offsets and numbers each position's bag: the last
// offset at or before the position, by a binary search of the ascending offsets unrolled to
// log2(offsets) loads. Element x checks offset x and numbers position x (past either's end,
// the last one again: checking twice changes nothing, and the number is not stored).
void number_bags(NodeLowering& n, Bags& bags) {
  const Access& offsets = n.operand(2);
  const int64_t starts = offsets.type.numel(), total = bags.positions;
  bags.buffer = n.temp_buffer("bag", DType::I64, total);
  KernelBuilder kb = n.kernel({std::max(starts, total)});
  const auto i64 = [&](int v) { return kb.cast(v, DType::I64); };
  const auto constant = [&](int64_t v) { return kb.constant(DType::I64, static_cast<double>(v)); };
  const Expr x = kb.x(0);
  const Expr b = min(x, Expr::constant(starts - 1));
  const int at = i64(n.load(kb, offsets, {b}));
  const int before = i64(n.load(kb, offsets, {max(b + Expr::constant(-1), Expr::constant(0))}));
  const int first = kb.math("eq", DType::Bool, {kb.index(b), constant(0)});
  const int ordered = kb.where(first, kb.math("eq", DType::Bool, {at, constant(0)}),
                               kb.math("ge", DType::Bool, {at, before}));
  const int inside = kb.math("le", DType::Bool, {at, constant(total)});
  // A bad offset fails the check as index `total + 1`.
  kb.check_index(kb.where(kb.math("and", DType::Bool, {ordered, inside}), at, constant(total + 1)),
                 total + 1);
  const int position = kb.index(min(x, Expr::constant(total - 1)));
  int bag = constant(0);  // offset 0 is 0: at or before every position
  int64_t step = 1;
  while (step * 2 < starts) step *= 2;
  for (; step > 0; step /= 2) {
    const int next = kb.math("add", DType::I64, {bag, constant(step)});
    const int in_offsets = kb.math("lt", DType::Bool, {next, constant(starts)});
    const int read =
        kb.check_index(kb.math("min", DType::I64, {next, constant(starts - 1)}), starts);
    const int start = i64(n.load(kb, offsets, {kb.indirect(read)}));
    const int reached =
        kb.math("and", DType::Bool, {in_offsets, kb.math("le", DType::Bool, {start, position})});
    bag = kb.where(reached, next, bag);
  }
  kb.store(bags.buffer, x, bag, kb.math("lt", DType::Bool, {kb.index(x), constant(total)}));
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

// 1-D indices: bags are runs of consecutive positions of any length, so positions go in
// chunks of kChunk. Per chunk and column, a reduction combines the positions of the chunk's
// first bag and, apart, those of its last bag; a scatter then sends those two partials, and
// each position of a bag lying wholly inside the chunk, into the bags' cells. Bags of kChunk
// positions or more take at most two scattered values per chunk instead of one per position
// (kChunk: rows this short go one per GPU thread, threads along the columns).
constexpr int64_t kChunk = 16;

struct ChunkParts {
  int first = -1, last = -1;  // acc[chunks, dims]: the chunk's first and last bag's partials
};

// The numbers (raw) of the first and last bags of chunk `c`.
std::pair<int, int> chunk_ends(const BagSum& s, KernelBuilder& kb, const Expr& c) {
  const Expr start = c * Expr::constant(kChunk);
  const Expr end = min(start + Expr::constant(kChunk - 1), Expr::constant(s.bags.positions - 1));
  return {kb.load(s.bags.buffer, DType::I64, start), kb.load(s.bags.buffer, DType::I64, end)};
}

ChunkParts combine_chunks(const BagSum& s, const std::string& combine, double none) {
  const int64_t total = s.bags.positions, chunks = (total + kChunk - 1) / kChunk;
  ChunkParts parts;
  parts.first = s.n.temp_buffer("chunk_first", s.acc, chunks * s.dims);
  parts.last = s.n.temp_buffer("chunk_last", s.acc, chunks * s.dims);
  KernelBuilder kb = s.n.kernel({chunks, s.dims}, {kChunk});
  const Expr unclamped = kb.x(0) * Expr::constant(kChunk) + kb.r(0);
  const Expr i = min(unclamped, Expr::constant(total - 1));  // the last chunk may be short
  const Position at = position_at(s, kb, i);
  const auto [first, last] = chunk_ends(s, kb, kb.x(0));
  const auto eq = [&](int a, int b) { return kb.math("eq", DType::Bool, {a, b}); };
  const int live =
      both(kb, at.counts,
           kb.math("lt", DType::Bool,
                   {kb.index(unclamped), kb.constant(DType::I64, static_cast<double>(total))}));
  const int v = value_at(s, kb, at.row, i, kb.x(1));
  const int nothing = kb.constant(s.acc, none);
  const int in_first = both(kb, live, eq(at.bag.raw, first));
  const int in_last =
      both(kb, both(kb, live, eq(at.bag.raw, last)), kb.math("ne", DType::Bool, {last, first}));
  const Expr cell = kb.x(0) * Expr::constant(s.dims) + kb.x(1);
  kb.store(parts.first, cell, reduce_in_acc(s, kb, combine, kb.where(in_first, v, nothing)));
  kb.store(parts.last, cell, reduce_in_acc(s, kb, combine, kb.where(in_last, v, nothing)));
  s.n.emit(std::move(kb).finish());
  return parts;
}

// Over [positions, dims]: a chunk's first position sends the chunk's first-bag partial, its
// last position the last-bag partial (when that is another bag), every other position its
// own value when its bag is neither.
ScatterSite chunk_site(const BagSum& s, const ChunkParts& parts, KernelBuilder& kb) {
  const int64_t total = s.bags.positions, count = s.bags.count;
  const Expr i = kb.x(0), c = floordiv(i, Expr::constant(kChunk));
  const auto i64 = [&](int64_t v) { return kb.constant(DType::I64, static_cast<double>(v)); };
  const auto cmp = [&](const char* fn, int a, int b) { return kb.math(fn, DType::Bool, {a, b}); };
  const Position at = position_at(s, kb, i);
  const auto [first, last] = chunk_ends(s, kb, c);
  const int offset = kb.index(mod(i, Expr::constant(kChunk)));
  const int starts = cmp("eq", offset, i64(0));
  const int ends =
      both(kb, cmp("ne", offset, i64(0)),
           kb.math("or", DType::Bool,
                   {cmp("eq", offset, i64(kChunk - 1)), cmp("eq", kb.index(i), i64(total - 1))}));
  const int inner =
      both(kb, both(kb, cmp("ne", offset, i64(0)), cmp("ne", offset, i64(kChunk - 1))),
           cmp("ne", kb.index(i), i64(total - 1)));
  const int send_first = both(kb, starts, cmp("lt", first, i64(count)));
  const int send_last =
      both(kb, both(kb, ends, cmp("ne", last, first)), cmp("lt", last, i64(count)));
  const int send_own = both(kb, both(kb, inner, at.counts),
                            both(kb, cmp("ne", at.bag.raw, first), cmp("ne", at.bag.raw, last)));
  const Expr part = c * Expr::constant(s.dims) + kb.x(1);
  const int value = kb.where(
      send_first, kb.load(parts.first, s.acc, kb.simplify_index(part), send_first, 0),
      kb.where(send_last, kb.load(parts.last, s.acc, kb.simplify_index(part), send_last, 0),
               value_at(s, kb, at.row, i, kb.x(1), send_own)));
  const int mask =
      kb.math("or", DType::Bool, {send_first, kb.math("or", DType::Bool, {send_last, send_own})});
  const int bag =
      kb.check_index(kb.where(send_first, first,
                              kb.where(send_last, last, kb.where(send_own, at.bag.raw, i64(0)))),
                     count);
  return {kb.indirect(bag) * Expr::constant(s.dims) + kb.x(1), value, mask};
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
  if (bags.width == 0) number_bags(n, s.bags);
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
  else if (mode != kSum)
    bag_size = n.temp_buffer("bag_size", DType::I64, bags.count);
  if (bag_size >= 0) {
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
    n.fill(sums, {bags.count, dims}, acc, none);
    const ChunkParts parts = combine_chunks(s, combine, none);
    const auto site = [&](KernelBuilder& kb) { return chunk_site(s, parts, kb); };
    if (fixed) {
      fixed_point.emplace(n, Shape{bags.positions, dims}, site, acc, cells);
    } else {
      KernelBuilder kb = n.kernel({bags.positions, dims});
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
