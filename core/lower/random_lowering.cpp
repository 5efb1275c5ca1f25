// rand, randn, randperm and native_dropout as kernels drawing from the run's random state:
// every element computes its own Philox words (philox_kernel.h), so the numbers are those of
// the reference (core/ops/random_ops.cpp) on every plugin, whatever the launch shape.
#include <cmath>
#include <numbers>

#include "core/lower/lower_context.h"
#include "core/lower/philox_kernel.h"
#include "core/ops/random_ops.h"
#include "core/ops/random_stream.h"

namespace kiln {
namespace {

uint32_t stream_of(const NodeLowering& n) {
  return random_stream_id(n.node().name);
}

// The row-major position of the kernel's element.
Expr position(const KernelBuilder& kb, const Shape& sizes) {
  return contiguous_index(sizes, kb.pointwise_vars());
}

// The uniform word of element `at` (as in random_uniform: word at mod 4 of block at / 4).
int uniform_word(KernelBuilder& kb, PhiloxKernel& philox, const Expr& at) {
  const auto words = philox.words(kb.index(floordiv(at, Expr::constant(4))));
  return philox.pick(words, kb.index(mod(at, Expr::constant(4))));
}

// `value`'s top `bits` of 32 as a fraction in [0, 1), in `dtype` (exact).
int fraction(KernelBuilder& kb, PhiloxKernel& philox, int word, int bits, DType dtype) {
  const int top = kb.cast(philox.shift_right(word, 32 - bits), dtype);
  return kb.math("mul", dtype, {top, kb.constant(dtype, std::ldexp(1.0, -bits))});
}

bool lower_rand(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  KernelBuilder kb = n.kernel(out.sizes);
  PhiloxKernel philox(kb, n.random_state_buffer(), stream_of(n));
  const int word = uniform_word(kb, philox, position(kb, out.sizes));
  n.store_output(kb, fraction(kb, philox, word, uniform_bits(out.dtype), compute_dtype(out.dtype)));
  return true;
}

bool lower_randn(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  const DType math = compute_dtype(out.dtype);
  KernelBuilder kb = n.kernel(out.sizes);
  PhiloxKernel philox(kb, n.random_state_buffer(), stream_of(n));
  const Expr at = position(kb, out.sizes);
  const auto words = philox.words(kb.index(floordiv(at, Expr::constant(2))));
  const int first = kb.index(mod(at, Expr::constant(2)) * Expr::constant(2));
  const int second = kb.math("add", DType::I64, {first, kb.constant(DType::I64, 1)});
  // u in (0, 1], v in [0, 1), both exact in f32: z = sqrt(-2 ln u) cos(2 pi v).
  const int u = kb.math("add", math,
                        {fraction(kb, philox, philox.pick(words, first), 24, math),
                         kb.constant(math, std::ldexp(1.0, -24))});
  const int v = fraction(kb, philox, philox.pick(words, second), 24, math);
  const int radius = kb.math(
      "sqrt", math, {kb.math("mul", math, {kb.constant(math, -2.0), kb.math("log", math, {u})})});
  const int angle =
      kb.math("cos", math, {kb.math("mul", math, {v, kb.constant(math, 2.0 * std::numbers::pi)})});
  n.store_output(kb, kb.math("mul", math, {radius, angle}));
  return true;
}

// randperm: each index's rank among the random words (ties by index), then each place
// takes the index of that rank: O(n^2), like sort.
bool lower_randperm(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const int64_t count = out.numel();
  if (count == 0) return false;
  const int keys = n.temp_buffer("keys", DType::I64, count);
  {
    KernelBuilder kb = n.kernel({count});
    PhiloxKernel philox(kb, n.random_state_buffer(), stream_of(n));
    kb.store(keys, kb.x(0), uniform_word(kb, philox, kb.x(0)));
    n.emit(std::move(kb).finish());
  }
  const int ranks = n.temp_buffer("ranks", DType::I64, count);
  {
    KernelBuilder kb = n.kernel({count}, {count});
    const int mine = kb.load(keys, DType::I64, kb.x(0));
    const int other = kb.load(keys, DType::I64, kb.r(0));
    const int tie = kb.math("and", DType::Bool,
                            {kb.math("eq", DType::Bool, {other, mine}),
                             kb.math("lt", DType::Bool, {kb.index(kb.r(0)), kb.index(kb.x(0))})});
    const int before = kb.math("or", DType::Bool, {kb.math("lt", DType::Bool, {other, mine}), tie});
    kb.store(ranks, kb.x(0), kb.reduce("sum", DType::I64, kb.cast(before, DType::I64)));
    n.emit(std::move(kb).finish());
  }
  KernelBuilder kb = n.kernel({count}, {count});
  const int rank = kb.load(ranks, DType::I64, kb.r(0));
  const int here = kb.math("eq", DType::Bool, {rank, kb.index(kb.x(0))});
  n.store_output(kb, kb.reduce("argmax", DType::I64, kb.cast(here, DType::I64)));
  return true;
}

bool lower_native_dropout(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  const double p = n.args().get_float(1);
  const bool drop = n.args().is_none(2) || n.args().get_bool(2);
  const DType math = compute_dtype(out.dtype);
  KernelBuilder kb = n.kernel(out.sizes);
  const int x = kb.cast(n.load(kb, n.operand(0), kb.pointwise_vars()), math);
  int keep = kb.constant(DType::Bool, 1);
  int value = x;
  if (drop) {
    PhiloxKernel philox(kb, n.random_state_buffer(), stream_of(n));
    const int word = uniform_word(kb, philox, position(kb, out.sizes));
    keep = kb.math("lt", DType::Bool,
                   {philox.shift_right(word, 8),
                    kb.constant(DType::I64, static_cast<double>(dropout_threshold(p)))});
    const int scaled = p < 1 ? kb.math("mul", math, {x, kb.constant(math, 1.0 / (1.0 - p))})
                             : kb.constant(math, 0);
    value = kb.where(keep, scaled, kb.constant(math, 0));
  }
  if (n.output_read(1)) kb.store(n.realize_output(1).buffer, position(kb, out.sizes), keep);
  n.store_output(kb, value, 0);
  return true;
}

}  // namespace

std::map<std::string, LowerFn> random_lowerings() {
  return {{"aten.rand.default", lower_rand},
          {"aten.randn.default", lower_randn},
          {"aten.randperm.default", lower_randperm},
          {"aten.native_dropout.default", lower_native_dropout}};
}

}  // namespace kiln
