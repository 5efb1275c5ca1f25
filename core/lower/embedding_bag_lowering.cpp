// _embedding_bag as kernels. A position's bag is its row of a 2-D `indices`, or, for 1-D
// indices, the last offset at or before it (a binary search of the offsets). Rows of 2-D
// indices are summed (per_sample_weights scaling), averaged or maxed by one reduction per
// bag; bags of 1-D indices, runs of any length, by one reduction per short bag and, for long
// bags, a reduction per chunk of positions and a scatter of its partials (embedding_bag_spans.h).
// padding_idx rows count for nothing. For max, a second pass finds the first position whose
// row reaches the maximum (max_indices, as the reference: ties go to the earliest). Offsets
// that decrease, leave the indices or do not start at 0 fail the run (reported as an index
// out of range). Not matched yet: a NaN weight in max mode makes the kernel's bag NaN
// (max_indices -1), where the reference, as PyTorch, ignores a NaN that is not its bag's
// first element.
#include <cmath>
#include <optional>

#include "core/lower/deterministic_scatter_sum.h"
#include "core/lower/embedding_bag_spans.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

using namespace embedding_bag;  // NOLINT: the pieces this rule is made of

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

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
  s.chunk = n.options().bag_chunk;
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
    const Shape space{(bags.positions + s.chunk - 1) / s.chunk, 2, dims};
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
    kb.scatter("min", first, cell, kb.index(kb.x(0)), mask_and(kb, at.counts, reached));
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
