#include "plugins/kir_support/kir_expr.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace kiln::kir_support {

bool linear_terms(const kir::Expr& e, int64_t scale, std::map<std::string, int64_t>& terms) {
  switch (e.kind) {
    case kir::Expr::Const:
      terms[""] += e.value * scale;
      return true;
    case kir::Expr::Var:
      terms[e.name] += scale;
      return true;
    case kir::Expr::Add:
      for (const kir::Expr& o : e.operands)
        if (!linear_terms(o, scale, terms)) return false;
      return true;
    case kir::Expr::Mul: {
      int64_t factor = scale;
      const kir::Expr* rest = nullptr;
      for (const kir::Expr& o : e.operands) {
        if (o.kind == kir::Expr::Const) {
          factor *= o.value;
        } else if (rest) {
          return false;
        } else {
          rest = &o;
        }
      }
      if (!rest) {
        terms[""] += factor;
        return true;
      }
      return linear_terms(*rest, factor, terms);
    }
    default:
      return false;
  }
}

int64_t integer_literal(const std::string& text) {
  const double v = std::strtod(text.c_str(), nullptr);
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  if (text.find_first_of(".eEn") == std::string::npos)
    return std::strtoll(text.c_str(), nullptr, 10);
  return static_cast<int64_t>(std::trunc(v));
}

}  // namespace kiln::kir_support
