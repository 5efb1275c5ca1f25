// The order sort and topk put elements in, shared by their references and lowerings:
// ascending puts NaN last, descending puts it first (as PyTorch), and equal elements keep
// their original order (a stable sort), so results, indices included, are deterministic.
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln {

// Whether element (a, at index ia) comes before (b, at index ib).
inline bool sorts_before(double a, int64_t ia, double b, int64_t ib, bool descending) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  const bool same = a == b || (an && bn);
  if (same) return ia < ib;
  if (descending) return an || (!bn && a > b);
  return bn || (!an && a < b);
}

// Integers compare exactly (int64 beyond 2^53 does not fit a double).
inline bool sorts_before(int64_t a, int64_t ia, int64_t b, int64_t ib, bool descending) {
  if (a == b) return ia < ib;
  return descending ? a > b : a < b;
}

}  // namespace kiln
