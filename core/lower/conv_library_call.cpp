#include "core/lower/conv_library_call.h"

#include <algorithm>
#include <optional>

#include "core/lower/emit_library_call.h"
#include "core/lower/library_call_signature.h"

namespace kiln {

namespace {

// The strides (offset first, then N, C, H, W) of x laid out densely as NCHW or as NHWC
// (channels-last), each size-1 dim given the stride that layout implies (cuDNN rejects the 0
// a size-1 dim may carry); none when x is laid out otherwise.
std::optional<std::vector<int64_t>> packed_strides(const std::vector<int64_t>& strides,
                                                   const Shape& sizes) {
  for (const std::vector<int>& order :
       {std::vector<int>{0, 1, 2, 3}, std::vector<int>{0, 2, 3, 1}}) {
    std::vector<int64_t> dense = strides;
    int64_t expected = 1;
    bool matches = true;
    for (size_t i = order.size(); i-- > 0;) {
      const auto d = static_cast<size_t>(order[i]);
      matches = matches && (sizes[d] == 1 || strides[d + 1] == expected);
      dense[d + 1] = expected;
      expected *= sizes[d];
    }
    if (matches) return dense;
  }
  return std::nullopt;
}

// The strides (offset first) of x as a call reads it: in place when packed, else those of
// the contiguous copy made for it (`copy`).
struct XLayout {
  std::vector<int64_t> strides;
  bool copy = false;
};

XLayout x_layout(const Access& x) {
  const Shape& xs = x.type.sizes;
  const auto affine = affine_strides(x);
  if (auto sx = affine ? packed_strides(*affine, xs) : std::nullopt) return {*sx, false};
  std::vector<int64_t> contiguous = {0};
  for (int64_t v : contiguous_strides(xs)) contiguous.push_back(v);
  return {*packed_strides(contiguous, xs), true};
}

// cuDNN takes int sizes and strides: larger tensors keep the generated kernels.
bool fits_int(const XLayout& x, std::initializer_list<int64_t> sizes) {
  constexpr int64_t kIntMax = 2147483647;
  int64_t largest = 0;
  for (int64_t v : sizes) largest = std::max(largest, v);
  for (int64_t v : x.strides) largest = std::max(largest, v);
  return largest <= kIntMax;
}

// The call `name` with the forward convolution's parameters: x of sizes `xs` laid out as
// `x`, the output of sizes `ys`.
LoopKernel conv_call(const NodeLowering& n, const std::string& name, DType dtype, const Shape& xs,
                     const XLayout& x, const Shape& ys, const ConvArgs& a) {
  const Window& win = a.window;
  LoopKernel k;
  k.kind = LoopKernelKind::Extern;
  k.extern_name = name;
  k.attrs = {{"dtype", n.library_dtype(name, dtype, n.options().conv_tf32)},
             {"n", xs[0]},
             {"c", xs[1]},
             {"h", xs[2]},
             {"w", xs[3]},
             {"k", ys[1]},
             {"r", win.kernel[0]},
             {"s", win.kernel[1]},
             {"out_h", ys[2]},
             {"out_w", ys[3]},
             {"stride_h", win.stride[0]},
             {"stride_w", win.stride[1]},
             {"pad_h", win.padding[0]},
             {"pad_w", win.padding[1]},
             {"dil_h", win.dilation[0]},
             {"dil_w", win.dilation[1]},
             {"groups", a.groups},
             {"x_offset", x.copy ? 0 : x.strides[0]},
             {"x_stride_n", x.strides[1]},
             {"x_stride_c", x.strides[2]},
             {"x_stride_h", x.strides[3]},
             {"x_stride_w", x.strides[4]}};
  return k;
}

// A pointwise kernel over a tensor of `sizes` walking its memory when packed in `order`, and
// its variables in the tensor's dim order.
struct OrderedKernel {
  KernelBuilder kb;
  std::vector<Expr> at;
};
OrderedKernel kernel_in_order(NodeLowering& n, const Shape& sizes,
                              const std::vector<size_t>& order) {
  Shape ranges;
  for (size_t d : order) ranges.push_back(sizes[d]);
  OrderedKernel k{n.kernel(ranges), std::vector<Expr>(order.size())};
  for (size_t i = 0; i < order.size(); ++i) k.at[order[i]] = k.kb.x(i);
  return k;
}

// `a` copied into a temporary packed with its dims in `order`.
Access packed_copy(NodeLowering& n, const Access& a, const std::vector<size_t>& order) {
  const int buffer = n.temp_buffer("packed", a.type.dtype, a.type.numel());
  const Access to = packed_access(buffer, a.type, order);
  auto [kb, at] = kernel_in_order(n, a.type.sizes, order);
  kb.store(buffer, n.address(kb, to, at), n.load(kb, a, at));
  n.emit(std::move(kb).finish());
  return to;
}

// Whether the plugin offers `name` for `dtype` on a 2-d convolution that is not transposed.
bool applies(const NodeLowering& n, const std::string& name, DType dtype, const ConvArgs& a) {
  return !a.transposed && a.window.dims == 2 && n.offers_extern(name, dtype);
}

}  // namespace

std::vector<int64_t> packed_in_order(const Shape& sizes, const std::vector<size_t>& order) {
  std::vector<int64_t> strides(sizes.size() + 1, 0);
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i] + 1] = step;
    step *= sizes[order[i]];
  }
  return strides;
}

void add_channel_bias(NodeLowering& n, const Access& y, const Access& bias,
                      const std::vector<size_t>& order) {
  const TensorType& out = n.out_type(0);
  const Access o = n.realize_output_in_order(0, order);
  auto [kb, at] = kernel_in_order(n, out.sizes, order);
  const DType acc = compute_dtype(out.dtype);
  const int sum = kb.math(
      "add", acc, {kb.cast(n.load(kb, y, at), acc), kb.cast(n.load(kb, bias, {at[1]}), acc)});
  kb.store(o.buffer, n.address(kb, o, at), kb.cast(sum, out.dtype));
  n.emit(std::move(kb).finish());
}

namespace {

// The convolution call `k` writing output 0 laid out in `order`; with a bias, a temporary
// that a kernel then adds the bias to.
void emit_call_then_bias(NodeLowering& n, LoopKernel k, std::vector<int> inputs, const Access* bias,
                         const std::vector<size_t>& order) {
  if (!bias) {
    emit_library_call(n, std::move(k), std::move(inputs),
                      n.realize_output_in_order(0, order).buffer);
    return;
  }
  const TensorType& out = n.out_type(0);
  const int y = n.temp_buffer("convolution", out.dtype, out.numel());
  emit_library_call(n, std::move(k), std::move(inputs), y);
  add_channel_bias(n, packed_access(y, out, order), *bias, order);
}

}  // namespace

bool emit_conv_library_call(NodeLowering& n, const Access& x_in, const Access& w,
                            const Access* bias, const ConvArgs& a) {
  const TensorType& out = n.out_type(0);
  if (!applies(n, "conv2d", out.dtype, a)) return false;
  if (bias && compute_dtype(out.dtype) != out.dtype) return false;
  // An implicit GEMM (the `implicit_gemm` feature) reads channels 16 bytes at a time: x and
  // the weight go to it channels-last (copied so where they are not), and convolutions of
  // fewer than 8 channels per group beside other groups (depthwise), which it would compute
  // mostly on padding, keep the generated kernels.
  const bool implicit_gemm = n.offers_extern_feature("conv2d", "implicit_gemm");
  const int64_t per_group = x_in.type.sizes[1] / a.groups;
  if (implicit_gemm && a.groups > 1 && per_group < 8) return false;
  const bool to_channels_last = implicit_gemm && per_group % 8 == 0;
  // An input neither NCHW nor NHWC packed is copied first (cuDNN reports NOT_SUPPORTED
  // for other strides, measured on the H100): the call then reads the contiguous copy.
  const XLayout given = x_layout(x_in);
  XLayout layout = given;
  if (to_channels_last && (given.copy || given.strides[2] != 1))
    layout = {packed_in_order(x_in.type.sizes, kChannelsLastOrder), true};
  if (!fits_int(layout, {x_in.type.numel(), out.numel()})) return false;
  LoopKernel k = conv_call(n, "conv2d", out.dtype, x_in.type.sizes, layout, out.sizes, a);
  // With the `strides` feature the weight is read in place when packed (NCHW or
  // channels-last, from its buffer's start) and the output is channels-last where x is, as
  // PyTorch keeps it: no transposes around the call, no copy after it.
  const bool strided = n.offers_extern_feature("conv2d", "strides");
  const XLayout w_contiguous{packed_in_order(w.type.sizes, kNchwOrder), true};
  XLayout w_layout = strided ? x_layout(w) : w_contiguous;
  if (w_layout.copy || w_layout.strides[0] != 0) w_layout = w_contiguous;
  if (to_channels_last && strided && w_layout.strides[2] != 1)
    w_layout = {packed_in_order(w.type.sizes, kChannelsLastOrder), true};
  const std::vector<size_t>& y_order =
      strided && given.strides[2] == 1 && x_in.type.sizes[1] > 1 ? kChannelsLastOrder : kNchwOrder;
  if (strided) {
    const std::vector<int64_t> y_strides = packed_in_order(out.sizes, y_order);
    const char* const w_names[] = {"w_stride_k", "w_stride_c", "w_stride_r", "w_stride_s"};
    const char* const y_names[] = {"y_stride_n", "y_stride_k", "y_stride_h", "y_stride_w"};
    for (size_t i = 0; i < 4; ++i) k.attrs.emplace_back(w_names[i], w_layout.strides[i + 1]);
    for (size_t i = 0; i < 4; ++i) k.attrs.emplace_back(y_names[i], y_strides[i + 1]);
  }
  // The autotuner timed this shape's generated kernels faster than the library.
  if (n.declines_library_call(library_call_signature(k))) return false;
  const Access x = !layout.copy             ? x_in
                   : layout.strides[2] == 1 ? packed_copy(n, x_in, kChannelsLastOrder)
                                            : n.contiguous(x_in);
  const Access wc = !w_layout.copy             ? w
                    : w_layout.strides[2] == 1 ? packed_copy(n, w, kChannelsLastOrder)
                                               : n.contiguous(w);
  emit_call_then_bias(n, std::move(k), {x.buffer, wc.buffer}, bias, y_order);
  return true;
}

namespace {

// The backward-data call that writes dx (contiguous, of type `dx`) from dy and the weight;
// none where the plugin offers no such call for this shape or the autotuner declined it.
std::optional<LoopKernel> backward_input_kernel(NodeLowering& n, const Access& dy,
                                                const TensorType& dx, const ConvArgs& a) {
  if (!applies(n, "conv2d_backward_input", dx.dtype, a)) return std::nullopt;
  XLayout layout{{0}, false};  // dx: the contiguous output
  for (int64_t v : contiguous_strides(dx.sizes)) layout.strides.push_back(v);
  if (!fits_int(layout, {dx.numel(), dy.type.numel()})) return std::nullopt;
  LoopKernel k =
      conv_call(n, "conv2d_backward_input", dx.dtype, dx.sizes, layout, dy.type.sizes, a);
  if (n.declines_library_call(library_call_signature(k))) return std::nullopt;
  return k;
}

// Whether the regular convolution of y (sizes `ys`) with `a` has x's spatial sizes `xs`: not
// so where an output_padding reaches the stride (PyTorch allows it below the dilation too),
// and the call would refuse the sizes when it runs.
bool reverses_to(const Shape& xs, const Shape& ys, const ConvArgs& a) {
  const Window& win = a.window;
  for (size_t d = 0; d < win.kernel.size(); ++d) {
    const int64_t span = win.dilation[d] * (win.kernel[d] - 1) + 1;
    if ((ys[d + 2] + 2 * win.padding[d] - span) / win.stride[d] + 1 != xs[d + 2]) return false;
  }
  return true;
}

}  // namespace

bool emit_conv_backward_input_call(NodeLowering& n, const Access& dy, const Access& w,
                                   const ConvArgs& a, size_t slot) {
  auto k = backward_input_kernel(n, dy, n.out_type(slot), a);
  if (!k) return false;
  const Access dyc = n.contiguous(dy);
  const Access wc = n.contiguous(w);
  emit_library_call(n, std::move(*k), {dyc.buffer, wc.buffer}, n.realize_output(slot).buffer);
  return true;
}

bool emit_conv_transposed_library_call(NodeLowering& n, const Access& x, const Access& w,
                                       const Access* bias, const ConvArgs& a) {
  const TensorType& out = n.out_type(0);
  if (!a.transposed || (bias && compute_dtype(out.dtype) != out.dtype)) return false;
  if (!reverses_to(x.type.sizes, out.sizes, a)) return false;
  ConvArgs regular = a;
  regular.transposed = false;
  auto k = backward_input_kernel(n, x, out, regular);
  if (!k) return false;
  const Access xc = n.contiguous(x);
  const Access wc = n.contiguous(w);
  emit_call_then_bias(n, std::move(*k), {xc.buffer, wc.buffer}, bias, kNchwOrder);
  return true;
}

bool emit_conv_backward_weight_call(NodeLowering& n, const Access& x_in, const Access& dy,
                                    const ConvArgs& a, size_t slot) {
  const TensorType& dw = n.out_type(slot);
  if (!applies(n, "conv2d_backward_weight", dw.dtype, a)) return false;
  XLayout layout = x_layout(x_in);
  // x NCHW: cuDNN has no backward-filter algorithm for a channels-last x beside the NCHW dy
  // (measured on the H100), so any other layout is copied.
  std::vector<int64_t> nchw = {layout.strides[0]};
  for (int64_t v : contiguous_strides(x_in.type.sizes)) nchw.push_back(v);
  if (layout.strides != nchw) layout = {{0, nchw[1], nchw[2], nchw[3], nchw[4]}, true};
  if (!fits_int(layout, {x_in.type.numel(), dy.type.numel()})) return false;
  LoopKernel k =
      conv_call(n, "conv2d_backward_weight", dw.dtype, x_in.type.sizes, layout, dy.type.sizes, a);
  if (n.declines_library_call(library_call_signature(k))) return false;
  const Access x = layout.copy ? n.contiguous(x_in) : x_in;
  const Access dyc = n.contiguous(dy);
  emit_library_call(n, std::move(k), {x.buffer, dyc.buffer}, n.realize_output(slot).buffer);
  return true;
}

}  // namespace kiln
