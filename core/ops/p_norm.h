// How a p-norm distance (cdist, pdist) combines the differences of two vectors: the count
// of nonzeros (p = 0), sums of |d| (1), of d*d then a square root (2), the largest |d|
// (infinity), or sums of |d|^p then the p-th root. Shared by the references and the
// lowerings, so both take the same branch for each p.
#pragma once

#include <cmath>

namespace kiln {

enum class PNorm { Zero, One, Two, Inf, General };

inline PNorm p_norm_kind(double p) {
  if (p == 0) return PNorm::Zero;
  if (p == 1) return PNorm::One;
  if (p == 2) return PNorm::Two;
  if (std::isinf(p)) return PNorm::Inf;
  return PNorm::General;
}

// The distance between two vectors given their differences d(0..n-1).
template <class Diff>
double p_distance(double p, int64_t n, Diff d) {
  const PNorm kind = p_norm_kind(p);
  double acc = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double a = std::fabs(d(k));
    switch (kind) {
      case PNorm::Zero:
        acc += a != 0 ? 1 : 0;
        break;
      case PNorm::One:
        acc += a;
        break;
      case PNorm::Two:
        acc += a * a;
        break;
      case PNorm::Inf:
        acc = std::isnan(a) || a > acc ? a : acc;  // NaN propagates, as the max reduction
        break;
      case PNorm::General:
        acc += std::pow(a, p);
        break;
    }
  }
  if (kind == PNorm::Two) return std::sqrt(acc);
  if (kind == PNorm::General) return std::pow(acc, 1 / p);
  return acc;
}

}  // namespace kiln
