// The comparison every numeric test rests on: an element a kernel never wrote (still the
// run's poison bytes) fails in every dtype, a bool stored as anything but 0/1 fails, and the
// reduction term widens the bound by sqrt(n) * u * sum|terms|, no more.
#include "core/interp/compare.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/interp/random_tensor.h"

namespace kiln {
namespace {

// `t` with element `i`'s bytes set to the run's poison byte (0x7F), as a skipped write leaves it.
HostTensor with_poisoned_element(const HostTensor& t, int64_t i) {
  const HostTensor c = t.contiguous();
  std::vector<std::byte> bytes(c.bytes().begin(), c.bytes().end());
  const size_t size = dtype_size(t.dtype());
  std::memset(bytes.data() + static_cast<size_t>(i) * size, 0x7F, size);
  return HostTensor::from_bytes(t.dtype(), t.sizes(), std::move(bytes)).value();
}

class SkippedWrite : public ::testing::TestWithParam<DType> {};

TEST_P(SkippedWrite, IsAMismatchInEveryDtype) {
  const DType dtype = GetParam();
  // The ranges the differential tests draw from, widest first.
  for (const auto& range : {std::make_pair(-9.0, 9.0), std::make_pair(0.0, 1.0)}) {
    const HostTensor expected = random_tensor(
        TensorType::contiguous(dtype, {7, 13}), 99,
        is_floating(dtype) || dtype == DType::Bool ? std::nullopt : std::optional(range));
    ASSERT_TRUE(compare(expected, expected).ok());
    for (int64_t i : {int64_t{0}, int64_t{45}, int64_t{90}}) {
      const Comparison c = compare(with_poisoned_element(expected, i), expected);
      EXPECT_FALSE(c.ok()) << dtype_name(dtype) << " element " << i;
      EXPECT_EQ(c.first_mismatch, i);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, SkippedWrite,
                         ::testing::Values(DType::Bool, DType::I8, DType::U8, DType::I16,
                                           DType::I32, DType::I64, DType::F16, DType::BF16,
                                           DType::F32, DType::F64),
                         [](const ::testing::TestParamInfo<DType>& param) {
                           return std::string(dtype_name(param.param));
                         });

TEST(Compare, BoolBytesOtherThanZeroAndOneAreRefused) {
  const HostTensor want =
      HostTensor::from_bytes(DType::Bool, {3}, {std::byte{1}, std::byte{0}, std::byte{1}}).value();
  const HostTensor got =
      HostTensor::from_bytes(DType::Bool, {3}, {std::byte{1}, std::byte{0}, std::byte{0xFF}})
          .value();
  const Comparison c = compare(got, want);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.first_mismatch, 2);
}

TEST(Compare, ReductionTermScalesWithMagnitudeAndLength) {
  // A sum of 10000 terms that cancelled to 0.5 while sum|terms| was 5000.
  HostTensor want = HostTensor::zeros(DType::F32, {1});
  want.set(0, 0.5);
  HostTensor magnitude = HostTensor::zeros(DType::F32, {1});
  magnitude.set(0, 5000);
  const ReductionBound bound{&magnitude, 10000};
  const double allowed = 2 * 100 * accumulation_roundoff(DType::F32) * 5000;  // ~6e-2
  const Tolerance tol = tolerance_for(DType::F32);
  HostTensor got = HostTensor::zeros(DType::F32, {1});
  got.set(0, 0.5 + 0.9 * allowed);
  EXPECT_FALSE(compare(got, want, tol).ok()) << "without the reduction term";
  EXPECT_TRUE(compare(got, want, tol, bound).ok()) << "within sqrt(n) * u * sum|terms|";
  got.set(0, 0.5 + 1.5 * allowed);
  EXPECT_FALSE(compare(got, want, tol, bound).ok()) << "beyond it";
  // A dropped term of size ~1 is far beyond the bound of a short sum.
  const ReductionBound short_sum{&magnitude, 4};
  got.set(0, 1.5);
  EXPECT_FALSE(compare(got, want, tol, short_sum).ok());
}

}  // namespace
}  // namespace kiln
