// f16 and bf16 conversions against the compiler's own _Float16 and exact bf16 rounding.
#include "core/support/half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

TEST(Half, EveryF16ValueRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
#if defined(__FLT16_MAX__)
    const auto hardware = static_cast<float>(static_cast<_Float16>(f));
    ASSERT_EQ(hardware, f) << h;
#endif
    ASSERT_EQ(float_to_f16(f), h) << h;
  }
}

#if defined(__FLT16_MAX__)
TEST(Half, FloatToF16MatchesTheCompiler) {
  uint32_t state = 12345;
  for (int i = 0; i < 2000000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = bits_float(state);
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(float_to_f16(f), bits) << f;
  }
}
#endif

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.00390625f)), 1.0f);       // tie -> even
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.01171875f)), 1.015625f);  // tie -> even (up)
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.005f)), 1.0078125f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_TRUE(std::isinf(bf16_to_float(float_to_bf16(3.4e38f))));
}

}  // namespace
}  // namespace kiln
