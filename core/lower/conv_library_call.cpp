#include "core/lower/conv_library_call.h"

#include <algorithm>
#include <optional>

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

}  // namespace

bool emit_conv_library_call(NodeLowering& n, const Access& x_in, const Access& w,
                            const Access* bias, const ConvArgs& a) {
  const TensorType& out = n.out_type(0);
  if (a.transposed || a.window.dims != 2 || !n.offers_extern("conv2d", out.dtype)) return false;
  if (bias && compute_dtype(out.dtype) != out.dtype) return false;
  // An input neither NCHW nor NHWC packed is copied first (cuDNN reports NOT_SUPPORTED
  // for other strides, measured on the H100): the call then reads the contiguous copy.
  const Shape& xs = x_in.type.sizes;
  const auto affine = affine_strides(x_in);
  auto sx = affine ? packed_strides(*affine, xs) : std::nullopt;
  const bool copy = !sx;
  if (copy) {
    std::vector<int64_t> contiguous = {0};
    for (int64_t v : contiguous_strides(xs)) contiguous.push_back(v);
    sx = packed_strides(contiguous, xs);
  }
  if (!sx) return false;
  // cuDNN takes int sizes and strides: larger tensors keep the generated kernel.
  constexpr int64_t kIntMax = 2147483647;
  int64_t largest = std::max(x_in.type.numel(), out.numel());
  for (int64_t v : *sx) largest = std::max(largest, v);
  if (largest > kIntMax) return false;
  const Window& win = a.window;
  LoopKernel k;
  k.kind = LoopKernelKind::Extern;
  k.extern_name = "conv2d";
  k.attrs = {{"dtype", static_cast<int64_t>(out.dtype)},
             {"n", xs[0]},
             {"c", xs[1]},
             {"h", xs[2]},
             {"w", xs[3]},
             {"k", out.sizes[1]},
             {"r", win.kernel[0]},
             {"s", win.kernel[1]},
             {"out_h", out.sizes[2]},
             {"out_w", out.sizes[3]},
             {"stride_h", win.stride[0]},
             {"stride_w", win.stride[1]},
             {"pad_h", win.padding[0]},
             {"pad_w", win.padding[1]},
             {"dil_h", win.dilation[0]},
             {"dil_w", win.dilation[1]},
             {"groups", a.groups},
             {"x_offset", copy ? 0 : (*sx)[0]},
             {"x_stride_n", (*sx)[1]},
             {"x_stride_c", (*sx)[2]},
             {"x_stride_h", (*sx)[3]},
             {"x_stride_w", (*sx)[4]}};
  // The autotuner timed this shape's generated kernels faster than the library.
  if (n.declines_library_call(library_call_signature(k))) return false;
  const Access x = copy ? n.contiguous(x_in) : x_in;
  const Access wc = n.contiguous(w);
  const int y =
      bias ? n.temp_buffer("convolution", out.dtype, out.numel()) : n.realize_output(0).buffer;
  k.name = n.kernel({}).finish().name;
  k.origin = n.node().name;
  // Never the node's own step: its buffers may be copies, so no host step could stand in
  // for it (a cache entry is only used with the same library calls on offer).
  k.node = -1;
  k.extern_inputs = {x.buffer, wc.buffer};
  k.extern_outputs = {y};
  n.emit(std::move(k));
  if (!bias) return true;
  KernelBuilder kb = n.kernel(out.sizes);
  const Expr at = contiguous_index(out.sizes, kb.pointwise_vars());
  const int sum = kb.math("add", out.dtype,
                          {kb.load(y, out.dtype, kb.simplify_index(at)),
                           kb.cast(n.load(kb, *bias, {kb.x(1)}), out.dtype)});
  n.store_output(kb, sum);
  return true;
}

}  // namespace kiln
