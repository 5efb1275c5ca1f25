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
  // a = a_hi * 2^16 + a_lo; m * a = p_hi * 2^16 + p_lo with p_hi, p_lo < 2^48.
  const int a_hi = shift_right(a, 16), a_lo = math("and", a, constant(0xFFFF));
  const int p_hi = math("mul", a_hi, constant(m)), p_lo = math("mul", a_lo, constant(m));
  const int lo = math(
      "and", math("add", p_lo, math("mul", math("and", p_hi, constant(0xFFFF)), constant(0x10000))),
      constant(kWord));
  const int hi = shift_right(math("add", p_hi, shift_right(p_lo, 16)), 16);
  return {hi, lo};
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
