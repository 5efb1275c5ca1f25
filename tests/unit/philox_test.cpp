// Philox4x32-10 against the known-answer vectors of its authors (Random123's kat_vectors),
// and kiln's random stream built on it.
#include "core/support/philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/ops/random_stream.h"

namespace kiln {
namespace {

TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomStream, UniformValuesLieInTheUnitIntervalAndFitTheirDtype) {
  const RandomState state{0x1234567890abcdefULL, 3};
  for (const DType d : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (uint64_t i = 0; i < 4000; ++i) {
      const double u = random_uniform(state, 7, i, d);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      // A whole number of 2^-bits: exact in the dtype, never rounded up to 1.
      const double scaled = std::ldexp(u, uniform_bits(d));
      ASSERT_EQ(scaled, std::floor(scaled)) << dtype_name(d);
    }
  }
}

TEST(RandomStream, SeedCallAndStreamEachChangeTheNumbers) {
  const auto first = [](RandomState s, uint32_t stream) { return random_word(s, stream, 0, 0); };
  const uint32_t base = first({1, 0}, 5);
  EXPECT_NE(base, first({2, 0}, 5));
  EXPECT_NE(base, first({1, 1}, 5));
  EXPECT_NE(base, first({1, 0}, 6));
  EXPECT_EQ(base, first({1, 0}, 5));
  EXPECT_EQ(random_stream_id("dropout_3"), random_stream_id("dropout_3"));
  EXPECT_NE(random_stream_id("dropout_3"), random_stream_id("dropout_4"));
  // Normal values: no repeats among a few thousand, and no infinities (u > 0).
  std::set<double> seen;
  for (uint64_t i = 0; i < 4000; ++i) {
    const double z = random_normal({9, 9}, 1, i);
    ASSERT_TRUE(std::isfinite(z));
    seen.insert(z);
  }
  EXPECT_EQ(seen.size(), 4000u);
}

}  // namespace
}  // namespace kiln
