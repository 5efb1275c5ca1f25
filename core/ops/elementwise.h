// Helpers for reference implementations of elementwise ops: broadcasting index maps and
// loops that compute in double (floating results) or int64 (integer results).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ops/op_def.h"
#include "core/ops/op_error.h"

namespace kiln {

// Maps a row-major index of `out` to the row-major index of `in` broadcast to `out`.
class Broadcaster {
 public:
  Broadcaster(const Shape& in, const Shape& out);
  int64_t operator()(int64_t out_index) const;

 private:
  Shape out_sizes_;
  Shape in_strides_;  // per out dim; 0 where `in` is broadcast
};

// Integer arithmetic that wraps like two's complement instead of overflowing.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// out[i] = f(a[i]); the double path when `compute` is floating, else the int64 path.
template <class FF, class FI>
HostTensor map_unary(const RefContext& c, int a, DType compute, FF ff, FI fi) {
  HostTensor out = c.output(0);
  const HostTensor x = c.tensor(a);
  const Broadcaster bx(x.sizes(), out.sizes());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (is_floating(compute)) {
      out.set(i, ff(x.get(bx(i))));
    } else {
      out.set_int(i, fi(x.get_int(bx(i))));
    }
  }
  return out;
}

// A value rounded to `dtype`'s precision: PyTorch casts every operand to the common dtype
// before computing, so 0.1 meets an f32 tensor as 0.1f.
double round_to(DType dtype, double v);

template <class FF, class FI>
HostTensor map_binary(const RefContext& c, int a, int b, DType compute, FF ff, FI fi) {
  HostTensor out = c.output(0);
  const HostTensor x = c.tensor(a);
  const HostTensor y = c.tensor(b);
  const Broadcaster bx(x.sizes(), out.sizes());
  const Broadcaster by(y.sizes(), out.sizes());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (is_floating(compute)) {
      out.set(i, ff(round_to(compute, x.get(bx(i))), round_to(compute, y.get(by(i)))));
    } else {
      out.set_int(i, fi(x.get_int(bx(i)), y.get_int(by(i))));
    }
  }
  return out;
}

// Infers the broadcast shape of the listed tensor arguments (None skipped).
Shape broadcast_args(const InferContext& c, std::initializer_list<int> args);

}  // namespace kiln
