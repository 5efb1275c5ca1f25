// _embedding_bag as kernels. A position's bag is its row of a 2-D `indices`, or, for 1-D
// indices, the last offset at or before it (a binary search of the offsets). Rows are then
// summed (per_sample_weights scaling), averaged or maxed into their bag
// with KIR scatter; padding_idx rows count for nothing. For max, a second pass finds the
// first position whose row reaches the maximum (max_indices, as the reference: ties go to
// the earliest). Offsets that decrease, leave the indices or do not start at 0 fail the run
// (reported as an index out of range). Not matched yet: a NaN weight in max mode makes the
// kernel's bag NaN (max_indices -1), where the reference, as PyTorch, ignores a NaN that is
// not its bag's first element.
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

// The bag of position `i` in `kb`, and whether it is a bag at all.
// The bag is a checked index (always in range: positions in no bag read bag 0, masked off),
// so every address built from it is provably inside its buffer.
std::pair<int, int> bag_of(KernelBuilder& kb, const Bags& bags, const Expr& i) {
  const int64_t count = bags.count;
  if (bags.width > 0) {
    const int bag = kb.check_index(kb.index(floordiv(i, Expr::constant(bags.width))), count);
    return {bag, kb.constant(DType::Bool, 1)};
  }
  const int bag = kb.load(bags.buffer, DType::I64, i);
  const int valid =
      kb.math("lt", DType::Bool, {bag, kb.constant(DType::I64, static_cast<double>(count))});
  return {kb.check_index(kb.where(valid, bag, kb.constant(DType::I64, 0)), count), valid};
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

bool lower_embedding_bag(NodeLowering& n) {
  const Access& weight = n.operand(0);
  const Access& indices = n.operand(1);
  const int64_t mode = n.args().get_int(4), padding = n.args().get_int(8);
  const bool weighted = !n.args().is_none(6);
  const TensorType& out = n.out_type(0);
  Bags bags;
  bags.count = out.sizes[0];
  bags.positions = indices.type.numel();
  const int64_t rows = weight.type.sizes[0], dims = weight.type.sizes[1];
  if (bags.positions == 0 || bags.count == 0 || dims == 0) return false;
  bags.width = indices.type.rank() == 2 ? indices.type.sizes[1] : 0;
  if (bags.width == 0) number_bags(n, bags);
  const auto position = [&](const Expr& i) {
    return bags.width > 0 ? std::vector<Expr>{floordiv(i, Expr::constant(bags.width)),
                                              mod(i, Expr::constant(bags.width))}
                          : std::vector<Expr>{i};
  };
  // Row of position i (checked), and whether it counts: in a bag, not the padding row.
  // A position in no bag (after the last offset) is never read by the reference: its index
  // is not checked.
  const auto row_of = [&](KernelBuilder& kb, const Expr& i) {
    const auto [bag, valid] = bag_of(kb, bags, i);
    const int raw = kb.cast(n.load(kb, indices, position(i)), DType::I64);
    const int row = kb.check_index(kb.where(valid, raw, kb.constant(DType::I64, 0)), rows);
    int counts = valid;
    if (padding >= 0)
      counts =
          kb.math("and", DType::Bool,
                  {counts, kb.math("ne", DType::Bool,
                                   {row, kb.constant(DType::I64, static_cast<double>(padding))})});
    return std::tuple{row, bag, counts};
  };
  if (n.output_read(1)) {
    const Access offset2bag = n.realize_output(1);
    KernelBuilder kb = n.kernel({bags.positions});
    const auto [bag, valid] = bag_of(kb, bags, kb.x(0));
    kb.store(offset2bag.buffer, kb.x(0), kb.where(valid, bag, kb.constant(DType::I64, 0)));
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
    const auto [row, bag, counts] = row_of(kb, kb.x(0));
    (void)row;
    kb.scatter("sum", bag_size, kb.indirect(bag), kb.constant(DType::I64, 1), counts);
    n.emit(std::move(kb).finish());
  }
  const bool half = out.dtype == DType::F16 || out.dtype == DType::BF16;
  const DType acc = mode != kMax && half ? DType::F32 : out.dtype;
  const int64_t cells = bags.count * dims;
  std::optional<DeterministicScatterSum> fixed_point;
  const bool fixed = mode != kMax && n.deterministic() && is_floating(acc);
  // Sums in the output's dtype go straight into it: no last pass.
  const bool into_output = mode == kSum && acc == out.dtype && !fixed;
  const int sums =
      into_output ? n.realize_output(0).buffer : n.temp_buffer("bag_values", acc, cells);
  n.fill(sums, {bags.count, dims}, acc, mode == kMax ? -INFINITY : 0.0);
  // The weight element of position x0, column x1, in `acc`.
  const auto element = [&](KernelBuilder& kb, int row) {
    return kb.cast(n.load(kb, weight, {kb.indirect(row), kb.x(1)}), acc);
  };
  // Each position's row (scaled by its weight) and its place among the bags' cells.
  const auto site = [&](KernelBuilder& kb) {
    const auto [row, bag, counts] = row_of(kb, kb.x(0));
    int v = element(kb, row);
    if (weighted)
      v = kb.math("mul", acc, {v, kb.cast(n.load(kb, n.operand(6), position(kb.x(0))), acc)});
    return ScatterSite{kb.indirect(bag) * Expr::constant(dims) + kb.x(1), v, counts};
  };
  if (fixed) {
    fixed_point.emplace(n, Shape{bags.positions, dims}, site, acc, cells);
  } else {
    KernelBuilder kb = n.kernel({bags.positions, dims});
    const ScatterSite s = site(kb);
    kb.scatter(mode == kMax ? "max" : "sum", sums, s.address, s.value, s.mask);
    n.emit(std::move(kb).finish());
  }
  const bool max_indices = n.output_read(3);
  int first = -1;
  if (mode == kMax && max_indices) {
    first = n.temp_buffer("first_max", DType::I64, cells);
    n.fill(first, {bags.count, dims}, DType::I64, static_cast<double>(bags.positions));
    KernelBuilder kb = n.kernel({bags.positions, dims});
    const auto [row, bag, counts] = row_of(kb, kb.x(0));
    const Expr cell = kb.indirect(bag) * Expr::constant(dims) + kb.x(1);
    // A position outside every bag reads cell 0 (any cell: it is masked off).
    const int reached =
        kb.math("eq", DType::Bool,
                {element(kb, row), kb.load(sums, acc, kb.simplify_index(cell), counts, 0)});
    kb.scatter("min", first, cell, kb.index(kb.x(0)),
               kb.math("and", DType::Bool, {counts, reached}));
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
    const int row = kb.cast(n.load(kb, indices, position(kb.indirect(clamped))), DType::I64);
    // Wrapped like the reference's checked index (negative rows count from the end).
    const int wrapped = kb.where(
        kb.math("lt", DType::Bool, {row, kb.constant(DType::I64, 0)}),
        kb.math("add", DType::I64, {row, kb.constant(DType::I64, static_cast<double>(rows))}), row);
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
