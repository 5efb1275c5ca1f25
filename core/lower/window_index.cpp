#include "core/lower/window_index.h"

namespace kiln {

Expr clamp_index(const Expr& e, int64_t lo, int64_t hi) {
  return min(max(e, Expr::constant(lo)), Expr::constant(hi));
}

int mask_and(KernelBuilder& kb, int mask, int m) {
  return mask < 0 ? m : kb.math("and", DType::Bool, {mask, m});
}

int between(KernelBuilder& kb, const Expr& e, int64_t lo, const Expr& hi) {
  const int at = kb.index(e);
  const int ge = kb.math("ge", DType::Bool, {at, kb.constant(DType::I64, static_cast<double>(lo))});
  const int lt = kb.math("lt", DType::Bool, {at, kb.index(hi)});
  return kb.math("and", DType::Bool, {ge, lt});
}

Expr window_taps(const Expr& start, int64_t kernel, int64_t size, int64_t pad, bool count_pad) {
  const Expr end =
      min(start + Expr::constant(kernel), Expr::constant(count_pad ? size + pad : size));
  const Expr begin = count_pad ? start : max(start, Expr::constant(0));
  return max(end + begin * Expr::constant(-1), Expr::constant(0));
}

}  // namespace kiln
