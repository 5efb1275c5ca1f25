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
// ceil_mode, ...).
Window pool_window(const ArgView& c, size_t dims, bool has_dilation);

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

}  // namespace kiln
