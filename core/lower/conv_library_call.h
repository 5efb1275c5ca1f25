// A 2-d convolution as the plugin's "conv2d" library call (cuDNN on ptx), where the plugin
// offers one for the dtype: the input read in place through its offset and strides (NCHW,
// channels-last or a view), the weight contiguous, the output contiguous NCHW; a bias added
// by an elementwise kernel that fuses with what follows (f32 only: a half-precision product
// rounded before its bias keeps the generated kernel, as the 1x1 matmul path does).
#pragma once

#include "core/lower/lower_context.h"
#include "core/ops/conv_args.h"

namespace kiln {

// False (nothing emitted) when the call does not apply.
bool emit_conv_library_call(NodeLowering& n, const Access& x, const Access& w, const Access* bias,
                            const ConvArgs& a);

}  // namespace kiln
