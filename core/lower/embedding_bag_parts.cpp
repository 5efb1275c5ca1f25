#include "core/lower/embedding_bag_parts.h"

namespace kiln::embedding_bag {

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

void number_bags(NodeLowering& n, Bags& bags) {
  bags.buffer = n.temp_buffer("bag", DType::I64, bags.positions);
  KernelBuilder kb = n.kernel({bags.positions});
  kb.store(bags.buffer, kb.x(0), bag_search(n, kb, kb.index(kb.x(0))));
  n.emit(std::move(kb).finish());
}

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

int value_at(const BagSum& s, KernelBuilder& kb, int row, const Expr& i, const Expr& column,
             int mask) {
  int v = kb.cast(s.n.load(kb, s.n.operand(0), {kb.indirect(row), column}, mask), s.acc);
  if (s.weighted)
    v = kb.math("mul", s.acc, {v, kb.cast(s.n.load(kb, s.n.operand(6), s.place(i), mask), s.acc)});
  return v;
}

int reduce_in_acc(const BagSum& s, KernelBuilder& kb, const std::string& combine, int v) {
  const DType wide = compute_dtype(s.acc);
  return kb.cast(kb.reduce(combine, wide, kb.cast(v, wide)), s.acc);
}

}  // namespace kiln::embedding_bag
