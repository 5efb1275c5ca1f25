#include "core/interp/compare.h"

#include <cmath>

namespace kiln {

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::F64:
      return {1e-12, 1e-10};
    case DType::F32:
      return {1e-5, 1.3e-6};
    case DType::F16:
      return {1e-5, 1e-3};
    case DType::BF16:
      return {1e-5, 1.6e-2};
    default:
      return {0, 0};  // integers and bools: exact
  }
}

double accumulation_roundoff(DType dtype) {
  return dtype == DType::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

namespace {

// Bytes other than 0 and 1 in a bool tensor: the first such element, or -1.
int64_t first_non_bool_byte(const HostTensor& t) {
  const HostTensor c = t.contiguous();
  const auto bytes = c.bytes();
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] != std::byte{0} && bytes[i] != std::byte{1}) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace

Comparison compare(const HostTensor& actual, const HostTensor& expected, Tolerance tol,
                   ReductionBound reduction) {
  Comparison c;
  if (actual.dtype() != expected.dtype() || actual.sizes() != expected.sizes()) {
    c.mismatches = 1;
    c.first_mismatch = 0;
    c.max_abs = INFINITY;
    return c;
  }
  if (expected.dtype() == DType::Bool) {
    const int64_t bad = first_non_bool_byte(actual);
    if (bad >= 0) {
      c.mismatches = 1;
      c.first_mismatch = bad;
      c.max_abs = INFINITY;
      return c;
    }
  }
  const bool fp = is_floating(expected.dtype());
  const bool scaled = reduction.magnitude && reduction.magnitude->numel() == expected.numel();
  const bool sensitive = reduction.perturbed && reduction.perturbed->numel() == expected.numel();
  const double sum_error = 2 *
                           std::sqrt(static_cast<double>(std::max<int64_t>(reduction.terms, 1))) *
                           accumulation_roundoff(expected.dtype());
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
        double bound = tol.atol + tol.rtol * std::fabs(e);
        // A magnitude the |inputs| run made NaN or infinite (asin of |x| > 1) bounds nothing.
        const double m = scaled ? std::fabs(reduction.magnitude->get(i)) : 0.0;
        if (std::isfinite(m)) bound += sum_error * m;
        // A perturbed run that lost its value (overflow, a domain edge) bounds nothing either.
        const double drift = sensitive ? std::fabs(reduction.perturbed->get(i) - e) : 0.0;
        if (std::isfinite(drift)) bound += 2 * drift;
        bad = !(d <= bound);
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
