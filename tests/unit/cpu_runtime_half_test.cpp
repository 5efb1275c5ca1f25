// The f16 and bf16 conversions of the cpp_openmp kernels' runtime header (integer code, so
// the rounding does not depend on the CPU's FP16 support) against rounding worked out in
// double arithmetic: every f16 and bf16 value, the midpoints between neighbours and one ulp
// either side of them, the overflow edge, and a million random floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "plugins/cpp_openmp/runtime/kiln_cpu_runtime.h"

namespace kiln {
namespace {

// Round to nearest even with `mantissa_bits` fraction bits and a minimum normal exponent,
// overflowing to infinity at `max_finite` plus half an ulp (double holds every step exactly).
float round_to_format(float f, int mantissa_bits, int min_exponent, double max_finite) {
  if (std::isnan(f) || std::isinf(f) || f == 0) return f;
  const double a = std::fabs(static_cast<double>(f));
  const int e = std::max(static_cast<int>(std::floor(std::log2(a))), min_exponent);
  const double quantum = std::ldexp(1.0, e - mantissa_bits);
  const double rounded = std::nearbyint(a / quantum) * quantum;  // ties to even
  const double half_ulp =
      std::ldexp(1.0, static_cast<int>(std::floor(std::log2(max_finite))) - mantissa_bits - 1);
  const double result =
      a >= max_finite + half_ulp ? std::numeric_limits<double>::infinity() : rounded;
  return static_cast<float>(std::copysign(result, static_cast<double>(f)));
}

float f16_expected(float f) {
  return round_to_format(f, 10, -14, 65504.0);
}
float bf16_expected(float f) {
  return round_to_format(f, 7, -126, std::ldexp(255.0, 120));  // bf16 max: 0x7f7f
}

float next_up(float f) {
  return std::nextafter(f, std::numeric_limits<float>::infinity());
}
float next_down(float f) {
  return std::nextafter(f, -std::numeric_limits<float>::infinity());
}

// `f` through a runtime conversion and back, against the rounding worked out in double.
template <class To, class From, class Expected>
void expect_rounds(float f, To to, From from, Expected expected) {
  const float got = from(to(f));
  if (std::isnan(f)) {
    ASSERT_TRUE(std::isnan(got)) << f;
    return;
  }
  const float want = expected(f);
  ASSERT_TRUE(got == want && std::signbit(got) == std::signbit(want))
      << std::hexfloat << f << " -> " << got << ", expected " << want;
}

void expect_f16(float f) {
  expect_rounds(f, krt::float_to_f16, krt::f16_to_float, f16_expected);
}
void expect_bf16(float f) {
  expect_rounds(f, krt::float_to_bf16, krt::bf16_to_float, bf16_expected);
}

TEST(CpuRuntimeHalf, EveryF16ValueAndEveryMidpointRoundsToNearestEven) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = krt::f16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      ASSERT_TRUE(((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff) != 0) << h;
      ASSERT_TRUE(std::isnan(krt::f16_to_float(krt::float_to_f16(f)))) << h;
      continue;
    }
    ASSERT_EQ(krt::float_to_f16(f), h) << "f16 bits " << h << " do not round-trip";
    if (std::isinf(f) || (h & 0x7fff) == 0x7bff) continue;  // no neighbour above
    const float above = krt::f16_to_float(static_cast<uint16_t>(h + 1));
    const float middle = static_cast<float>((static_cast<double>(f) + above) / 2);
    for (float x : {middle, next_up(middle), next_down(middle), next_up(f), next_down(above)})
      ASSERT_NO_FATAL_FAILURE(expect_f16(x));
  }
  // The overflow edge: 65504 + half an ulp (65520) rounds to infinity, just below stays.
  for (float x : {65519.998f, 65520.0f, next_down(65520.0f), -65520.0f, 1e30f, -1e-30f,
                  std::numeric_limits<float>::denorm_min(), 2.9802322e-08f, 2.9802326e-08f})
    ASSERT_NO_FATAL_FAILURE(expect_f16(x));
}

TEST(CpuRuntimeHalf, EveryBf16ValueAndEveryMidpointRoundsToNearestEven) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = krt::bf16_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(krt::bf16_to_float(krt::float_to_bf16(f)))) << b;
      continue;
    }
    ASSERT_EQ(krt::float_to_bf16(f), b) << "bf16 bits " << b << " do not round-trip";
    if (std::isinf(f) || (b & 0x7fff) == 0x7f7f) continue;
    const float above = krt::bf16_to_float(static_cast<uint16_t>(b + 1));
    const float middle = static_cast<float>((static_cast<double>(f) + above) / 2);
    for (float x : {middle, next_up(middle), next_down(middle)})
      ASSERT_NO_FATAL_FAILURE(expect_bf16(x));
  }
}

TEST(CpuRuntimeHalf, RandomFloatsRoundAsInDouble) {
  uint32_t state = 20261125;
  for (int i = 0; i < 1000000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = krt::bits_float(state);
    ASSERT_NO_FATAL_FAILURE(expect_f16(f));
    ASSERT_NO_FATAL_FAILURE(expect_bf16(f));
  }
}

}  // namespace
}  // namespace kiln
