#include "core/interp/compare.h"

#include <cmath>

namespace kiln {

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::F64:
      return {1e-9, 1e-7};
    case DType::F32:
      return {1e-5, 1e-4};
    case DType::F16:
      return {1e-3, 4e-3};
    case DType::BF16:
      return {8e-3, 1.6e-2};
    default:
      return {0, 0};  // integers and bools: exact
  }
}

Comparison compare(const HostTensor& actual, const HostTensor& expected, Tolerance tol) {
  Comparison c;
  if (actual.dtype() != expected.dtype() || actual.sizes() != expected.sizes()) {
    c.mismatches = 1;
    c.first_mismatch = 0;
    c.max_abs = INFINITY;
    return c;
  }
  const bool fp = is_floating(expected.dtype());
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool bad = false;
    if (fp) {
      const double a = actual.get(i), e = expected.get(i);
      if (std::isnan(a) || std::isnan(e) || std::isinf(a) || std::isinf(e)) {
        bad = std::isnan(a) != std::isnan(e) || (!std::isnan(a) && a != e);
        if (bad) c.max_abs = INFINITY;
      } else {
        const double d = std::fabs(a - e);
        c.max_abs = std::max(c.max_abs, d);
        if (e != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(e));
        bad = d > tol.atol + tol.rtol * std::fabs(e);
      }
    } else {
      const int64_t a = actual.get_int(i), e = expected.get_int(i);
      const double d = std::fabs(static_cast<double>(a) - static_cast<double>(e));
      c.max_abs = std::max(c.max_abs, d);
      if (e != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(static_cast<double>(e)));
      bad = a != e;
    }
    if (bad) {
      if (c.first_mismatch < 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  return c;
}

}  // namespace kiln
