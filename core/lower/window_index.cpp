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

}  // namespace kiln
