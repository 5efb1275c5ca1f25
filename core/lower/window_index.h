// Index helpers for kernels that walk a sliding window (pooling, convolution): a tap's
// position is masked when it falls outside the input and clamped into it, which changes no
// tap that is read but lets interval bounds prove every access in bounds.
#pragma once

#include "core/lower/kernel_builder.h"

namespace kiln {

// e clamped into [lo, hi].
Expr clamp_index(const Expr& e, int64_t lo, int64_t hi);
// mask && m, where a negative mask means "no mask yet".
int mask_and(KernelBuilder& kb, int mask, int m);
// lo <= e < hi, as a bool value.
int between(KernelBuilder& kb, const Expr& e, int64_t lo, const Expr& hi);

// The window position whose tap lands on an element, from num = element + pad - tap*dilation:
// num / stride where the division is exact and the result lies in [0, positions). `mask` is
// narrowed to those cases; the position returned is clamped into [0, positions).
Expr landing_position(KernelBuilder& kb, int& mask, const Expr& num, int64_t stride,
                      int64_t positions);

// Taps average pooling counts for a window starting at `start` along a dim of `size`
// elements: those inside the input, or inside input and padding when `count_pad`.
Expr window_taps(const Expr& start, int64_t kernel, int64_t size, int64_t pad, bool count_pad);

}  // namespace kiln
