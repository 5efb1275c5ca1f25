#include "core/lower/philox_kernel.h"

#include "core/support/philox.h"

namespace kiln {

namespace {
constexpr int64_t kWord = 0xFFFFFFFFLL;
}  // namespace

PhiloxKernel::PhiloxKernel(KernelBuilder& kb, int state, uint32_t stream) : kb_(kb) {
  const int seed = kb.load(state, DType::I64, Expr::constant(0));
  key0_ = math("and", seed, constant(kWord));
  // The seed's high word: floor division by 2^32 shifts a negative (>= 2^63) seed
  // arithmetically, and the mask keeps its bits.
  key1_ = math("and", math("floordiv", seed, constant(int64_t{1} << 32)), constant(kWord));
  call_ = math("and", kb.load(state, DType::I64, Expr::constant(1)), constant(kWord));
  stream_ = constant(stream);
}

int PhiloxKernel::constant(int64_t v) {
  return kb_.constant(DType::I64, static_cast<double>(v));
}

int PhiloxKernel::math(const char* op, int a, int b) {
  return kb_.math(op, DType::I64, {a, b});
}

int PhiloxKernel::shift_right(int value, int shift) {
  return math("floordiv", value, constant(int64_t{1} << shift));
}

std::pair<int, int> PhiloxKernel::mulhilo(uint32_t m, int a) {
  // KIR's int64 multiply wraps: the 64 bits of m * a (below 2^64) are exact, whatever the
  // sign they read as. floordiv by 2^32 shifts arithmetically; the mask keeps bits 32..63.
  // Every word masked to 32 bits lets a GPU compiler prove it fits (one widening multiply).
  const int product = math("mul", a, constant(m));
  return {math("and", shift_right(product, 32), constant(kWord)),
          math("and", product, constant(kWord))};
}

std::array<int, 4> PhiloxKernel::words(int block) {
  std::array<int, 4> c = {math("and", block, constant(kWord)),
                          math("and", shift_right(block, 32), constant(kWord)), stream_, call_};
  int k0 = key0_, k1 = key1_;
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      k0 = math("and", math("add", k0, constant(kPhiloxW0)), constant(kWord));
      k1 = math("and", math("add", k1, constant(kPhiloxW1)), constant(kWord));
    }
    const auto [hi0, lo0] = mulhilo(kPhiloxM0, c[0]);
    const auto [hi1, lo1] = mulhilo(kPhiloxM1, c[2]);
    c = {math("xor", math("xor", hi1, c[1]), k0), lo1, math("xor", math("xor", hi0, c[3]), k1),
         lo0};
  }
  return c;
}

int PhiloxKernel::pick(const std::array<int, 4>& w, int which) {
  const auto is = [&](int64_t k) { return kb_.math("eq", DType::Bool, {which, constant(k)}); };
  return kb_.where(is(0), w[0], kb_.where(is(1), w[1], kb_.where(is(2), w[2], w[3])));
}

}  // namespace kiln
