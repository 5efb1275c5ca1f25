#include "core/lower/sort_order.h"

namespace kiln {

SortPivot sort_pivot(KernelBuilder& kb, int value, DType d) {
  SortPivot p{value};
  if (is_floating(d)) {
    p.nan = kb.math("isnan", DType::Bool, {value});
    p.number = kb.math("not", DType::Bool, {p.nan});
  }
  return p;
}

int sorts_before(KernelBuilder& kb, int b, const SortPivot& a, int earlier, DType d,
                 bool descending) {
  const auto cmp = [&](const char* fn, int x, int y) { return kb.math(fn, DType::Bool, {x, y}); };
  int ahead_or_tied = cmp(descending ? "ge" : "le", b, a.value);
  int ahead = cmp(descending ? "gt" : "lt", b, a.value);
  if (is_floating(d)) {
    const int bn = kb.math("isnan", DType::Bool, {b});
    // Descending: a NaN b comes first (tied with a NaN pivot); ascending: every b comes
    // before a NaN pivot (a NaN b tied with it).
    ahead_or_tied = cmp("or", ahead_or_tied, descending ? bn : a.nan);
    ahead = cmp("or", ahead,
                descending ? cmp("and", bn, a.number)
                           : cmp("and", a.nan, kb.math("not", DType::Bool, {bn})));
  }
  return kb.where(earlier, ahead_or_tied, ahead);
}

int sorts_before(KernelBuilder& kb, int b, int a, int ib, int ia, DType d, bool descending) {
  return sorts_before(kb, b, sort_pivot(kb, a, d), kb.math("lt", DType::Bool, {ib, ia}), d,
                      descending);
}

std::vector<Expr> with_dim(std::vector<Expr> vars, size_t dim, const Expr& at) {
  vars[dim] = at;
  return vars;
}

}  // namespace kiln
