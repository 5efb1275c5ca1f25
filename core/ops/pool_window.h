// A sliding window's parameters as conv and pooling ops take them: one value or one per
// spatial dim, empty lists meaning the op's default. Shared by the ops' references and by
// their lowerings, so both read the arguments the same way.
#pragma once

#include <cstddef>
#include <string>

#include "core/ops/arg_view.h"
#include "core/ops/op_util.h"

namespace kiln {

struct Window {
  size_t dims = 0;  // spatial dims
  IntList kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

// `value` for `n` dims: `fallback` when empty, one value repeated, or as given.
IntList expand_param(const IntList& value, size_t n, const IntList& fallback);

// The window of a pooling op: (self, kernel, stride=kernel, padding=0[, dilation=1],
// ceil_mode, ...), with the kernel at argument `first` (2 for the backward ops, which take
// grad_output first).
Window pool_window(const ArgView& c, size_t dims, bool has_dilation, int first = 1);

// How many taps average pooling divides the window at output position `pos` by:
// `divisor` when non-zero, else the taps inside the input (or inside input and padding
// when `count_pad`).
int64_t avg_pool_divisor(const Window& w, const Shape& in_spatial, const Shape& pos, bool count_pad,
                         int64_t divisor);

// The output length of a sliding window over `in` elements, checked (an OpError names `op`);
// `pool_padding` adds pooling's rule that padding is at most half the window.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                    bool ceil_mode, const std::string& op, bool pool_padding = true);

// Visits every kernel offset of the window of output position `out_pos` (spatial dims);
// `visit(input spatial index, inside)`.
template <class Visit>
void for_window(const Window& w, const Shape& in_spatial, const Shape& out_pos, Visit visit) {
  const int64_t taps = shape_numel(w.kernel);
  Shape at(w.dims);
  for (int64_t t = 0; t < taps; ++t) {
    const Shape k = unravel(t, w.kernel);
    bool inside = true;
    for (size_t d = 0; d < w.dims; ++d) {
      at[d] = out_pos[d] * w.stride[d] - w.padding[d] + k[d] * w.dilation[d];
      inside = inside && at[d] >= 0 && at[d] < in_spatial[d];
    }
    visit(at, inside);
  }
}

// The output shape of pooling `in` ([C, *] or [N, C, *]) with `w`, checked.
Shape window_output(const Shape& in, const Window& w, const std::string& op);

// Adaptive pooling's window for output cell o of `out` cells over `in`: [start, end).
inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) {
  return o * in / out;
}
inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

// Pools every (leading..., spatial...) position of `x` into `out` with `pool`.
template <class Pool>
void pool_all(const HostTensor& x, const Shape& out_sizes, size_t dims, Pool pool) {
  const Shape in_spatial(x.sizes().end() - static_cast<std::ptrdiff_t>(dims), x.sizes().end());
  const Shape out_spatial(out_sizes.end() - static_cast<std::ptrdiff_t>(dims), out_sizes.end());
  const int64_t planes =
      shape_numel(Shape(out_sizes.begin(), out_sizes.end() - static_cast<std::ptrdiff_t>(dims)));
  const int64_t in_plane = shape_numel(in_spatial), out_plane = shape_numel(out_spatial);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t o = 0; o < out_plane; ++o)
      pool(p * in_plane, in_spatial, unravel(o, out_spatial), p * out_plane + o);
  }
}

}  // namespace kiln
