#include "core/lower/advanced_index_at.h"

namespace kiln {

std::vector<std::optional<TensorType>> list_types(const NodeLowering& n, int arg) {
  const auto& items = n.args().tensor_list(arg).items;
  std::vector<std::optional<TensorType>> types;
  for (size_t k = 0; k < items.size(); ++k)
    types.push_back(items[k] ? std::optional(n.list_operand(arg, k).type) : std::nullopt);
  return types;
}

std::vector<Expr> advanced_index_at(NodeLowering& n, KernelBuilder& kb, const AdvancedIndex& plan,
                                    int list_arg, const std::vector<Expr>& vars) {
  const Shape& self = n.in_type(0).sizes;
  // Result dims: kept dims before the block (adjacent only), the broadcast block, the rest.
  size_t before = 0;
  if (plan.adjacent) {
    for (size_t d : plan.kept) before += d < plan.insert_at ? 1 : 0;
  }
  const std::vector<Expr> block(
      vars.begin() + static_cast<std::ptrdiff_t>(before),
      vars.begin() + static_cast<std::ptrdiff_t>(before + plan.broadcast.size()));
  std::vector<Expr> idx(self.size());
  size_t next_kept = 0;
  for (size_t d : plan.kept) {
    const bool in_front = plan.adjacent && d < plan.insert_at;
    idx[d] = in_front ? vars[next_kept] : vars[plan.broadcast.size() + next_kept];
    ++next_kept;
  }
  for (int k : plan.indexed) {
    const Access& a = n.list_operand(list_arg, static_cast<size_t>(k));
    std::vector<Expr> at;
    const size_t offset = plan.broadcast.size() - a.type.sizes.size();
    for (size_t i = 0; i < a.type.sizes.size(); ++i)
      at.push_back(a.type.sizes[i] == 1 ? Expr::constant(0) : block[offset + i]);
    const int checked = kb.check_index(n.load(kb, a, at), self[static_cast<size_t>(k)]);
    idx[static_cast<size_t>(k)] = kb.indirect(checked);
  }
  return idx;
}

}  // namespace kiln
