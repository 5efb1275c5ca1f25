// Convolution and its backward as Reduction kernels in gather form: each output element is
// one row that sums its own products, so no kernel writes an element twice (no atomics) and
// the result is deterministic. With the regular relation y = conv(x, w) (x the wide side):
//   regular forward, transposed grad_input:  y[n, o, p] = sum_{c, t} x[n, c, p*s - pad + t*d] w
//   transposed forward, regular grad_input:  x[n, c, q] = sum_{o, t} y[n, o, (q + pad - t*d)/s] w
//                                            (taps where the division is exact)
//   grad_weight:  w[o, c, t] = sum_{n, p} y[n, o, p] * x[n, c, p*s - pad + t*d]
//   grad_bias:    b[o] = sum_{n, p} dy[n, o, p]
// A bias, activation or residual add after the convolution fuses in as the row's epilogue.
// A forward convolution goes to the plugin's convolution library first, then to its matmul
// library as an explicit product (conv_as_matmul.h); this form is what remains.
#include <numeric>

#include "core/lower/conv_as_matmul.h"
#include "core/lower/conv_library_call.h"
#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/conv_args.h"

namespace kiln {
namespace {

Expr c(int64_t v) {
  return Expr::constant(v);
}

// The row's sum, plus bias[channel] when given, stored into output `slot`.
void finish_rows(NodeLowering& n, KernelBuilder& kb, int sum, DType acc, const Access* bias,
                 const Expr& channel, size_t slot) {
  if (bias) sum = kb.math("add", acc, {sum, kb.cast(n.load(kb, *bias, {channel}), acc)});
  const TensorType& out = n.out_type(slot);
  const Access o = n.realize_output(slot);
  kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()), kb.cast(sum, out.dtype));
  n.emit(std::move(kb).finish());
}

// The row's sum of a * b in the compute dtype, finished as finish_rows does.
void sum_products(NodeLowering& n, KernelBuilder& kb, int a, int b, const Access* bias,
                  const Expr& channel, size_t slot) {
  const DType acc = compute_dtype(n.out_type(slot).dtype);
  const int sum = kb.reduce("sum", acc, kb.math("mul", acc, {kb.cast(a, acc), kb.cast(b, acc)}));
  finish_rows(n, kb, sum, acc, bias, channel, slot);
}

// y = conv(x, w) into output `slot`: x [N, C, *], w [O, C/groups, *k], y [N, O, *].
void narrow_side(NodeLowering& n, const Access& x, const Access& w, const Access* bias,
                 const Window& win, int64_t groups, size_t slot) {
  const Shape& y = n.out_type(slot).sizes;
  const Shape &xs = x.type.sizes, &ws = w.type.sizes;
  const int64_t in_per_group = ws[1], out_per_group = y[1] / groups;
  Shape reduction{in_per_group};
  reduction.insert(reduction.end(), win.kernel.begin(), win.kernel.end());
  KernelBuilder kb = n.kernel(y, reduction);
  const Expr channel = floordiv(kb.x(1), c(out_per_group)) * c(in_per_group) + kb.r(0);
  std::vector<Expr> xi{kb.x(0), channel}, wi{kb.x(1), kb.r(0)};
  int mask = -1;
  for (size_t d = 0; d < win.dims; ++d) {
    const Expr at =
        kb.x(2 + d) * c(win.stride[d]) + c(-win.padding[d]) + kb.r(1 + d) * c(win.dilation[d]);
    mask = mask_and(kb, mask, between(kb, at, 0, c(xs[2 + d])));
    xi.push_back(clamp_index(at, 0, xs[2 + d] - 1));
    wi.push_back(kb.r(1 + d));
  }
  sum_products(n, kb, n.load(kb, x, xi, mask), n.load(kb, w, wi), bias, kb.x(1), slot);
}

// x = conv^T(y, w) into output `slot`: y [N, O, *], w [O, C/groups, *k], x [N, C, *].
void wide_side(NodeLowering& n, const Access& y, const Access& w, const Access* bias,
               const Window& win, int64_t groups, size_t slot) {
  const Shape& x = n.out_type(slot).sizes;
  const Shape &ys = y.type.sizes, &ws = w.type.sizes;
  const int64_t out_per_group = ys[1] / groups, in_per_group = ws[1];
  Shape reduction{out_per_group};
  reduction.insert(reduction.end(), win.kernel.begin(), win.kernel.end());
  KernelBuilder kb = n.kernel(x, reduction);
  const Expr group = floordiv(kb.x(1), c(in_per_group));
  const Expr o = group * c(out_per_group) + kb.r(0);
  std::vector<Expr> yi{kb.x(0), o}, wi{o, mod(kb.x(1), c(in_per_group))};
  int mask = -1;
  for (size_t d = 0; d < win.dims; ++d) {
    const Expr num = kb.x(2 + d) + c(win.padding[d]) + kb.r(1 + d) * c(-win.dilation[d]);
    yi.push_back(landing_position(kb, mask, num, win.stride[d], ys[2 + d]));
    wi.push_back(kb.r(1 + d));
  }
  sum_products(n, kb, n.load(kb, y, yi, mask), n.load(kb, w, wi), bias, kb.x(1), slot);
}

// grad_weight into output `slot` [O, C/groups, *k]: dy [N, O, *], x [N, C, *] (the regular
// relation's two sides, whichever of them is the op's input).
void weight_grad(NodeLowering& n, const Access& dy, const Access& x, const Window& win,
                 int64_t groups, size_t slot) {
  const Shape& w = n.out_type(slot).sizes;
  const Shape &ys = dy.type.sizes, &xs = x.type.sizes;
  Shape reduction{ys[0]};
  reduction.insert(reduction.end(), ys.begin() + 2, ys.end());
  KernelBuilder kb = n.kernel(w, reduction);
  const Expr channel = floordiv(kb.x(0), c(w[0] / groups)) * c(w[1]) + kb.x(1);
  std::vector<Expr> yi{kb.r(0), kb.x(0)}, xi{kb.r(0), channel};
  int mask = -1;
  for (size_t d = 0; d < win.dims; ++d) {
    const Expr at =
        kb.r(1 + d) * c(win.stride[d]) + c(-win.padding[d]) + kb.x(2 + d) * c(win.dilation[d]);
    mask = mask_and(kb, mask, between(kb, at, 0, c(xs[2 + d])));
    yi.push_back(kb.r(1 + d));
    xi.push_back(clamp_index(at, 0, xs[2 + d] - 1));
  }
  sum_products(n, kb, n.load(kb, dy, yi), n.load(kb, x, xi, mask), nullptr, Expr(), slot);
}

// grad_bias into output `slot` [O]: the sum of dy over batch and space.
void bias_grad(NodeLowering& n, const Access& dy, size_t slot) {
  const Shape& ys = dy.type.sizes;
  Shape reduction{ys[0]};
  reduction.insert(reduction.end(), ys.begin() + 2, ys.end());
  KernelBuilder kb = n.kernel(n.out_type(slot).sizes, reduction);
  std::vector<Expr> yi{kb.r(0), kb.x(0)};
  for (size_t d = 2; d < ys.size(); ++d) yi.push_back(kb.r(d - 1));
  const DType acc = compute_dtype(n.out_type(slot).dtype);
  finish_rows(n, kb, kb.reduce("sum", acc, kb.cast(n.load(kb, dy, yi), acc)), acc, nullptr, Expr(),
              slot);
}

bool any_empty(const Shape& s) {
  return shape_numel(s) == 0;
}

// Access `a` (over dims d0..) read through a view whose dim i is `dims[i]` of the old ones.
Access view_of(const Access& a, const Shape& sizes, const std::vector<Expr>& old_dims) {
  std::map<std::string, Expr> bindings;
  for (size_t i = 0; i < old_dims.size(); ++i) bindings["d" + std::to_string(i)] = old_dims[i];
  return {a.buffer, substitute(a.index, bindings), TensorType::contiguous(a.type.dtype, sizes)};
}

// A 1x1 convolution with stride 1, no padding and one group is a batched matrix product,
// y[n] = W [O, C] @ x[n] [C, P] over the P spatial positions: a call to the plugin's matmul
// library (a generated matmul where it has none), the bias added by an elementwise kernel
// (f32 and f64; half types with a bias keep the gather form). A channels-last x gives a
// channels-last y, as PyTorch's does: y[n] [P, O] = x[n] [P, C] @ Wᵀ [C, O], both read in
// place, y written in its memory order.
bool pointwise_conv(NodeLowering& n, const Access& x, const Access& w, const Access* bias,
                    const ConvArgs& a) {
  const Window& win = a.window;
  for (size_t d = 0; d < win.dims; ++d)
    if (win.kernel[d] != 1 || win.stride[d] != 1 || win.padding[d] != 0) return false;
  if (a.transposed || a.groups != 1) return false;
  const TensorType& out = n.out_type(0);
  // The product is stored in the output dtype before the bias is added: for half types that
  // is a second rounding, which a bias cancelling the product magnifies. Those stay gathers.
  if (bias && compute_dtype(out.dtype) != out.dtype) return false;
  const Shape& xs = x.type.sizes;
  const int64_t batch = xs[0], in_ch = xs[1], out_ch = out.sizes[1];
  const Shape spatial(xs.begin() + 2, xs.end());
  const int64_t positions = shape_numel(spatial);
  // W as [N, O, C] (batch stride 0): d0 -> O, d1 -> C, kernel dims 0.
  std::vector<Expr> w_dims{dim_var(1), dim_var(2)};
  for (size_t d = 0; d < win.dims; ++d) w_dims.push_back(Expr::constant(0));
  const Access wv = view_of(w, {batch, out_ch, in_ch}, w_dims);
  // x as [N, C, P]: one stride over the positions when the spatial dims nest (NCHW and
  // channels-last both do), else the position unravelled over them (a copy follows).
  Access xv;
  const auto sx = affine_strides(x);
  bool nested = sx.has_value();
  int64_t step = 1, span = 1;  // the position's stride; the elements the inner dims cover
  for (size_t d = spatial.size(); nested && d-- > 0;) {
    if (spatial[d] == 1) continue;  // any stride: only index 0 is read
    const int64_t stride = (*sx)[3 + d];
    if (span == 1)
      step = stride;
    else
      nested = stride == step * span;
    span *= spatial[d];
  }
  const bool tf32 = n.options().conv_tf32;  // a convolution's precision, whatever its form
  if (nested && xs.size() == 4 && in_ch > 1 && positions > 1 && (*sx)[2] == 1 && step == in_ch) {
    const Access xt{x.buffer,
                    Expr::constant((*sx)[0]) + dim_var(0) * Expr::constant((*sx)[1]) +
                        dim_var(1) * Expr::constant(step) + dim_var(2),
                    TensorType::contiguous(x.type.dtype, {batch, positions, in_ch})};
    const Access wt = view_of(w, {batch, in_ch, out_ch},
                              {dim_var(2), dim_var(1), Expr::constant(0), Expr::constant(0)});
    if (!bias) {
      const int y = n.realize_output_in_order(0, kChannelsLastOrder).buffer;
      return emit_matmul_call(n, xt, wt, y, out.dtype, -1, tf32);
    }
    const int product = n.temp_buffer("product", out.dtype, out.numel());
    if (!emit_matmul_call(n, xt, wt, product, out.dtype, -1, tf32)) return false;
    add_channel_bias(n, packed_access(product, out, kChannelsLastOrder), *bias, kChannelsLastOrder);
    return true;
  }
  if (nested) {
    xv = {x.buffer,
          Expr::constant((*sx)[0]) + dim_var(0) * Expr::constant((*sx)[1]) +
              dim_var(1) * Expr::constant((*sx)[2]) + dim_var(2) * Expr::constant(step),
          TensorType::contiguous(x.type.dtype, {batch, in_ch, positions})};
  } else {
    std::vector<Expr> x_dims{dim_var(0), dim_var(1)};
    int64_t inner = positions;
    for (size_t d = 0; d < spatial.size(); ++d) {
      inner /= spatial[d];
      const Expr q = floordiv(dim_var(2), Expr::constant(inner));
      x_dims.push_back(d == 0 ? q : mod(q, Expr::constant(spatial[d])));
    }
    xv = view_of(x, {batch, in_ch, positions}, x_dims);
  }
  if (!bias) return emit_matmul_call(n, wv, xv, n.realize_output(0).buffer, out.dtype, -1, tf32);
  const int product = n.temp_buffer("product", out.dtype, out.numel());
  if (!emit_matmul_call(n, wv, xv, product, out.dtype, -1, tf32)) return false;
  std::vector<size_t> order(out.sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  add_channel_bias(n, packed_access(product, out, order), *bias, order);
  return true;
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
// groups)
bool convolution(NodeLowering& n) {
  const Access &x = n.operand(0), &w = n.operand(1);
  const ConvArgs a = conv_args(n.args(), 3, w.type.sizes);
  if (any_empty(n.out_type().sizes) || any_empty(x.type.sizes) || any_empty(w.type.sizes))
    return false;  // nothing to sum or nothing to write: the host gives zeros and bias
  const Access* bias = n.args().is_none(2) ? nullptr : &n.operand(2);
  if (pointwise_conv(n, x, w, bias, a)) return true;
  if (emit_conv_library_call(n, x, w, bias, a)) return true;
  if (emit_conv_transposed_library_call(n, x, w, bias, a)) return true;
  if (conv_as_matmul(n, x, w, bias, a)) return true;
  if (a.transposed && wide_side_as_matmul(n, x, w, bias, a.window, a.groups)) return true;
  if (a.transposed)
    wide_side(n, x, w, bias, a.window, a.groups, 0);
  else
    narrow_side(n, x, w, bias, a.window, a.groups, 0);
  return true;
}

// convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding, dilation,
// transposed, output_padding, groups, output_mask): each requested gradient is one kernel; an
// unrequested one is an empty output.
bool convolution_backward(NodeLowering& n) {
  const Access &dy = n.operand(0), &x = n.operand(1), &w = n.operand(2);
  const ConvArgs a = conv_args(n.args(), 4, w.type.sizes);
  if (any_empty(dy.type.sizes) || any_empty(x.type.sizes) || any_empty(w.type.sizes)) return false;
  // The regular relation's wide side is the op's input, or its output when transposed.
  const Access& wide = a.transposed ? dy : x;
  const Access& narrow = a.transposed ? x : dy;
  for (size_t k = 0; k < 3; ++k) {
    if (n.out_type(k).numel() == 0) {
      n.realize_output(k);
      continue;
    }
    if (k == 0 && a.transposed) {
      ConvArgs regular = a;  // the transposed convolution's input gradient: a regular one
      regular.transposed = false;
      if (!conv_as_matmul(n, dy, w, nullptr, regular))
        narrow_side(n, dy, w, nullptr, a.window, a.groups, 0);
    } else if (k == 0 && !emit_conv_backward_input_call(n, dy, w, a, 0) &&
               !wide_side_as_matmul(n, dy, w, nullptr, a.window, a.groups)) {
      wide_side(n, dy, w, nullptr, a.window, a.groups, 0);
    } else if (k == 1 && !emit_conv_backward_weight_call(n, x, dy, a, 1))
      weight_grad(n, narrow, wide, a.window, a.groups, 1);
    else if (k == 2)
      bias_grad(n, dy, 2);
  }
  return true;
}

}  // namespace

std::map<std::string, LowerFn> conv_lowerings() {
  return {{"aten.convolution.default", convolution},
          {"aten.convolution_backward.default", convolution_backward}};
}

}  // namespace kiln
