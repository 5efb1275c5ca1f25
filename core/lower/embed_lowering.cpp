// select_scatter and slice_scatter as elementwise kernels: each output element is src's
// element where it lies in the embedded view and self's elsewhere, so they fuse with their
// neighbours like any pointwise op and write each element once.
#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/indexing.h"
#include "core/ops/slice_bounds.h"

namespace kiln {
namespace {

// out = inside ? src[src_index] : self, elementwise over the output.
void emit_embed(NodeLowering& n, KernelBuilder& kb, int inside,
                const std::vector<Expr>& src_index) {
  const TensorType& out = n.out_type(0);
  const int src = kb.cast(n.load(kb, n.operand(1), src_index, inside), out.dtype);
  const int self = kb.cast(n.load(kb, n.operand(0), kb.pointwise_vars()), out.dtype);
  n.store_output(kb, kb.where(inside, src, self));
}

// select_scatter(self, src, dim, index)
bool select_scatter(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(2), out.rank()));
  const int64_t index = checked_index(n.args().get_int(3), out.sizes[dim], "select_scatter");
  KernelBuilder kb = n.kernel(out.sizes);
  std::vector<Expr> at = kb.pointwise_vars();
  const int inside = kb.math(
      "eq", DType::Bool, {kb.index(at[dim]), kb.constant(DType::I64, static_cast<double>(index))});
  at.erase(at.begin() + static_cast<std::ptrdiff_t>(dim));
  emit_embed(n, kb, inside, at);
  return true;
}

// slice_scatter(self, src, dim, start, end, step)
bool slice_scatter(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const auto dim = static_cast<size_t>(*normalize_dim(n.args().get_int(2), out.rank()));
  const SliceBounds r =
      slice_bounds(out.sizes[dim], n.args().opt_int(3), n.args().opt_int(4), n.args().get_int(5));
  if (r.count() == 0) return false;  // nothing embedded: the host copies self
  KernelBuilder kb = n.kernel(out.sizes);
  std::vector<Expr> at = kb.pointwise_vars();
  const Expr offset = at[dim] + Expr::constant(-r.start);
  int inside = between(kb, at[dim], r.start, Expr::constant(r.end));
  if (r.step != 1) {
    inside = mask_and(
        kb, inside,
        kb.math("eq", DType::Bool,
                {kb.index(mod(offset, Expr::constant(r.step))), kb.constant(DType::I64, 0)}));
  }
  at[dim] = clamp_index(floordiv(offset, Expr::constant(r.step)), 0, r.count() - 1);
  emit_embed(n, kb, inside, at);
  return true;
}

}  // namespace

std::map<std::string, LowerFn> embed_lowerings() {
  return {{"aten.select_scatter.default", select_scatter},
          {"aten.slice_scatter.default", slice_scatter}};
}

}  // namespace kiln
