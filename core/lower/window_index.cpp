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

Expr landing_position(KernelBuilder& kb, int& mask, const Expr& num, int64_t stride,
                      int64_t positions) {
  const Expr at = floordiv(num, Expr::constant(stride));
  if (stride != 1) {
    const int exact =
        kb.math("eq", DType::Bool,
                {kb.index(mod(num, Expr::constant(stride))), kb.constant(DType::I64, 0)});
    mask = mask_and(kb, mask, exact);
  }
  mask = mask_and(kb, mask, between(kb, at, 0, Expr::constant(positions)));
  return clamp_index(at, 0, positions - 1);
}

Expr window_taps(const Expr& start, int64_t kernel, int64_t size, int64_t pad, bool count_pad) {
  const Expr end =
      min(start + Expr::constant(kernel), Expr::constant(count_pad ? size + pad : size));
  const Expr begin = count_pad ? start : max(start, Expr::constant(0));
  return max(end + begin * Expr::constant(-1), Expr::constant(0));
}

}  // namespace kiln
