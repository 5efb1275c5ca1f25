#include "core/lower/conv_as_matmul.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "core/graph/dtype.h"
#include "core/lower/conv_library_call.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

Expr c(int64_t v) {
  return Expr::constant(v);
}

// The sizes of one convolution's product.
struct Product {
  int64_t batch = 0, channels = 0, taps = 0, positions = 0, outputs = 0;
  int64_t rows = 0;  // J: channels * taps, one more with a bias
  Shape kernel, spatial;
  bool bias = false;  // in the product (a column of ones)
  int64_t patch_rows() const { return channels * taps; }
  int64_t column_bytes(DType d) const {
    return shape_numel({batch, rows, positions, dtype_size(d)});
  }
  // The bias added after the product: `given` where it is not in it.
  const Access* bias_after(const Access* given) const { return bias ? nullptr : given; }
};

// The product of a convolution summing `channels` input channels of `batch` images into output
// 0 with weight `w` (its dims 2.. the kernel); the bias in it for half types (their add after
// the product would round twice), after it otherwise.
Product product_of(const NodeLowering& n, int64_t batch, int64_t channels, const Access& w,
                   const Access* bias) {
  const TensorType& out = n.out_type(0);
  Product s;
  s.batch = batch;
  s.channels = channels;
  s.outputs = out.sizes[1];
  s.kernel = Shape(w.type.sizes.begin() + 2, w.type.sizes.end());
  s.spatial = Shape(out.sizes.begin() + 2, out.sizes.end());
  s.taps = shape_numel(s.kernel);
  s.positions = shape_numel(s.spatial);
  s.bias = bias != nullptr && compute_dtype(out.dtype) != out.dtype;
  s.rows = s.patch_rows() + (s.bias ? 1 : 0);
  return s;
}

// x at channel `ch`, kernel tap `t` of output position `p` (one Expr per spatial dim); 0 for a
// tap in the padding. Without padding every tap lies inside x (the output size says so).
int patch_value(NodeLowering& n, KernelBuilder& kb, const Access& x, const Window& win,
                const Expr& b, const Expr& ch, const std::vector<Expr>& t,
                const std::vector<Expr>& p) {
  std::vector<Expr> xi{b, ch};
  int mask = -1;
  for (size_t d = 0; d < win.dims; ++d) {
    const int64_t size = x.type.sizes[2 + d];
    const Expr at = p[d] * c(win.stride[d]) + c(-win.padding[d]) + t[d] * c(win.dilation[d]);
    if (win.padding[d] == 0) {
      xi.push_back(at);
      continue;
    }
    mask = mask_and(kb, mask, between(kb, at, 0, c(size)));
    xi.push_back(clamp_index(at, 0, size - 1));
  }
  return n.load(kb, x, xi, mask);
}

std::vector<Expr> vars(const KernelBuilder& kb, size_t first, size_t count) {
  std::vector<Expr> v;
  for (size_t i = 0; i < count; ++i) v.push_back(kb.x(first + i));
  return v;
}

// Dims 0.. of a tensor of `rank` in their own order (channels first, packed as numbered).
std::vector<size_t> numbered_order(size_t rank) {
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

// `buffer` read as a contiguous tensor of `sizes` in output 0's dtype.
Access contiguous_access(const NodeLowering& n, int buffer, const Shape& sizes) {
  std::vector<Expr> dims;
  for (size_t i = 0; i < sizes.size(); ++i) dims.push_back(dim_var(i));
  return {buffer, contiguous_index(sizes, dims),
          TensorType::contiguous(n.out_type(0).dtype, sizes)};
}

// Where a kernel stores: an index in `buffer` from the kernel's variables.
using Placement = std::function<Expr(const KernelBuilder& kb)>;

// A kernel over `ranges` storing `value(kb)` (cast to output 0's dtype) at `at` in `buffer`.
void store_all(NodeLowering& n, int buffer, const Shape& ranges, const Placement& at,
               const std::function<int(KernelBuilder& kb)>& value) {
  const DType dtype = n.out_type(0).dtype;
  KernelBuilder kb = n.kernel(ranges);
  const Expr where = kb.simplify_index(at(kb));
  const int v = kb.cast(value(kb), dtype);
  kb.store(buffer, where, v);
  n.emit(std::move(kb).finish());
}

// The column of ones a bias in the product multiplies: `count` places of `col` at `at`.
void store_ones(NodeLowering& n, int col, const Shape& count, const Placement& at) {
  store_all(n, col, count, at,
            [&](KernelBuilder& kb) { return kb.constant(n.out_type(0).dtype, 1); });
}

// A tap's value: the element at batch `b`, channel `ch`, tap `t` of position `p` (one Expr per
// spatial dim), 0 where there is none.
using TapValue = std::function<int(KernelBuilder& kb, const Expr& b, const Expr& ch,
                                   const std::vector<Expr>& t, const std::vector<Expr>& p)>;

// The column buffer, channels first: col[b, ch*taps + t, p] over [N, J, P]; row patch_rows()
// all ones when there is a bias.
Access channels_first_columns(NodeLowering& n, const Product& s, const TapValue& value) {
  const int col = n.temp_buffer("columns", n.out_type(0).dtype, s.batch * s.rows * s.positions);
  const size_t dims = s.kernel.size();
  Shape ranges{s.batch, s.channels};
  ranges.insert(ranges.end(), s.kernel.begin(), s.kernel.end());
  ranges.insert(ranges.end(), s.spatial.begin(), s.spatial.end());
  // Positions innermost: runs along the output's width.
  store_all(
      n, col, ranges,
      [&](const KernelBuilder& kb) {
        const Expr row = kb.x(1) * c(s.taps) + contiguous_index(s.kernel, vars(kb, 2, dims));
        return (kb.x(0) * c(s.rows) + row) * c(s.positions) +
               contiguous_index(s.spatial, vars(kb, 2 + dims, dims));
      },
      [&](KernelBuilder& kb) {
        return value(kb, kb.x(0), kb.x(1), vars(kb, 2, dims), vars(kb, 2 + dims, dims));
      });
  if (s.bias) {
    store_ones(n, col, {s.batch, s.positions}, [&](const KernelBuilder& kb) {
      return (kb.x(0) * c(s.rows) + c(s.patch_rows())) * c(s.positions) + kb.x(1);
    });
  }
  return contiguous_access(n, col, {s.batch, s.rows, s.positions});
}

// The column buffer, channels last: col[b*P + p, t*C + ch] over [N*P, J]; column
// patch_rows() all ones when there is a bias.
Access channels_last_columns(NodeLowering& n, const Access& x, const Window& win,
                             const Product& s) {
  const int col = n.temp_buffer("columns", n.out_type(0).dtype, s.batch * s.rows * s.positions);
  const size_t dims = win.dims;
  Shape ranges{s.batch};
  ranges.insert(ranges.end(), s.spatial.begin(), s.spatial.end());
  ranges.insert(ranges.end(), s.kernel.begin(), s.kernel.end());
  ranges.push_back(s.channels);  // channels innermost: runs along x's memory
  store_all(
      n, col, ranges,
      [&](const KernelBuilder& kb) {
        const Expr position =
            kb.x(0) * c(s.positions) + contiguous_index(s.spatial, vars(kb, 1, dims));
        return position * c(s.rows) +
               contiguous_index(s.kernel, vars(kb, 1 + dims, dims)) * c(s.channels) +
               kb.x(1 + 2 * dims);
      },
      [&](KernelBuilder& kb) {
        return patch_value(n, kb, x, win, kb.x(0), kb.x(1 + 2 * dims), vars(kb, 1 + dims, dims),
                           vars(kb, 1, dims));
      });
  if (s.bias) {
    store_ones(n, col, {s.batch * s.positions},
               [&](const KernelBuilder& kb) { return kb.x(0) * c(s.rows) + c(s.patch_rows()); });
  }
  return contiguous_access(n, col, {s.batch * s.positions, s.rows});
}

// The weight w[o, ch, taps...] copied into a matrix buffer of rows * outputs elements: w's
// element at `at(o, ch, tap)`, and, when in the product, bias[k] at `bias_at(k)`.
int copy_weight(NodeLowering& n, const Access& w, const Access* bias, const Product& s,
                const std::function<Expr(const Expr& o, const Expr& ch, const Expr& tap)>& at,
                const std::function<Expr(const Expr& k)>& bias_at) {
  const int matrix = n.temp_buffer("weight_matrix", n.out_type(0).dtype, s.rows * s.outputs);
  store_all(
      n, matrix, w.type.sizes,
      [&](const KernelBuilder& kb) {
        return at(kb.x(0), kb.x(1), contiguous_index(s.kernel, vars(kb, 2, s.kernel.size())));
      },
      [&](KernelBuilder& kb) { return n.load(kb, w, kb.pointwise_vars()); });
  if (bias) {
    store_all(
        n, matrix, {s.outputs}, [&](const KernelBuilder& kb) { return bias_at(kb.x(0)); },
        [&](KernelBuilder& kb) { return n.load(kb, *bias, {kb.x(0)}); });
  }
  return matrix;
}

// The weight as the product's matrix: element (o, j) at o * o_stride + j * j_stride, j =
// ch*taps + t (channels first) or t*C + ch (channels last); the bias as j = patch_rows().
// Read in place when the weight is packed so (taps inside channels, or channels inside taps)
// and there is no bias, else copied.
Access weight_matrix(NodeLowering& n, const Access& w, const Access* bias, const Product& s,
                     bool channels_last) {
  const DType dtype = n.out_type(0).dtype;
  // Matrix dims: channels first [N (stride 0), O, J]; channels last [J, O].
  const auto matrix = [&](int buffer, int64_t offset, int64_t os, int64_t js) {
    if (channels_last)
      return Access{buffer, c(offset) + dim_var(0) * c(js) + dim_var(1) * c(os),
                    TensorType::contiguous(dtype, {s.rows, s.outputs})};
    return Access{buffer, c(offset) + dim_var(1) * c(os) + dim_var(2) * c(js),
                  TensorType::contiguous(dtype, {s.batch, s.outputs, s.rows})};
  };
  const auto sw = affine_strides(w);
  if (!bias && sw) {
    std::vector<size_t> order = numbered_order(w.type.sizes.size());
    if (channels_last) std::rotate(order.begin() + 1, order.begin() + 2, order.end());
    const std::vector<int64_t> want = packed_in_order(w.type.sizes, order);
    bool packed = (*sw)[1] == want[1];  // the rows of o apart, whatever its size
    for (size_t d = 1; d < w.type.sizes.size(); ++d)
      packed = packed && (w.type.sizes[d] == 1 || (*sw)[1 + d] == want[1 + d]);
    if (packed) return matrix(w.buffer, (*sw)[0], s.patch_rows(), 1);
  }
  const int64_t j_stride = channels_last ? s.outputs : 1, o_stride = channels_last ? 1 : s.rows;
  const int copy = copy_weight(
      n, w, bias, s,
      [&](const Expr& o, const Expr& ch, const Expr& tap) {
        const Expr j = channels_last ? tap * c(s.channels) + ch : ch * c(s.taps) + tap;
        return o * c(o_stride) + j * c(j_stride);
      },
      [&](const Expr& k) { return k * c(o_stride) + c(s.patch_rows() * j_stride); });
  return matrix(copy, 0, o_stride, j_stride);
}

// a @ b into output 0 packed in `order` (the product's own layout), then `bias` added by an
// elementwise kernel where given.
bool product_into_output(NodeLowering& n, const Access& a, const Access& b, const Access* bias,
                         const std::vector<size_t>& order) {
  const TensorType& out = n.out_type(0);
  const bool tf32 = n.options().conv_tf32;
  if (!bias)
    return emit_matmul_call(n, a, b, n.realize_output_in_order(0, order).buffer, out.dtype, -1,
                            tf32);
  const int product = n.temp_buffer("product", out.dtype, out.numel());
  if (!emit_matmul_call(n, a, b, product, out.dtype, -1, tf32)) return false;
  add_channel_bias(n, packed_access(product, out, order), *bias, order);
  return true;
}

}  // namespace

bool conv_as_matmul(NodeLowering& n, const Access& x, const Access& w, const Access* bias,
                    const ConvArgs& a) {
  const TensorType& out = n.out_type(0);
  const Window& win = a.window;
  if (a.transposed || a.groups != 1 || x.type.rank() < 3) return false;
  const Product s = product_of(n, x.type.sizes[0], x.type.sizes[1], w, bias);
  if (s.column_bytes(out.dtype) > kMaxColumnBytes) return false;
  // Channels-last x (2-d, channels at stride 1): its patches read and y written in its order.
  const auto sx = affine_strides(x);
  const bool channels_last = x.type.rank() == 4 && s.channels > 1 && sx && (*sx)[2] == 1;
  if (!n.offers_extern(channels_last ? "mm" : "bmm", out.dtype)) return false;
  const Access* in_product = s.bias ? bias : nullptr;
  if (channels_last) {
    const Access cols = channels_last_columns(n, x, win, s);
    const Access wm = weight_matrix(n, w, in_product, s, true);
    return product_into_output(n, cols, wm, s.bias_after(bias), kChannelsLastOrder);
  }
  const Access cols = channels_first_columns(
      n, s,
      [&](KernelBuilder& kb, const Expr& b, const Expr& ch, const std::vector<Expr>& t,
          const std::vector<Expr>& p) { return patch_value(n, kb, x, win, b, ch, t, p); });
  const Access wm = weight_matrix(n, w, in_product, s, false);
  return product_into_output(n, wm, cols, s.bias_after(bias), numbered_order(out.sizes.size()));
}

bool wide_side_as_matmul(NodeLowering& n, const Access& y, const Access& w, const Access* bias,
                         const Window& win, int64_t groups) {
  const TensorType& out = n.out_type(0);
  if (groups != 1 || y.type.rank() < 3 || !n.offers_extern("bmm", out.dtype)) return false;
  // Summed over y's channels (w's dim 0) and the taps; w's dim 1 is the output's channels.
  const Product s = product_of(n, y.type.sizes[0], w.type.sizes[0], w, bias);
  if (s.column_bytes(out.dtype) > kMaxColumnBytes) return false;
  const Access cols = channels_first_columns(
      n, s,
      [&](KernelBuilder& kb, const Expr& b, const Expr& ch, const std::vector<Expr>& t,
          const std::vector<Expr>& q) {
        // The y position whose tap t lands on q: (q + pad - t*dilation) / stride, exactly.
        std::vector<Expr> yi{b, ch};
        int mask = -1;
        for (size_t d = 0; d < win.dims; ++d) {
          const Expr num = q[d] + c(win.padding[d]) + t[d] * c(-win.dilation[d]);
          yi.push_back(landing_position(kb, mask, num, win.stride[d], y.type.sizes[2 + d]));
        }
        return n.load(kb, y, yi, mask);
      });
  // The weight as [C, O*taps (+1)]: w[o, c, t] at c*rows + o*taps + t, the bias beside it.
  const int matrix = copy_weight(
      n, w, s.bias ? bias : nullptr, s,
      [&](const Expr& o, const Expr& ch, const Expr& tap) {
        return ch * c(s.rows) + o * c(s.taps) + tap;
      },
      [&](const Expr& k) { return k * c(s.rows) + c(s.patch_rows()); });
  const Access wm{matrix, dim_var(1) * c(s.rows) + dim_var(2),
                  TensorType::contiguous(out.dtype, {s.batch, s.outputs, s.rows})};
  return product_into_output(n, wm, cols, s.bias_after(bias), numbered_order(out.sizes.size()));
}

}  // namespace kiln
