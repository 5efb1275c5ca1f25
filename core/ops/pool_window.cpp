#include "core/ops/pool_window.h"

namespace kiln {

IntList expand_param(const IntList& value, size_t n, const IntList& fallback) {
  if (value.empty()) return fallback;
  if (value.size() == 1) return IntList(n, value[0]);
  return value;
}

Window pool_window(const ArgView& c, size_t dims, bool has_dilation) {
  Window w;
  w.dims = dims;
  w.kernel = expand_param(c.get_ints(1), dims, {});
  w.stride = expand_param(c.get_ints(2), dims, w.kernel);
  w.padding = expand_param(c.get_ints(3), dims, IntList(dims, 0));
  w.dilation =
      has_dilation ? expand_param(c.get_ints(4), dims, IntList(dims, 1)) : IntList(dims, 1);
  w.ceil_mode = c.get_bool(has_dilation ? 5 : 4);
  return w;
}

}  // namespace kiln
