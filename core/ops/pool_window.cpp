#include "core/ops/pool_window.h"

#include "core/ops/op_error.h"

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

int64_t pooled_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                    bool ceil_mode, const std::string& op, bool pool_padding) {
  constexpr int64_t kMaxWindow = int64_t{1} << 20;  // keeps every product below in int64
  op_check(kernel > 0 && stride > 0 && dilation > 0 && pad >= 0,
           op + ": kernel, stride and dilation must be positive, padding non-negative");
  op_check(
      kernel <= kMaxWindow && stride <= kMaxWindow && dilation <= kMaxWindow && pad <= kMaxWindow,
      op + ": kernel, stride, dilation and padding must be at most 2^20");
  op_check(!pool_padding || pad * 2 <= kernel * dilation,
           op + ": padding should be at most half the effective kernel size");
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  op_check(span >= 0, op + ": the output size is too small (input " + std::to_string(in) +
                          ", kernel " + std::to_string(kernel) + ")");
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // With ceil_mode the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  op_check(out > 0, op + ": the output would be empty (input " + std::to_string(in) + ", kernel " +
                        std::to_string(kernel) + ")");
  return out;
}

}  // namespace kiln
