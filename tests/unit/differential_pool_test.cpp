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
  // Dilation: padding taps read the nearest inside tap of the window, not of the input.
  both("dilated", x2, {ints{3, 2}, ints{1, 2}, ints{2, 1}, ints{2, 3}, true},
       "aten.max_pool2d_with_indices.default");
  both("dilated_ties", b.op("aten.floor.default", {ties}),
       {ints{2, 2}, ints{1, 1}, ints{1, 1}, ints{3, 2}, false},
       "aten.max_pool2d_with_indices.default");
  both("dilated3d", x3, {ints{2, 2, 3}, ints{1, 2, 1}, ints{1, 0, 1}, ints{2, 1, 2}, false},
       "aten.max_pool3d_with_indices.default");
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "max pooling runs as kernels";
}

TEST_P(CompiledPool, PoolingBackwardIsAKernel) {
  // grad_input of average (padding counted or not, ceil_mode, divisor_override), max (indices
  // from the forward, ties, stride below the kernel, dilation) and adaptive pooling (shrinking
  // and growing), batched and unbatched, a strided grad_output.
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef x = input(b, "x", c({2, 3, 9, 7}));
  const ValueRef ties = b.op("aten.floor.default", {input(b, "ties", c({3, 8, 8}), Range{0, 3})});
  const auto grad = [&](const std::string& label, ValueRef dy, ValueRef self,
                        std::vector<ArgValue> rest, const std::string& op) {
    std::vector<ArgValue> args{dy, self};
    args.insert(args.end(), rest.begin(), rest.end());
    b.output(b.ops(op, args, {}, label)[0]);
  };
  const std::string avg = "aten.avg_pool2d_backward.default";
  grad("avg", input(b, "dy_avg", c({2, 3, 5, 8})), x,
       {ints{3, 2}, ints{2, 1}, ints{1, 1}, false, true, None{}}, avg);
  grad("avg_ceil", input(b, "dy_ceil", c({2, 3, 5, 4})), x,
       {ints{3, 3}, ints{2, 2}, ints{1, 1}, true, false, None{}}, avg);
  grad("avg_divisor", input(b, "dy_div", TensorType{d, {3, 4, 4}, {1, 12, 3}}), ties,
       {ints{2, 3}, ints{2, 2}, ints{0, 1}, false, true, int64_t{5}}, avg);
  const auto max_backward = [&](const std::string& label, ValueRef self, std::vector<ArgValue> w) {
    std::vector<ArgValue> fwd{self};
    fwd.insert(fwd.end(), w.begin(), w.end());
    const std::vector<ValueRef> pooled = b.ops("aten.max_pool2d_with_indices.default", fwd);
    const TensorType& t = b.type(pooled[0]);
    std::vector<ArgValue> args{input(b, "dy_" + label, c(t.sizes)), self};
    args.insert(args.end(), w.begin(), w.end());
    args.push_back(pooled[1]);
    b.output(b.ops("aten.max_pool2d_with_indices_backward.default", args, {}, label)[0]);
  };
  max_backward("max", x, {ints{3, 3}, ints{2, 2}, ints{1, 1}, ints{1, 1}, false});
  max_backward("max_ties", ties, {ints{3, 2}, ints{1, 1}, ints{1, 1}, ints{1, 1}, true});
  max_backward("max_dilated", x, {ints{2, 3}, ints{1, 2}, ints{1, 1}, ints{2, 2}, false});
  const std::string adaptive = "aten._adaptive_avg_pool2d_backward.default";
  grad("adaptive", input(b, "dy_ad", c({2, 3, 4, 5})), x, {}, adaptive);
  grad("adaptive_up", input(b, "dy_up", c({3, 11, 9})), ties, {}, adaptive);
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "pooling backward runs as kernels";
}

TEST_P(CompiledPool, MaxPoolingWithAnEmptyWindowRunsOnTheHost) {
  // Dilation 3 over a width of 2 with padding 1: the window's taps sit at -1 and 2, both
  // outside; its maximum is -inf at index -1, which stays with the reference.
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {1, 1, 3, 2}));
  for (ValueRef v : b.ops("aten.max_pool2d_with_indices.default",
                          {x, ints{1, 2}, ints{1, 1}, ints{0, 1}, ints{1, 3}, false}, {}, "empty"))
    b.output(v);
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 1u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledPool,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
