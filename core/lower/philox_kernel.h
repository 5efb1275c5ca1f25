// Philox4x32-10 inside a kernel, for the random lowerings: the same words as
// core/support/philox.cpp, from 32-bit values kept in int64 (each 32x32-bit product is taken
// in 16-bit halves, so nothing overflows), with the key and call number read from the run's
// random state buffer (core/ops/random_stream.h).
#pragma once

#include <array>
#include <cstdint>

#include "core/lower/kernel_builder.h"

namespace kiln {

class PhiloxKernel {
 public:
  // `state`: the random state buffer (i64[2]: seed, call); `stream`: the node's stream.
  PhiloxKernel(KernelBuilder& kb, int state, uint32_t stream);

  // The four words (i64 in [0, 2^32)) of counter block `block` (an int64 value).
  std::array<int, 4> words(int block);
  // Word `which` (an int64 value in 0..3) of `words`.
  int pick(const std::array<int, 4>& words, int which);
  // floor(value / 2^shift) of a non-negative value.
  int shift_right(int value, int shift);

 private:
  int constant(int64_t v);
  int math(const char* op, int a, int b);
  std::pair<int, int> mulhilo(uint32_t m, int a);  // (hi, lo) of m * a

  KernelBuilder& kb_;
  int key0_ = -1, key1_ = -1, call_ = -1, stream_ = -1;
};

}  // namespace kiln
