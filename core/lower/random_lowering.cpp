// rand, randn, randperm and native_dropout as kernels drawing from the run's random state:
// each kernel element computes one Philox block (philox_kernel.h) and the output elements
// that take their words from it, four for rand and dropout, two for randn (a block costs
// ~200 integer ops, so each is computed once), so the numbers are those of the reference
// (core/ops/random_ops.cpp) on every plugin, whatever the launch shape.
#include <array>
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

// A kernel over the Philox blocks of `count` elements, `per_block` elements to a block.
struct BlockKernel {
  KernelBuilder kb;
  int64_t count, per_block;
  // Row-major element `j` of the kernel's block, and whether it exists (-1: always).
  Expr element(int64_t j) const { return kb.x(0) * Expr::constant(per_block) + Expr::constant(j); }
  int exists(int64_t j) {
    if (count % per_block == 0) return -1;
    return kb.math("lt", DType::Bool,
                   {kb.index(element(j)), kb.constant(DType::I64, static_cast<double>(count))});
  }
};

BlockKernel block_kernel(NodeLowering& n, int64_t count, int64_t per_block) {
  return {n.kernel({(count + per_block - 1) / per_block}), count, per_block};
}

// The uniform word of element `at` (as in random_uniform: word at mod 4 of block at / 4).
int uniform_word(KernelBuilder& kb, PhiloxKernel& philox, const Expr& at) {
  const auto words = philox.words(kb.index(floordiv(at, Expr::constant(4))));
  return philox.pick(words, kb.index(mod(at, Expr::constant(4))));
}

// The four uniform words of the kernel's block (elements 4b .. 4b + 3).
std::array<int, 4> block_words(BlockKernel& k, PhiloxKernel& philox) {
  return philox.words(k.kb.index(k.kb.x(0)));
}

// `value`'s top `bits` of 32 as a fraction in [0, 1), in `dtype` (exact).
int fraction(KernelBuilder& kb, PhiloxKernel& philox, int word, int bits, DType dtype) {
  const int top = kb.cast(philox.shift_right(word, 32 - bits), dtype);
  return kb.math("mul", dtype, {top, kb.constant(dtype, std::ldexp(1.0, -bits))});
}

bool lower_rand(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  BlockKernel k = block_kernel(n, out.numel(), 4);
  PhiloxKernel philox(k.kb, n.random_state_buffer(), stream_of(n));
  const auto words = block_words(k, philox);
  const int buffer = n.realize_output(0).buffer;
  for (int64_t j = 0; j < 4; ++j) {
    const int value =
        fraction(k.kb, philox, words[j], uniform_bits(out.dtype), compute_dtype(out.dtype));
    k.kb.store(buffer, k.element(j), k.kb.cast(value, out.dtype), k.exists(j));
  }
  n.emit(std::move(k.kb).finish());
  return true;
}

bool lower_randn(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  const DType math = compute_dtype(out.dtype);
  // Element 2b takes words 0 and 1 of block b, element 2b + 1 words 2 and 3.
  BlockKernel k = block_kernel(n, out.numel(), 2);
  KernelBuilder& kb = k.kb;
  PhiloxKernel philox(kb, n.random_state_buffer(), stream_of(n));
  const auto words = philox.words(kb.index(kb.x(0)));
  const int buffer = n.realize_output(0).buffer;
  for (int64_t j = 0; j < 2; ++j) {
    // u in (0, 1], v in [0, 1), both exact in f32: z = sqrt(-2 ln u) cos(2 pi v).
    const int u = kb.math(
        "add", math,
        {fraction(kb, philox, words[2 * j], 24, math), kb.constant(math, std::ldexp(1.0, -24))});
    const int v = fraction(kb, philox, words[2 * j + 1], 24, math);
    const int radius = kb.math(
        "sqrt", math, {kb.math("mul", math, {kb.constant(math, -2.0), kb.math("log", math, {u})})});
    const int angle = kb.math(
        "cos", math, {kb.math("mul", math, {v, kb.constant(math, 2.0 * std::numbers::pi)})});
    kb.store(buffer, k.element(j), kb.cast(kb.math("mul", math, {radius, angle}), out.dtype),
             k.exists(j));
  }
  n.emit(std::move(kb).finish());
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
  const bool mask_read = n.output_read(1);
  if (!drop) {  // training off: the input, and a mask of ones
    KernelBuilder kb = n.kernel(out.sizes);
    const int x = kb.cast(n.load(kb, n.operand(0), kb.pointwise_vars()), math);
    if (mask_read)
      kb.store(n.realize_output(1).buffer, contiguous_index(out.sizes, kb.pointwise_vars()),
               kb.constant(DType::Bool, 1));
    n.store_output(kb, x, 0);
    return true;
  }
  BlockKernel k = block_kernel(n, out.numel(), 4);
  KernelBuilder& kb = k.kb;
  PhiloxKernel philox(kb, n.random_state_buffer(), stream_of(n));
  const auto words = block_words(k, philox);
  const int values = n.realize_output(0).buffer;
  const int mask = mask_read ? n.realize_output(1).buffer : -1;
  for (int64_t j = 0; j < 4; ++j) {
    const int exists = k.exists(j);
    const int x =
        kb.cast(n.load(kb, n.operand(0), unravel_index(k.element(j), out.sizes), exists), math);
    const int keep = kb.math("lt", DType::Bool,
                             {philox.shift_right(words[j], 8),
                              kb.constant(DType::I64, static_cast<double>(dropout_threshold(p)))});
    const int scaled = p < 1 ? kb.math("mul", math, {x, kb.constant(math, 1.0 / (1.0 - p))})
                             : kb.constant(math, 0);
    kb.store(values, k.element(j), kb.cast(kb.where(keep, scaled, kb.constant(math, 0)), out.dtype),
             exists);
    if (mask >= 0) kb.store(mask, k.element(j), keep, exists);
  }
  n.emit(std::move(kb).finish());
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
