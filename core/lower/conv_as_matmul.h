// A convolution as an explicit matrix product, for plugins with a matmul library (cuBLAS,
// OpenBLAS): a pointwise kernel copies each output position's input patch into a column
// buffer (zeros for taps in the padding) and one mm/bmm call multiplies it by the weight. A
// gather-form reduction sums each output element on its own, tens of times slower than the
// library's tiled product on ResNet's shapes. A half-precision bias rides in the product: a
// column of ones beside the patches and the bias beside the weight, so it is added in the
// library's f32 accumulator (an add after the product, stored in half precision, would round
// twice). An f32 or f64 bias is added after the product by an elementwise kernel, which fuses
// with what follows (and stays f32 where the product multiplies on TF32).
//   x channels-first: col [N, J, P] (J = C*taps (+1 with a bias), P output positions),
//                     y[n] [O, P] = W [O, J] @ col[n] (bmm, W's batch stride 0): y packed NCHW.
//   x channels-last (2-d): col [N*P, J] (taps outer, channels inner),
//                     y [N*P, O] = col @ Wᵀ [J, O] (mm): y channels-last, as PyTorch keeps it.
#pragma once

#include <cstdint>

#include "core/lower/lower_context.h"
#include "core/ops/conv_args.h"

namespace kiln {

// The largest column buffer, in bytes: larger convolutions keep the gather form.
inline constexpr int64_t kMaxColumnBytes = int64_t{512} << 20;

// False (nothing emitted) where it does not apply: transposed or grouped convolutions, a dtype
// the plugin's matmul library does not take, a column buffer over kMaxColumnBytes.
bool conv_as_matmul(NodeLowering& n, const Access& x, const Access& w, const Access* bias,
                    const ConvArgs& a);

// The wide side of that relation into output 0: a transposed convolution of y, or a
// convolution's input gradient from dy, x[n, c, q] = sum_{o, t} y[n, o, (q + pad - t*d) / s]
// w[o, c, t] (taps where the division is exact), as columns of y's landing elements and one
// bmm by the weight [C, O*taps] (copied so). Channels first, one group; false (nothing
// emitted) otherwise, as above.
bool wide_side_as_matmul(NodeLowering& n, const Access& y, const Access& w, const Access* bias,
                         const Window& win, int64_t groups);

}  // namespace kiln
