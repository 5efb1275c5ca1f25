// col2im as a Reduction kernel in gather form: each output pixel sums, over the kernel taps,
// the column of the window position that puts that tap on it (where (h + pad - tap*dilation)
// divides by the stride and the position exists), so every pixel is written once.
#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/fold_window.h"

namespace kiln {
namespace {

bool col2im(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  const Fold f = fold_of(n.args());
  const size_t lead = out.sizes.size() - 3;  // batch dim, if any
  const int64_t kh = f.w.kernel[0], kw = f.w.kernel[1];
  KernelBuilder kb = n.kernel(out.sizes, {kh, kw});
  int mask = -1;
  Expr block = Expr::constant(0);  // the window position, flat over (H, W) positions
  for (size_t d = 0; d < 2; ++d) {
    const int64_t s = f.w.stride[d];
    const Expr num = kb.x(lead + 1 + d) + Expr::constant(f.w.padding[d]) +
                     kb.r(d) * Expr::constant(-f.w.dilation[d]);
    block = block * Expr::constant(f.blocks[d]) + landing_position(kb, mask, num, s, f.blocks[d]);
  }
  std::vector<Expr> idx;
  if (lead) idx.push_back(kb.x(0));
  idx.push_back((kb.x(lead) * Expr::constant(kh) + kb.r(0)) * Expr::constant(kw) + kb.r(1));
  idx.push_back(block);
  const DType acc = compute_dtype(out.dtype);
  const int sum = kb.reduce("sum", acc, kb.cast(n.load(kb, n.operand(0), idx, mask), acc));
  n.store_output(kb, sum);
  return true;
}

}  // namespace

std::map<std::string, LowerFn> fold_lowerings() {
  return {{"aten.col2im.default", col2im}};
}

}  // namespace kiln
