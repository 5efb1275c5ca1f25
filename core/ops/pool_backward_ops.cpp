// The backward of 2-d pooling (avg_pool2d_backward, max_pool2d_with_indices_backward,
// _adaptive_avg_pool2d_backward): grad_input has the input's shape and gathers, for each
// input element, the gradient of every window that read it. The reference walks the forward
// windows and accumulates.
#include <cmath>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/pool_window.h"

namespace kiln {
namespace {

// Checks grad_output against the forward's output shape; grad_input is the input's type.
std::vector<TensorType> grad_input_type(const InferContext& c, const Shape& forward_out) {
  const TensorType dy = c.type(0), x = c.type(1);
  op_check(is_floating(x.dtype) && dy.dtype == x.dtype,
           c.schema().op + ": grad_output and input must share a floating dtype");
  op_check(dy.sizes == forward_out, c.schema().op + ": grad_output " + shape_text(dy.sizes) +
                                        " does not match the pooling's output " +
                                        shape_text(forward_out));
  return one(x.dtype, x.sizes);
}

// Runs `window(in_base, in_spatial, pos, out_index)` for every output element of a pooling
// of `x` to `dy`'s shape and returns the accumulated grad_input as an output tensor.
template <class Window>
std::vector<HostTensor> accumulate(const RefContext& c, const HostTensor& dy, size_t dims,
                                   Window window) {
  const Shape& in = c.out_types[0].sizes;
  std::vector<double> grad(static_cast<size_t>(shape_numel(in)), 0.0);
  HostTensor x = HostTensor::zeros(dy.dtype(), in);  // only its shape is walked
  pool_all(x, dy.sizes(), dims,
           [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
             window(grad, base, in_spatial, pos, dy.get(o), o);
           });
  HostTensor out = c.output(0);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, grad[static_cast<size_t>(i)]);
  return {out};
}

// avg_pool2d_backward(grad_output, self, kernel, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
OpRow avg_pool2d_backward_row() {
  return {"aten.avg_pool2d_backward.default",
          [](const InferContext& c) {
            op_check(c.is_none(7) || c.get_int(7) != 0,
                     "avg_pool2d_backward: divisor_override must not be 0");
            return grad_input_type(
                c, window_output(c.type(1).sizes, pool_window(c, 2, false, 2), c.schema().op));
          },
          [](const RefContext& c) {
            const Window w = pool_window(c, 2, false, 2);
            const bool count_pad = c.get_bool(6);
            const int64_t divisor = c.is_none(7) ? 0 : c.get_int(7);
            return accumulate(
                c, c.tensor(0), 2,
                [&](std::vector<double>& grad, int64_t base, const Shape& in_spatial,
                    const Shape& pos, double g, int64_t) {
                  const double share = g / static_cast<double>(avg_pool_divisor(
                                               w, in_spatial, pos, count_pad, divisor));
                  for_window(w, in_spatial, pos, [&](const Shape& at, bool inside) {
                    if (inside) grad[static_cast<size_t>(base + ravel(at, in_spatial))] += share;
                  });
                });
          }};
}

// max_pool2d_with_indices_backward(grad_output, self, kernel, stride, padding, dilation,
// ceil_mode, indices): each window's gradient goes to the input position its index names
// (flat in the plane, as max_pool2d_with_indices gives it). An index that is not a position
// of the window is an error.
OpRow max_pool2d_backward_row() {
  return {"aten.max_pool2d_with_indices_backward.default",
          [](const InferContext& c) {
            const Shape out =
                window_output(c.type(1).sizes, pool_window(c, 2, true, 2), c.schema().op);
            op_check(c.type(7).dtype == DType::I64 && c.type(7).sizes == out,
                     "max_pool2d_with_indices_backward: indices must be i64 of shape " +
                         shape_text(out));
            return grad_input_type(c, out);
          },
          [](const RefContext& c) {
            const Window w = pool_window(c, 2, true, 2);
            const HostTensor indices = c.tensor(7);
            return accumulate(c, c.tensor(0), 2,
                              [&](std::vector<double>& grad, int64_t base, const Shape& in_spatial,
                                  const Shape& pos, double g, int64_t o) {
                                const int64_t at = indices.get_int(o);
                                bool found = false;
                                for_window(w, in_spatial, pos, [&](const Shape& tap, bool inside) {
                                  found = found || (inside && ravel(tap, in_spatial) == at);
                                });
                                op_check(found, "max_pool2d_with_indices_backward: index " +
                                                    std::to_string(at) +
                                                    " is not a position of its window");
                                grad[static_cast<size_t>(base + at)] += g;
                              });
          }};
}

// _adaptive_avg_pool2d_backward(grad_output, self)
OpRow adaptive_avg_pool2d_backward_row() {
  return {"aten._adaptive_avg_pool2d_backward.default",
          [](const InferContext& c) {
            const TensorType x = c.type(1), dy = c.type(0);
            op_check(x.rank() == 3 || x.rank() == 4,
                     "_adaptive_avg_pool2d_backward: expected a 3-D or 4-D input");
            op_check(
                dy.rank() == x.rank() && dy.sizes[dy.rank() - 1] > 0 && dy.sizes[dy.rank() - 2] > 0,
                "_adaptive_avg_pool2d_backward: grad_output must have the input's rank");
            Shape out(x.sizes.begin(), x.sizes.end() - 2);
            out.push_back(dy.sizes[dy.rank() - 2]);
            out.push_back(dy.sizes[dy.rank() - 1]);
            return grad_input_type(c, out);
          },
          [](const RefContext& c) {
            const HostTensor dy = c.tensor(0);
            const Shape out_spatial(dy.sizes().end() - 2, dy.sizes().end());
            return accumulate(c, dy, 2,
                              [&](std::vector<double>& grad, int64_t base, const Shape& in_spatial,
                                  const Shape& pos, double g, int64_t) {
                                Shape lo(2), extent(2);
                                for (size_t d = 0; d < 2; ++d) {
                                  lo[d] = adaptive_start(pos[d], in_spatial[d], out_spatial[d]);
                                  extent[d] =
                                      adaptive_end(pos[d], in_spatial[d], out_spatial[d]) - lo[d];
                                }
                                const int64_t count = shape_numel(extent);
                                for (int64_t t = 0; t < count; ++t) {
                                  Shape at = unravel(t, extent);
                                  for (size_t d = 0; d < 2; ++d) at[d] += lo[d];
                                  grad[static_cast<size_t>(base + ravel(at, in_spatial))] +=
                                      g / static_cast<double>(count);
                                }
                              });
          }};
}

}  // namespace

std::vector<OpRow> pool_backward_ops() {
  return {avg_pool2d_backward_row(), max_pool2d_backward_row(), adaptive_avg_pool2d_backward_row()};
}

}  // namespace kiln
