// Convolution and pooling: shape inference and a direct reference for now (lowering
// comes later). One N-d window walk serves conv, avg/max pooling and adaptive pooling.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/pool_window.h"

namespace kiln {
namespace {

// The output length of a sliding window; `pool_padding` adds pooling's rule that padding is
// at most half the window.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                    bool ceil_mode, const std::string& op, bool pool_padding = true) {
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
  Shape out(in.begin(), in.end() - static_cast<std::ptrdiff_t>(w.dims));
  for (size_t d = 0; d < w.dims; ++d) {
    out.push_back(pooled_size(in[in.size() - w.dims + d], w.kernel[d], w.stride[d], w.padding[d],
                              w.dilation[d], w.ceil_mode, op));
  }
  return out;
}

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

OpRow avg_pool_row(const std::string& overload, size_t dims, bool has_divisor) {
  return {overload,
          [=](const InferContext& c) {
            op_check(is_floating(c.type(0).dtype), c.schema().op + " needs a floating input");
            op_check(!has_divisor || c.is_none(6) || c.get_int(6) != 0,
                     c.schema().op + ": divisor_override must not be 0");
            return one(c.type(0).dtype,
                       window_output(c.type(0).sizes, pool_window(c, dims, false), c.schema().op));
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Window w = pool_window(c, dims, false);
            const bool count_pad = c.get_bool(5);
            const int64_t divisor = has_divisor && !c.is_none(6) ? c.get_int(6) : 0;  // 0: none
            HostTensor out = c.output(0);
            pool_all(x, out.sizes(), dims,
                     [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
                       double sum = 0;
                       int64_t inside_count = 0, padded_count = 0;
                       for_window(w, in_spatial, pos, [&](const Shape& at, bool inside) {
                         bool in_padded = true;  // inside the input plus its padding
                         for (size_t d = 0; d < dims; ++d)
                           in_padded = in_padded && at[d] < in_spatial[d] + w.padding[d];
                         if (in_padded) ++padded_count;
                         if (!inside) return;
                         sum += x.get(base + ravel(at, in_spatial));
                         ++inside_count;
                       });
                       const int64_t n = divisor != 0 ? divisor
                                         : count_pad  ? padded_count
                                                      : inside_count;
                       out.set(o, sum / static_cast<double>(n));
                     });
            return std::vector{out};
          }};
}

OpRow max_pool_row(const std::string& overload, size_t dims) {
  return {overload,
          [=](const InferContext& c) {
            const Shape shape =
                window_output(c.type(0).sizes, pool_window(c, dims, true), c.schema().op);
            return std::vector{TensorType::contiguous(c.type(0).dtype, shape),
                               TensorType::contiguous(DType::I64, shape)};
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Window w = pool_window(c, dims, true);
            HostTensor out = c.output(0), indices = c.output(1);
            pool_all(x, out.sizes(), dims,
                     [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
                       double best = -INFINITY;
                       int64_t where = -1;
                       for_window(w, in_spatial, pos, [&](const Shape& at, bool inside) {
                         if (!inside) return;
                         const int64_t i = ravel(at, in_spatial);
                         const double v = x.get(base + i);
                         if (where < 0 || v > best || std::isnan(v)) {
                           if (!(where >= 0 && std::isnan(best))) {
                             best = v;
                             where = i;
                           }
                         }
                       });
                       out.set(o, best);
                       indices.set_int(o, where);
                     });
            return std::vector{out, indices};
          }};
}

// Adaptive average pooling: output cell i covers [floor(i*in/out), ceil((i+1)*in/out)).
OpRow adaptive_avg_row(const std::string& overload, size_t dims) {
  return {overload,
          [=](const InferContext& c) {
            const TensorType x = c.type(0);
            const IntList size = c.get_ints(1);
            op_check(size.size() == dims,
                     c.schema().op + ": output_size needs " + std::to_string(dims) + " values");
            op_check(x.rank() == static_cast<int64_t>(dims) + 1 ||
                         x.rank() == static_cast<int64_t>(dims) + 2,
                     c.schema().op + ": unexpected input rank " + std::to_string(x.rank()));
            Shape out(x.sizes.begin(), x.sizes.end() - static_cast<std::ptrdiff_t>(dims));
            for (int64_t s : size) {
              op_check(s > 0, c.schema().op + ": output sizes must be positive");
              out.push_back(s);
            }
            return one(x.dtype, out);
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            HostTensor out = c.output(0);
            pool_all(
                x, out.sizes(), dims,
                [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
                  Shape lo(dims), hi(dims);
                  const Shape out_spatial(out.sizes().end() - static_cast<std::ptrdiff_t>(dims),
                                          out.sizes().end());
                  for (size_t d = 0; d < dims; ++d) {
                    lo[d] = pos[d] * in_spatial[d] / out_spatial[d];
                    hi[d] = ((pos[d] + 1) * in_spatial[d] + out_spatial[d] - 1) / out_spatial[d];
                  }
                  Shape extent(dims);
                  for (size_t d = 0; d < dims; ++d) extent[d] = hi[d] - lo[d];
                  double sum = 0;
                  const int64_t count = shape_numel(extent);
                  for (int64_t t = 0; t < count; ++t) {
                    Shape at = unravel(t, extent);
                    for (size_t d = 0; d < dims; ++d) at[d] += lo[d];
                    sum += x.get(base + ravel(at, in_spatial));
                  }
                  out.set(o, sum / static_cast<double>(count));
                });
            return std::vector{out};
          }};
}

// convolution(input [N, C, *], weight [O, C/groups, *], bias?, stride, padding, dilation,
// transposed, output_padding, groups)
std::vector<TensorType> infer_convolution(const InferContext& c) {
  const TensorType x = c.type(0), w = c.type(1);
  op_check(!c.get_bool(6), "convolution: transposed convolution is not supported yet");
  op_check(x.rank() >= 3 && w.rank() == x.rank(),
           "convolution: input and weight must have the same rank ≥ 3");
  op_check(x.dtype == w.dtype && is_floating(x.dtype),
           "convolution: input and weight must share a floating dtype");
  const auto dims = static_cast<size_t>(x.rank() - 2);
  const int64_t groups = c.get_int(8);
  op_check(groups > 0 && x.sizes[1] % groups == 0 && w.sizes[0] % groups == 0 &&
               x.sizes[1] / groups == w.sizes[1],
           "convolution: input channels " + std::to_string(x.sizes[1]) + ", weight " +
               shape_text(w.sizes) + " and groups " + std::to_string(groups) + " do not match");
  if (!c.is_none(2))
    op_check(c.type(2).sizes == Shape{w.sizes[0]},
             "convolution: bias needs one entry per output channel");
  Window win{dims,
             IntList(w.sizes.begin() + 2, w.sizes.end()),
             expand_param(c.get_ints(3), dims, IntList(dims, 1)),
             expand_param(c.get_ints(4), dims, IntList(dims, 0)),
             expand_param(c.get_ints(5), dims, IntList(dims, 1)),
             false};
  op_check(
      win.stride.size() == dims && win.padding.size() == dims && win.dilation.size() == dims,
      "convolution: stride, padding and dilation need " + std::to_string(dims) + " values each");
  const IntList output_padding = c.get_ints(7);
  op_check(
      std::all_of(output_padding.begin(), output_padding.end(), [](int64_t p) { return p == 0; }),
      "convolution: output_padding applies to transposed convolution only");
  Shape out{x.sizes[0], w.sizes[0]};
  for (size_t d = 0; d < dims; ++d) {
    // pooled_size checks the ranges and that the window fits (no ceil mode for convolution).
    out.push_back(pooled_size(x.sizes[2 + d], win.kernel[d], win.stride[d], win.padding[d],
                              win.dilation[d], false, "convolution", false));
  }
  return one(x.dtype, out);
}

HostTensor convolution_reference(const RefContext& c) {
  const HostTensor x = c.tensor(0), w = c.tensor(1);
  const std::optional<HostTensor> bias = c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
  const auto dims = static_cast<size_t>(x.rank() - 2);
  const Window win{dims,
                   IntList(w.sizes().begin() + 2, w.sizes().end()),
                   expand_param(c.get_ints(3), dims, IntList(dims, 1)),
                   expand_param(c.get_ints(4), dims, IntList(dims, 0)),
                   expand_param(c.get_ints(5), dims, IntList(dims, 1)),
                   false};
  HostTensor out = c.output(0);
  const int64_t groups = c.get_int(8), in_per_group = w.sizes()[1],
                out_per_group = w.sizes()[0] / groups;
  const Shape in_spatial(x.sizes().begin() + 2, x.sizes().end()),
      out_spatial(out.sizes().begin() + 2, out.sizes().end());
  const int64_t in_plane = shape_numel(in_spatial), out_plane = shape_numel(out_spatial),
                taps = shape_numel(win.kernel);
  for (int64_t n = 0; n < out.sizes()[0]; ++n) {
    for (int64_t oc = 0; oc < out.sizes()[1]; ++oc) {
      const int64_t g = oc / out_per_group;
      for (int64_t o = 0; o < out_plane; ++o) {
        double acc = bias ? bias->get(oc) : 0.0;
        const Shape pos = unravel(o, out_spatial);
        for (int64_t ic = 0; ic < in_per_group; ++ic) {
          const int64_t channel = g * in_per_group + ic;
          int64_t tap = 0;
          for_window(win, in_spatial, pos, [&](const Shape& at, bool inside) {
            if (inside) {
              acc += x.get((n * x.sizes()[1] + channel) * in_plane + ravel(at, in_spatial)) *
                     w.get((oc * in_per_group + ic) * taps + tap);
            }
            ++tap;
          });
        }
        out.set((n * out.sizes()[1] + oc) * out_plane + o, acc);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<OpRow> conv_pool_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.convolution.default", infer_convolution,
                  [](const RefContext& c) { return std::vector{convolution_reference(c)}; }});
  rows.push_back(avg_pool_row("aten.avg_pool1d.default", 1, false));
  rows.push_back(avg_pool_row("aten.avg_pool2d.default", 2, true));
  rows.push_back(avg_pool_row("aten.avg_pool3d.default", 3, true));
  rows.push_back(max_pool_row("aten.max_pool2d_with_indices.default", 2));
  rows.push_back(max_pool_row("aten.max_pool3d_with_indices.default", 3));
  rows.push_back(adaptive_avg_row("aten.adaptive_avg_pool1d.default", 1));
  rows.push_back(adaptive_avg_row("aten._adaptive_avg_pool2d.default", 2));
  rows.push_back(adaptive_avg_row("aten._adaptive_avg_pool3d.default", 3));
  return rows;
}

}  // namespace kiln
