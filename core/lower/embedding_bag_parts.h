// The pieces every embedding bag kernel reads (embedding_bag_lowering.cpp): the bags, the
// operands, where a position's row and bag are, and the numbering of positions' bags.
#pragma once

#include <string>
#include <vector>

#include "core/lower/lower_context.h"

namespace kiln::embedding_bag {

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

BagOf bag_of(KernelBuilder& kb, const Bags& bags, const Expr& i);

int i64_constant(KernelBuilder& kb, int64_t v);

// The number of the last offset at or before `position` (i64): a binary search of the
// ascending offsets unrolled to log2(offsets) loads.
int bag_search(NodeLowering& n, KernelBuilder& kb, int position);

// 1-D indices, where a position's own bag is needed (offset2bag, sizes that skip padding
// rows, max_indices): one kernel numbers each position's bag (chunk_bags checks the offsets).
void number_bags(NodeLowering& n, Bags& bags);

// What the kernels of one embedding bag read: its operands, its bags and the dtype it sums in.
struct BagSum {
  explicit BagSum(NodeLowering& node) : n(node) {}
  NodeLowering& n;
  Bags bags;
  int64_t rows = 0, dims = 0, padding = -1;
  bool weighted = false;
  DType acc = DType::F32;
  int64_t chunk = 16;  // positions per chunk of long bags (LowerOptions::bag_chunk)

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

Position position_at(const BagSum& s, KernelBuilder& kb, const Expr& i);

// The weight element of `row` at `column` for position i, in acc, times the position's
// per-sample weight if there are any; `mask` (-1: none) skips the loads.
int value_at(const BagSum& s, KernelBuilder& kb, int row, const Expr& i, const Expr& column,
             int mask = -1);

// Reductions of half types run in f32 (max's acc is the output's dtype): exact for max.
int reduce_in_acc(const BagSum& s, KernelBuilder& kb, const std::string& combine, int v);

}  // namespace kiln::embedding_bag
