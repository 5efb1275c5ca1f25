#include "core/ops/pool_window.h"

#include "core/ops/op_error.h"

namespace kiln {

IntList expand_param(const IntList& value, size_t n, const IntList& fallback) {
  if (value.empty()) return fallback;
  if (value.size() == 1) return IntList(n, value[0]);
  return value;
}

Window pool_window(const ArgView& c, size_t dims, bool has_dilation, int first) {
  Window w;
  w.dims = dims;
  w.kernel = expand_param(c.get_ints(first), dims, {});
  w.stride = expand_param(c.get_ints(first + 1), dims, w.kernel);
  w.padding = expand_param(c.get_ints(first + 2), dims, IntList(dims, 0));
  w.dilation =
      has_dilation ? expand_param(c.get_ints(first + 3), dims, IntList(dims, 1)) : IntList(dims, 1);
  w.ceil_mode = c.get_bool(first + (has_dilation ? 4 : 3));
  return w;
}

int64_t avg_pool_divisor(const Window& w, const Shape& in_spatial, const Shape& pos, bool count_pad,
                         int64_t divisor) {
  if (divisor != 0) return divisor;
  int64_t inside_count = 0, padded_count = 0;
  for_window(w, in_spatial, pos, [&](const Shape& at, bool inside) {
    bool in_padded = true;  // inside the input plus its padding
    for (size_t d = 0; d < w.dims; ++d)
      in_padded = in_padded && at[d] < in_spatial[d] + w.padding[d];
    padded_count += in_padded ? 1 : 0;
    inside_count += inside ? 1 : 0;
  });
  return count_pad ? padded_count : inside_count;
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

Shape window_output(const Shape& in, const Window& w, const std::string& op) {
  op_check(in.size() == w.dims + 1 || in.size() == w.dims + 2,
           op + ": expected a " + std::to_string(w.dims + 1) + "-D or " +
               std::to_string(w.dims + 2) + "-D input, got " + shape_text(in));
  op_check(w.kernel.size() == w.dims && w.stride.size() == w.dims && w.padding.size() == w.dims &&
               w.dilation.size() == w.dims,
           op + ": kernel, stride, padding and dilation need " + std::to_string(w.dims) +
               " values each");
  // As PyTorch: every dim but the batch must be non-empty.
  for (size_t d = in.size() == w.dims + 2 ? 1 : 0; d < in.size(); ++d)
    op_check(in[d] > 0, op + ": every dim but the batch must be non-empty, got " + shape_text(in));
  Shape out(in.begin(), in.end() - static_cast<std::ptrdiff_t>(w.dims));
  for (size_t d = 0; d < w.dims; ++d) {
    out.push_back(pooled_size(in[in.size() - w.dims + d], w.kernel[d], w.stride[d], w.padding[d],
                              w.dilation[d], w.ceil_mode, op));
  }
  return out;
}

}  // namespace kiln
