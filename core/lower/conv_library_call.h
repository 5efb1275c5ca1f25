// A 2-d convolution as the plugin's "conv2d" library call (cuDNN on ptx, oneDNN on cpp_openmp),
// where the plugin offers one for the dtype: the input read in place through its offset and strides
// (NCHW, channels-last or a view), the weight contiguous, the output contiguous NCHW; a bias added
// by an elementwise kernel that fuses with what follows (f32 only: a half-precision product
// rounded before its bias keeps the generated kernel, as the 1x1 matmul path does). Where the
// plugin lists the call's `strides` feature, the weight is read in place when packed and the
// output is channels-last when x is (as PyTorch keeps it). Where it lists `implicit_gemm`, x
// and the weight go to it channels-last (copied so where they are not; y keeps x's layout), and
// grouped convolutions of fewer than 8 channels per group keep the generated kernels.
#pragma once

#include <vector>

#include "core/lower/lower_context.h"
#include "core/ops/conv_args.h"

namespace kiln {

// Dim orders of a 4-d tensor's memory, outermost first.
inline const std::vector<size_t> kNchwOrder = {0, 1, 2, 3}, kChannelsLastOrder = {0, 2, 3, 1};

// Strides (offset first, as affine_strides gives them) of a tensor of `sizes` packed with its
// dims in `order`.
std::vector<int64_t> packed_in_order(const Shape& sizes, const std::vector<size_t>& order);

// Output 0 = y + bias (a vector over dim 1, cast to the output dtype after an add in the
// compute dtype), realized packed in `order`; the kernel walks memory order.
void add_channel_bias(NodeLowering& n, const Access& y, const Access& bias,
                      const std::vector<size_t>& order);

// False (nothing emitted) when the call does not apply.
bool emit_conv_library_call(NodeLowering& n, const Access& x, const Access& w, const Access* bias,
                            const ConvArgs& a);

// convolution_backward's grad_input (output `slot`) as "conv2d_backward_input" (dy and the
// weight contiguous, dx written contiguous NCHW), where the plugin offers it: a 2-d
// convolution that is not transposed. False (nothing emitted) otherwise.
bool emit_conv_backward_input_call(NodeLowering& n, const Access& dy, const Access& w,
                                   const ConvArgs& a, size_t slot);
// A transposed 2-d convolution as the same call: it is the input gradient of the regular
// convolution it reverses (x in dy's place, the same weight, stride, padding, dilation and
// groups; output_padding only sizes y), an f32 bias added by a kernel after. False (nothing
// emitted) where the call does not apply or the autotuner declined it.
bool emit_conv_transposed_library_call(NodeLowering& n, const Access& x, const Access& w,
                                       const Access* bias, const ConvArgs& a);
// ... and its grad_weight as "conv2d_backward_weight" (x read in place when packed NCHW,
// else copied so).
bool emit_conv_backward_weight_call(NodeLowering& n, const Access& x, const Access& dy,
                                    const ConvArgs& a, size_t slot);

}  // namespace kiln
