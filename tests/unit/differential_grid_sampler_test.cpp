// grid_sampler_2d compiled as an elementwise kernel against the reference: bilinear and
// nearest, zeros, border and reflection padding, align_corners both ways, grid points
// beyond [-1, 1], a strided input, every float dtype.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledGridSampler : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledGridSampler, EveryModeIsAKernel) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {2, 3, 5, 7}));
  const ValueRef xt =
      input(b, "xt", TensorType{d, {2, 3, 5, 7}, permuted_strides({2, 3, 5, 7}, {0, 2, 3, 1})});
  // Some grid points NaN: clipped to 0 with border and reflection padding, as fmin/fmax do.
  const ValueRef raw = input(b, "grid", TensorType::contiguous(d, {2, 4, 6, 2}), Range{-1.3, 1.3});
  const ValueRef grid =
      b.op("aten.where.self", {b.op("aten.gt.Scalar", {raw, 1.25}), std::nan(""), raw});
  for (int64_t mode : {0, 1})
    for (int64_t padding : {0, 1, 2})
      for (bool align : {false, true}) {
        const std::string label =
            "m" + std::to_string(mode) + "_p" + std::to_string(padding) + (align ? "_align" : "");
        output_of(b, label, "aten.grid_sampler_2d.default",
                  {padding == 1 ? xt : x, grid, mode, padding, align});
      }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "grid_sampler_2d runs as a kernel";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledGridSampler,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
