// masked_scatter: the k-th place the mask selects (row-major over self) takes source's k-th
// element. k is the selected places' prefix count (scan_lowering.h) less one; a source with fewer
// elements than the mask selects fails the index check, as the reference reports.
#include "core/lower/scan_lowering.h"

namespace kiln {
namespace {

// The coordinates in a tensor of `sizes` that broadcasts to coordinates `at` of a larger one.
std::vector<Expr> broadcast_from(const std::vector<Expr>& at, const Shape& sizes) {
  std::vector<Expr> out;
  const size_t lead = at.size() - sizes.size();
  for (size_t d = 0; d < sizes.size(); ++d)
    out.push_back(sizes[d] == 1 ? Expr::constant(0) : at[lead + d]);
  return out;
}

bool lower_masked_scatter(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Access& mask = n.operand(1);
  const Access& source = n.operand(2);
  if (out.numel() == 0 || source.type.numel() == 0) return false;
  const Access o = n.realize_output(0);
  const auto selected = [&](KernelBuilder& kb, const Expr& linear) {
    return n.load(kb, mask, broadcast_from(unravel_index(linear, out.sizes), mask.type.sizes));
  };
  scan(
      n, "sum", {out.numel()}, 0, DType::I64,
      [&](KernelBuilder& kb, const std::vector<Expr>& at) {
        return kb.cast(selected(kb, at[0]), DType::I64);
      },
      [&](KernelBuilder& kb, const std::vector<Expr>& at, int count, int in_range) {
        const int chosen = selected(kb, at[0]);
        const int k = kb.math("sub", DType::I64, {count, kb.constant(DType::I64, 1)});
        const int place =
            kb.check_index(kb.where(chosen, k, kb.constant(DType::I64, 0)), source.type.numel());
        const int from_source =
            n.load(kb, source, unravel_index(kb.indirect(place), source.type.sizes));
        const int from_self = n.load(kb, n.operand(0), unravel_index(at[0], out.sizes));
        kb.store(o.buffer, at[0], kb.cast(kb.where(chosen, from_source, from_self), out.dtype),
                 in_range);
        n.emit(std::move(kb).finish());
      });
  return true;
}

}  // namespace

std::map<std::string, LowerFn> masked_scatter_lowerings() {
  return {{"aten.masked_scatter.default", lower_masked_scatter}};
}

}  // namespace kiln
