// Average and adaptive average pooling compiled as Reduction kernels against the reference:
// every float dtype, odd sizes, stride, padding counted or not, ceil_mode, divisor_override,
// 1-d to 3-d, batched and unbatched, strided inputs, and a fused consumer.
#include <gtest/gtest.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledPool : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledPool, AveragePoolingIsAKernel) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x1 = input(b, "x1", TensorType::contiguous(d, {2, 3, 11}));
  const ValueRef x2 = input(b, "x2", TensorType::contiguous(d, {2, 3, 9, 7}));
  const ValueRef x2t = input(b, "x2t", TensorType{d, {3, 7, 9}, {1, 27, 3}});
  const ValueRef x3 = input(b, "x3", TensorType::contiguous(d, {1, 2, 5, 6, 7}));
  output_of(b, "avg1d", "aten.avg_pool1d.default", {x1, ints{3}, ints{2}, ints{1}, false, true});
  output_of(b, "avg1d_ceil", "aten.avg_pool1d.default",
            {x1, ints{4}, ints{3}, ints{2}, true, false});
  output_of(b, "avg2d", "aten.avg_pool2d.default",
            {x2, ints{3, 2}, ints{2, 1}, ints{1, 1}, false, true, None{}});
  output_of(b, "avg2d_nopad_count", "aten.avg_pool2d.default",
            {x2, ints{3, 3}, ints{2, 2}, ints{1, 1}, true, false, None{}});
  output_of(b, "avg2d_divisor", "aten.avg_pool2d.default",
            {x2t, ints{2, 3}, ints{}, ints{0, 1}, false, true, int64_t{5}});
  output_of(b, "avg3d", "aten.avg_pool3d.default",
            {x3, ints{2, 3, 2}, ints{2, 2, 3}, ints{1, 1, 0}, true, true, None{}});
  output_of(b, "adaptive1d", "aten.adaptive_avg_pool1d.default", {x1, ints{4}});
  output_of(b, "adaptive2d", "aten._adaptive_avg_pool2d.default", {x2, ints{4, 5}});
  output_of(b, "adaptive2d_up", "aten._adaptive_avg_pool2d.default", {x2t, ints{9, 2}});
  output_of(b, "adaptive3d", "aten._adaptive_avg_pool3d.default", {x3, ints{3, 1, 4}});
  output_of(
      b, "pool_then_add", "aten.add.Tensor",
      {b.op("aten._adaptive_avg_pool2d.default", {x2, ints{1, 1}}),
       b.op("aten.avg_pool2d.default", {x2, ints{9, 7}, ints{}, ints{0, 0}, false, true, None{}})});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "average pooling runs as kernels";
}

TEST_P(CompiledPool, MaxPoolingWithIndicesIsAKernel) {
  // Values and flat indices, padding (taps there never win), ceil_mode, 2-d and 3-d, batched
  // and unbatched, a strided input, and few distinct values so ties decide indices.
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x2 = input(b, "x2", TensorType::contiguous(d, {2, 3, 9, 7}));
  const ValueRef ties = input(b, "ties", TensorType::contiguous(d, {3, 8, 8}), Range{0, 3});
  const ValueRef x2t = input(b, "x2t", TensorType{d, {3, 7, 9}, {1, 27, 3}});
  const ValueRef x3 = input(b, "x3", TensorType::contiguous(d, {1, 2, 5, 6, 7}));
  auto both = [&](const std::string& label, ValueRef x, std::vector<ArgValue> args,
                  const std::string& op) {
    std::vector<ArgValue> all{x};
    all.insert(all.end(), args.begin(), args.end());
    const std::vector<ValueRef> outs = b.ops(op, all, {}, label);
    ASSERT_EQ(outs.size(), 2u);
    b.output(outs[0]);
    b.output(outs[1]);
  };
  both("resnet", x2, {ints{3, 3}, ints{2, 2}, ints{1, 1}, ints{1, 1}, false},
       "aten.max_pool2d_with_indices.default");
  both("tied", b.op("aten.floor.default", {ties}),
       {ints{2, 3}, ints{1, 2}, ints{1, 1}, ints{1, 1}, true},
       "aten.max_pool2d_with_indices.default");
  both("strided", x2t, {ints{2, 2}, ints{}, ints{0, 1}, ints{1, 1}, true},
       "aten.max_pool2d_with_indices.default");
  both("pool3d", x3, {ints{2, 3, 2}, ints{2, 2, 3}, ints{1, 1, 0}, ints{1, 1, 1}, false},
       "aten.max_pool3d_with_indices.default");
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "max pooling with dilation 1 runs as kernels";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledPool,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
