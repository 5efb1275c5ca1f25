// _cdist_forward, _pdist_forward and col2im compiled as Reduction kernels against the
// reference: every float dtype, each kind of p (0, 1, 2, infinity, fractional, above 2),
// batched and strided operands, odd sizes, and col2im with stride, padding and dilation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledDistance : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledDistance, CdistAndPdistAreKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef a = input(b, "a", c({2, 5, 7})), bb = input(b, "b", c({2, 3, 7}));
  const ValueRef at = input(b, "at", TensorType{d, {5, 7}, {1, 5}}), m = input(b, "m", c({4, 7}));
  // Few distinct values so that p = 0 counts real zeros.
  const ValueRef q = b.op("aten.round.default", {input(b, "q", c({6, 3}), Range{-1.4, 1.4})});
  const ValueRef tall = input(b, "tall", c({97, 3}));  // the pair-to-row mapping at length
  output_of(b, "pdist_tall", "aten._pdist_forward.default", {tall, 2.0});
  const double inf = std::numeric_limits<double>::infinity();
  // A NaN difference propagates through every p, infinity's maximum included.
  const ValueRef with_nan =
      b.op("aten.where.self", {b.op("aten.gt.Scalar", {bb, 1.6}), std::nan(""), bb});
  output_of(b, "cdist_nan_inf", "aten._cdist_forward.default", {a, with_nan, inf, None{}});
  int i = 0;
  for (double p : {0.0, 1.0, 2.0, inf, 0.5, 3.0}) {
    const std::string tag = std::to_string(i++);
    output_of(b, "cdist_b" + tag, "aten._cdist_forward.default", {a, bb, p, None{}});
    output_of(b, "cdist_t" + tag, "aten._cdist_forward.default", {at, m, p, None{}});
    output_of(b, "pdist" + tag, "aten._pdist_forward.default", {q, p});
    output_of(b, "pdist_t" + tag, "aten._pdist_forward.default", {at, p});
  }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "distances run as kernels";
}

TEST_P(CompiledDistance, Col2imIsAKernel) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  // 3 channels of 2x3 windows over 7x8 with stride (2, 1), padding (1, 0), dilation (1, 2):
  // (7 + 2 - 1 - 1) / 2 + 1 = 4 by (8 - 4 - 1) / 1 + 1 = 4 positions.
  output_of(b, "fold", "aten.col2im.default",
            {input(b, "cols", c({2, 18, 16})), ints{7, 8}, ints{2, 3}, ints{1, 2}, ints{1, 0},
             ints{2, 1}});
  output_of(
      b, "fold_unbatched", "aten.col2im.default",
      {input(b, "cols1", c({4, 9})), ints{4, 4}, ints{2, 2}, ints{1, 1}, ints{0, 0}, ints{1, 1}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "col2im runs as a kernel";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledDistance,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
