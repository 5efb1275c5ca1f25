// The elements a slice(start, end, step) takes along a dim of n elements, with Python's
// rules (negative bounds count from the end, bounds clamp into [0, n]). Shared by
// slice_scatter's reference and its lowering.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace kiln {

struct SliceBounds {
  int64_t start = 0, end = 0, step = 1;
  int64_t count() const { return end == start ? 0 : (end - start - 1) / step + 1; }
};

inline SliceBounds slice_bounds(int64_t n, std::optional<int64_t> start, std::optional<int64_t> end,
                                int64_t step) {
  const auto clamp = [n](int64_t v) {
    return std::min(std::max<int64_t>(v < 0 ? v + n : v, 0), n);
  };
  const int64_t s = clamp(start.value_or(0));
  return {s, std::max(s, clamp(end.value_or(n))), step};
}

}  // namespace kiln
