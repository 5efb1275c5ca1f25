#include "core/lower/sort_order.h"

namespace kiln {

int sorts_before(KernelBuilder& kb, int b, int a, int ib, int ia, DType d, bool descending) {
  return sorts_before(kb, b, a, kb.math("lt", DType::Bool, {ib, ia}), d, descending);
}

int sorts_before(KernelBuilder& kb, int b, int a, int earlier, DType d, bool descending) {
  const auto cmp = [&](const char* fn, int x, int y) { return kb.math(fn, DType::Bool, {x, y}); };
  int same = cmp("eq", b, a);
  int ahead = cmp(descending ? "gt" : "lt", b, a);
  if (is_floating(d)) {
    const int bn = kb.math("isnan", DType::Bool, {b}), an = kb.math("isnan", DType::Bool, {a});
    same = cmp("or", same, cmp("and", bn, an));
    // Descending: a NaN b comes before any number; ascending: any number before a NaN a.
    const int nan_first = descending ? cmp("and", bn, kb.math("not", DType::Bool, {an}))
                                     : cmp("and", an, kb.math("not", DType::Bool, {bn}));
    ahead = cmp("or", ahead, nan_first);
  }
  return cmp("or", cmp("and", kb.math("not", DType::Bool, {same}), ahead),
             cmp("and", same, earlier));
}

std::vector<Expr> with_dim(std::vector<Expr> vars, size_t dim, const Expr& at) {
  vars[dim] = at;
  return vars;
}

}  // namespace kiln
