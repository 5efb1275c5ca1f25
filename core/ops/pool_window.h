// A sliding window's parameters as conv and pooling ops take them: one value or one per
// spatial dim, empty lists meaning the op's default. Shared by the ops' references and by
// their lowerings, so both read the arguments the same way.
#pragma once

#include <cstddef>

#include "core/ops/arg_view.h"

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

}  // namespace kiln
