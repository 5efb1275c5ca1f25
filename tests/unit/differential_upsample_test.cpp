// upsample_nearest2d.vec and upsample_bilinear2d.vec compiled as elementwise kernels against
// the reference: growing and shrinking, exact doubling, output sizes and fractional scale
// factors, align_corners both ways, a strided input, integer inputs (nearest), and a fused
// consumer.
#include <gtest/gtest.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledUpsample : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledUpsample, NearestAndBilinearAreKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {2, 3, 5, 7}));
  const ValueRef xt =
      input(b, "xt", TensorType{d, {2, 3, 5, 7}, permuted_strides({2, 3, 5, 7}, {0, 2, 3, 1})});
  const std::string nearest = "aten.upsample_nearest2d.vec",
                    bilinear = "aten.upsample_bilinear2d.vec";
  output_of(b, "nearest_double", nearest, {x, None{}, FloatList{2.0, 2.0}});
  output_of(b, "nearest_sizes", nearest, {xt, ints{8, 3}, None{}});
  output_of(b, "nearest_fraction", nearest, {x, None{}, FloatList{1.7, 0.6}});
  if (is_floating(d)) {
    output_of(b, "bilinear_sizes", bilinear, {x, ints{9, 13}, false, None{}});
    output_of(b, "bilinear_align", bilinear, {xt, ints{9, 4}, true, None{}});
    output_of(b, "bilinear_scale", bilinear, {x, None{}, false, FloatList{1.5, 0.75}});
    output_of(b, "bilinear_align_scale", bilinear, {x, None{}, true, FloatList{2.5, 1.25}});
    output_of(b, "bilinear_to_one", bilinear, {x, ints{1, 1}, true, None{}});
    output_of(b, "bilinear_then_relu", "aten.relu.default",
              {b.op(bilinear, {x, ints{10, 14}, false, None{}})});
  }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "upsampling runs as kernels";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledUpsample,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16,
                                           DType::U8, DType::I64),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
