#include "core/lower/conv_as_matmul.h"

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
  bool bias = false;
  int64_t patch_rows() const { return channels * taps; }
  int64_t column_bytes(DType d) const {
    return shape_numel({batch, rows, positions, dtype_size(d)});
  }
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

// A kernel over `ranges` storing `value` (cast to `dtype`) at `at` in `buffer`.
void store_all(NodeLowering& n, KernelBuilder kb, int buffer, const Expr& at, int value,
               DType dtype) {
  kb.store(buffer, kb.simplify_index(at), kb.cast(value, dtype));
  n.emit(std::move(kb).finish());
}

// A tap's value: the element at batch `b`, channel `ch`, tap `t` of position `p` (one Expr per
// spatial dim), 0 where there is none.
using TapValue = std::function<int(KernelBuilder& kb, const Expr& b, const Expr& ch,
                                   const std::vector<Expr>& t, const std::vector<Expr>& p)>;

// The column buffer, channels first: col[b, ch*taps + t, p] over [N, J, P]; row patch_rows()
// all ones when there is a bias.
int channels_first_columns(NodeLowering& n, const Product& s, const TapValue& value) {
  const DType dtype = n.out_type(0).dtype;
  const int col = n.temp_buffer("columns", dtype, s.batch * s.rows * s.positions);
  const size_t dims = s.kernel.size();
  Shape ranges{s.batch, s.channels};
  ranges.insert(ranges.end(), s.kernel.begin(), s.kernel.end());
  ranges.insert(ranges.end(), s.spatial.begin(), s.spatial.end());
  KernelBuilder kb = n.kernel(ranges);  // positions innermost: runs along the output's width
  const std::vector<Expr> t = vars(kb, 2, dims), p = vars(kb, 2 + dims, dims);
  const Expr row = kb.x(1) * c(s.taps) + contiguous_index(s.kernel, t);
  const Expr at = (kb.x(0) * c(s.rows) + row) * c(s.positions) + contiguous_index(s.spatial, p);
  const int v = value(kb, kb.x(0), kb.x(1), t, p);
  store_all(n, std::move(kb), col, at, v, dtype);
  if (s.bias) {
    KernelBuilder ones = n.kernel({s.batch, s.positions});
    const Expr one_at = (ones.x(0) * c(s.rows) + c(s.patch_rows())) * c(s.positions) + ones.x(1);
    const int one = ones.constant(dtype, 1);
    store_all(n, std::move(ones), col, one_at, one, dtype);
  }
  return col;
}

// The column buffer, channels last: col[b*P + p, t*C + ch] over [N*P, J]; column
// patch_rows() all ones when there is a bias.
int channels_last_columns(NodeLowering& n, const Access& x, const Window& win, const Product& s) {
  const DType dtype = n.out_type(0).dtype;
  const int col = n.temp_buffer("columns", dtype, s.batch * s.rows * s.positions);
  const size_t dims = win.dims;
  Shape ranges{s.batch};
  ranges.insert(ranges.end(), s.spatial.begin(), s.spatial.end());
  ranges.insert(ranges.end(), s.kernel.begin(), s.kernel.end());
  ranges.push_back(s.channels);  // channels innermost: runs along x's memory
  KernelBuilder kb = n.kernel(ranges);
  const std::vector<Expr> p = vars(kb, 1, dims), t = vars(kb, 1 + dims, dims);
  const Expr ch = kb.x(1 + 2 * dims);
  const Expr position = kb.x(0) * c(s.positions) + contiguous_index(s.spatial, p);
  const Expr at = position * c(s.rows) + contiguous_index(s.kernel, t) * c(s.channels) + ch;
  const int v = patch_value(n, kb, x, win, kb.x(0), ch, t, p);
  store_all(n, std::move(kb), col, at, v, dtype);
  if (s.bias) {
    KernelBuilder ones = n.kernel({s.batch * s.positions});
    const Expr one_at = ones.x(0) * c(s.rows) + c(s.patch_rows());
    const int one = ones.constant(dtype, 1);
    store_all(n, std::move(ones), col, one_at, one, dtype);
  }
  return col;
}

// The weight as the product's matrix: element (o, j) at o * o_stride + j * j_stride, j =
// ch*taps + t (channels first) or t*C + ch (channels last); the bias as j = patch_rows().
// Read in place when the weight is packed so and there is no bias, else copied.
Access weight_matrix(NodeLowering& n, const Access& w, const Access* bias, const Product& s,
                     bool channels_last) {
  const DType dtype = n.out_type(0).dtype;
  const int64_t j_stride = channels_last ? s.outputs : 1, o_stride = channels_last ? 1 : s.rows;
  // Matrix dims: channels first [N (stride 0), O, J]; channels last [J, O].
  const auto matrix = [&](int buffer, int64_t offset, int64_t os, int64_t js) {
    if (channels_last)
      return Access{buffer, c(offset) + dim_var(0) * c(js) + dim_var(1) * c(os),
                    TensorType::contiguous(dtype, {s.rows, s.outputs})};
    return Access{buffer, c(offset) + dim_var(1) * c(os) + dim_var(2) * c(js),
                  TensorType::contiguous(dtype, {s.batch, s.outputs, s.rows})};
  };
  if (!bias) {
    if (const auto sw = affine_strides(w)) {
      // Packed as the matrix wants it: taps contiguous under channels (NCHW) or channels
      // contiguous under taps (channels-last).
      std::vector<int64_t> want(w.type.rank());
      int64_t step = 1;
      if (!channels_last) {
        for (size_t d = w.type.rank(); d-- > 1;) {
          want[d] = step;
          step *= w.type.sizes[d];
        }
      } else {
        want[1] = 1;
        step = s.channels;
        for (size_t d = w.type.rank(); d-- > 2;) {
          want[d] = step;
          step *= w.type.sizes[d];
        }
      }
      bool packed = true;
      for (size_t d = 1; d < want.size(); ++d)
        packed = packed && (w.type.sizes[d] == 1 || (*sw)[1 + d] == want[d]);
      if (packed && (*sw)[1] == s.patch_rows())
        return matrix(w.buffer, (*sw)[0], s.patch_rows(), 1);
    }
  }
  const int copy = n.temp_buffer("weight_matrix", dtype, s.rows * s.outputs);
  KernelBuilder kb = n.kernel(w.type.sizes);
  const std::vector<Expr> t = vars(kb, 2, s.kernel.size());
  const Expr tap = contiguous_index(s.kernel, t);
  const Expr j = channels_last ? tap * c(s.channels) + kb.x(1) : kb.x(1) * c(s.taps) + tap;
  const Expr at = kb.x(0) * c(o_stride) + j * c(j_stride);
  const int v = n.load(kb, w, kb.pointwise_vars());
  store_all(n, std::move(kb), copy, at, v, dtype);
  if (bias) {
    KernelBuilder bk = n.kernel({s.outputs});
    const int bv = n.load(bk, *bias, {bk.x(0)});
    const Expr bias_at = bk.x(0) * c(o_stride) + c(s.patch_rows() * j_stride);
    store_all(n, std::move(bk), copy, bias_at, bv, dtype);
  }
  return matrix(copy, 0, o_stride, j_stride);
}

// a @ b into output 0 packed in `order` (the product's own layout), then `bias` added by an
// elementwise kernel where given.
bool product_into_output(NodeLowering& n, const Access& a, const Access& b, const Access* bias,
                         const std::vector<size_t>& order, bool tf32) {
  const TensorType& out = n.out_type(0);
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
  const Access* bias_after = bias != nullptr && !s.bias ? bias : nullptr;
  if (s.column_bytes(out.dtype) > kMaxColumnBytes) return false;
  // Channels-last x (2-d, channels at stride 1): its patches read and y written in its order.
  const auto sx = affine_strides(x);
  const bool channels_last = x.type.rank() == 4 && s.channels > 1 && sx && (*sx)[2] == 1;
  if (!n.offers_extern(channels_last ? "mm" : "bmm", out.dtype)) return false;
  const bool tf32 = n.options().conv_tf32;
  if (channels_last) {
    const int col = channels_last_columns(n, x, win, s);
    const Access cols{col,
                      contiguous_index({s.batch * s.positions, s.rows}, {dim_var(0), dim_var(1)}),
                      TensorType::contiguous(out.dtype, {s.batch * s.positions, s.rows})};
    const Access wm = weight_matrix(n, w, s.bias ? bias : nullptr, s, true);
    return product_into_output(n, cols, wm, bias_after, kChannelsLastOrder, tf32);
  }
  const int col = channels_first_columns(
      n, s,
      [&](KernelBuilder& kb, const Expr& b, const Expr& ch, const std::vector<Expr>& t,
          const std::vector<Expr>& p) { return patch_value(n, kb, x, win, b, ch, t, p); });
  const Access cols{
      col, contiguous_index({s.batch, s.rows, s.positions}, {dim_var(0), dim_var(1), dim_var(2)}),
      TensorType::contiguous(out.dtype, {s.batch, s.rows, s.positions})};
  const Access wm = weight_matrix(n, w, s.bias ? bias : nullptr, s, false);
  std::vector<size_t> channels_first(out.sizes.size());  // y packed as it is numbered
  std::iota(channels_first.begin(), channels_first.end(), size_t{0});
  return product_into_output(n, wm, cols, bias_after, channels_first, tf32);
}

bool wide_side_as_matmul(NodeLowering& n, const Access& y, const Access& w, const Access* bias,
                         const Window& win, int64_t groups) {
  const TensorType& out = n.out_type(0);
  if (groups != 1 || y.type.rank() < 3 || !n.offers_extern("bmm", out.dtype)) return false;
  // Summed over y's channels (w's dim 0) and the taps; w's dim 1 is the output's channels.
  const Product s = product_of(n, y.type.sizes[0], w.type.sizes[0], w, bias);
  if (s.column_bytes(out.dtype) > kMaxColumnBytes) return false;
  const int col = channels_first_columns(
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
  const Access cols{
      col, contiguous_index({s.batch, s.rows, s.positions}, {dim_var(0), dim_var(1), dim_var(2)}),
      TensorType::contiguous(out.dtype, {s.batch, s.rows, s.positions})};
  // The weight as [C, O*taps (+1)]: w[o, c, t] at c*rows + o*taps + t, the bias beside it.
  const int matrix = n.temp_buffer("weight_matrix", out.dtype, s.outputs * s.rows);
  KernelBuilder kb = n.kernel(w.type.sizes);
  const Expr tap = contiguous_index(s.kernel, vars(kb, 2, s.kernel.size()));
  const Expr at = kb.x(1) * c(s.rows) + kb.x(0) * c(s.taps) + tap;
  const int v = n.load(kb, w, kb.pointwise_vars());
  store_all(n, std::move(kb), matrix, at, v, out.dtype);
  if (s.bias) {
    KernelBuilder bk = n.kernel({s.outputs});
    const int bv = n.load(bk, *bias, {bk.x(0)});
    const Expr bias_at = bk.x(0) * c(s.rows) + c(s.patch_rows());
    store_all(n, std::move(bk), matrix, bias_at, bv, out.dtype);
  }
  const Access wm{matrix, dim_var(1) * c(s.rows) + dim_var(2),
                  TensorType::contiguous(out.dtype, {s.batch, s.outputs, s.rows})};
  std::vector<size_t> channels_first(out.sizes.size());
  std::iota(channels_first.begin(), channels_first.end(), size_t{0});
  return product_into_output(n, wm, cols, bias != nullptr && !s.bias ? bias : nullptr,
                             channels_first, n.options().conv_tf32);
}

}  // namespace kiln
