#include "core/ops/conv_args.h"

#include <algorithm>

#include "core/ops/op_error.h"

namespace kiln {

ConvArgs conv_args(const ArgView& c, int first, const Shape& weight) {
  const size_t dims = weight.size() >= 2 ? weight.size() - 2 : 0;
  ConvArgs a;
  a.window.dims = dims;
  a.window.kernel =
      IntList(weight.begin() + static_cast<std::ptrdiff_t>(weight.size() - dims), weight.end());
  a.window.stride = expand_param(c.get_ints(first), dims, IntList(dims, 1));
  a.window.padding = expand_param(c.get_ints(first + 1), dims, IntList(dims, 0));
  a.window.dilation = expand_param(c.get_ints(first + 2), dims, IntList(dims, 1));
  a.transposed = c.get_bool(first + 3);
  a.output_padding = expand_param(c.get_ints(first + 4), dims, IntList(dims, 0));
  a.groups = c.get_int(first + 5);
  return a;
}

Shape conv_output_shape(const Shape& x, const Shape& w, const ConvArgs& a, const std::string& op) {
  op_check(x.size() >= 3 && w.size() == x.size(),
           op + ": input " + shape_text(x) + " and weight " + shape_text(w) +
               " must have the same rank, at least 3 (batch, channels, spatial dims)");
  const Window& win = a.window;
  const size_t dims = win.dims;
  op_check(win.stride.size() == dims && win.padding.size() == dims && win.dilation.size() == dims &&
               a.output_padding.size() == dims,
           op + ": stride, padding, dilation and output_padding need " + std::to_string(dims) +
               " values each");
  const int64_t g = a.groups;
  const std::string channels = op + ": input channels " + std::to_string(x[1]) + ", weight " +
                               shape_text(w) + " and groups " + std::to_string(g) + " do not match";
  op_check(g > 0, op + ": groups must be positive, got " + std::to_string(g));
  // Regular weight: [out, in/groups, k...]; transposed: [in, out/groups, k...].
  if (a.transposed)
    op_check(w[0] == x[1] && x[1] % g == 0, channels);
  else
    op_check(x[1] % g == 0 && w[0] % g == 0 && x[1] / g == w[1], channels);
  Shape out{x[0], a.transposed ? w[1] * g : w[0]};
  for (size_t d = 0; d < dims; ++d) {
    const int64_t in = x[2 + d], k = win.kernel[d], s = win.stride[d], p = win.padding[d],
                  dil = win.dilation[d], op_pad = a.output_padding[d];
    if (!a.transposed) {
      op_check(op_pad == 0, op + ": output_padding applies to transposed convolution only");
      // pooled_size checks the ranges and that the window fits (no ceil mode for convolution).
      out.push_back(pooled_size(in, k, s, p, dil, false, op, false));
      continue;
    }
    pooled_size(std::max<int64_t>(in, k * dil), k, s, p, dil, false, op, false);  // ranges only
    op_check(op_pad >= 0 && (op_pad < s || op_pad < dil),
             op + ": output_padding must be non-negative and smaller than stride or dilation");
    const int64_t size = (in - 1) * s - 2 * p + dil * (k - 1) + op_pad + 1;
    op_check(size > 0, op + ": the transposed convolution's output would be empty");
    out.push_back(size);
  }
  return out;
}

}  // namespace kiln
