// Inputs that once crashed or miscomputed: each now gives an error naming the problem, or
// PyTorch's value.
#include <gmock/gmock.h>

#include "core/graph/graph_json.h"
#include "op_test_util.h"

namespace kiln::test {
namespace {

using ::testing::HasSubstr;

TEST(Robustness, SizesBeyondTheLimitsAreErrors) {
  auto view =
      run_op("aten.view.default", {f32({4}, {1, 2, 3, 4}), IntList{4611686018427387905, 4}});
  EXPECT_THAT(view.error, HasSubstr("invalid for a tensor of 4 elements"));
  auto expand = run_op("aten.expand.default", {f32({1}, {1}), IntList{-5}});
  EXPECT_THAT(expand.error, HasSubstr("negative size"));
  auto full = run_op("aten.full.default", {IntList{1000000, 1000000, 1000}, 0.0});
  EXPECT_THAT(full.error, HasSubstr("above kiln's limit"));
  auto strided = run_op(
      "aten.as_strided.default",
      {f32({4}, {1, 2, 3, 4}), IntList{2, 2}, IntList{4611687118001160192, 4611687118001160192}});
  EXPECT_THAT(strided.error, HasSubstr("overflows"));
  auto arange = run_op("aten.arange.start_step", {0.0, 1e30, 1.0});
  EXPECT_THAT(arange.error, HasSubstr("above kiln's limit"));
  auto repeat = run_op("aten.repeat.default", {f32({2}, {1, 2}), IntList{4611686018427387904}});
  EXPECT_THAT(repeat.error, HasSubstr("limit"));
  auto g = parse_graph(
      R"({"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", "shape": [1000000, 1000000, 1000]}],
                           "nodes": [], "outputs": ["%x"]})",
      "g.json", registry());
  ASSERT_FALSE(g);
  EXPECT_THAT(g.error().to_string(), HasSubstr("more than 2^46 elements"));
}

TEST(Robustness, BadIndexingArgumentsAreErrors) {
  auto gather = run_op("aten.gather.default", {f32({}, {1}), 0, i64({}, {0})});
  EXPECT_THAT(gather.error, HasSubstr("0-dim inputs are not supported"));
  auto select = run_op("aten.index_select.default",
                       {f32({3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 5, i64({1}, {0})});
  EXPECT_THAT(select.error, HasSubstr("out of range"));
  auto weight =
      run_op("aten.native_layer_norm_backward.default",
             {f32({1, 3}, {1, 2, 3}), f32({1, 3}, {1, 2, 3}), IntList{3}, f32({1, 1}, {2}),
              f32({1, 1}, {1}), f32({0}, {}), None{}, IntList{1, 1, 1}});
  EXPECT_THAT(weight.error, HasSubstr("weight and bias must have shape [3]"));
  auto conv = run_op("aten.convolution.default",
                     {tensor(DType::F32, {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                      tensor(DType::F32, {1, 1, 1, 1, 1}, {1}), None{}, IntList{1, 1}, IntList{0},
                      IntList{1}, false, IntList{0}, 1});
  EXPECT_THAT(conv.error, HasSubstr("need 3 values each"));
  auto empty_pool = run_op(
      "aten.max_pool2d_with_indices.default",
      {HostTensor::zeros(DType::F32, {1, 1, 0, 4}), IntList{2, 2}, IntList{}, IntList{1, 1}});
  EXPECT_THAT(empty_pool.error, HasSubstr("every dim but the batch must be non-empty"));
  auto huge_step = run_op("aten.slice_scatter.default", {f32({4}, {1, 2, 3, 4}), f32({1}, {9}), 0,
                                                         0, 4, int64_t{9223372036854775807}});
  ASSERT_TRUE(huge_step.ok()) << huge_step.error;
  expect_near(huge_step.out(), {9, 2, 3, 4});
  const auto conv2d = [&](Shape x, Shape w, IntList padding, bool transposed, IntList out_pad,
                          int64_t groups) {
    return run_op("aten.convolution.default",
                  {HostTensor::zeros(DType::F32, x), HostTensor::zeros(DType::F32, w), None{},
                   IntList{1}, padding, IntList{1}, transposed, out_pad, groups})
        .error;
  };
  EXPECT_THAT(conv2d({1, 4, 3, 3}, {2, 3, 1, 1}, {0}, false, {0}, 1),
              HasSubstr("input channels 4, weight [2, 3, 1, 1] and groups 1 do not match"));
  EXPECT_THAT(conv2d({1, 4, 3, 3}, {3, 2, 1, 1}, {0}, false, {0}, 2), HasSubstr("do not match"));
  EXPECT_THAT(conv2d({1, 4, 3, 3}, {4, 1, 1, 1}, {0}, false, {0}, 0),
              HasSubstr("groups must be positive"));
  EXPECT_THAT(conv2d({1, 2, 3, 3}, {2, 2, 1, 1}, {-1}, false, {0}, 1),
              HasSubstr("padding non-negative"));
  EXPECT_THAT(conv2d({1, 2, 3, 3}, {2, 2, 1, 1}, {0}, true, {1}, 1),
              HasSubstr("output_padding must be non-negative and smaller than stride or dilation"));
  EXPECT_THAT(conv2d({1, 2, 3, 3}, {2, 2, 1, 1}, {0}, false, {1}, 1),
              HasSubstr("output_padding applies to transposed convolution only"));
  auto backward =
      run_op("aten.convolution_backward.default",
             {f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 2}, {1, 1}), None{},
              IntList{1}, IntList{0}, IntList{1}, false, IntList{0}, 1, IntList{1, 1, 1}});
  EXPECT_THAT(backward.error,
              HasSubstr("grad_output [1, 1, 3] does not match the convolution's output [1, 1, 2]"));
  auto pool =
      run_op("aten.avg_pool1d.default", {f32({1, 1, 3}, {1, 2, 3}), IntList{4}, IntList{2}});
  EXPECT_THAT(pool.error, HasSubstr("too small"));
  auto divisor =
      run_op("aten.avg_pool2d.default", {f32({1, 2, 2}, {1, 2, 3, 4}), IntList{2, 2}, IntList{},
                                         IntList{0, 0}, false, true, int64_t{0}});
  EXPECT_THAT(divisor.error, HasSubstr("divisor_override must not be 0"));
  auto mask = run_op("aten.scaled_dot_product_attention.default",
                     {f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2}),
                      tensor(DType::F64, {1, 1}, {0})});
  EXPECT_THAT(mask.error, HasSubstr("attn_mask must be bool or have the query's dtype"));
  auto number_self = run_op("aten.silu.default", {1.0});
  EXPECT_THAT(number_self.error, HasSubstr("expects a tensor, got a number"));
}

TEST(Robustness, OperandsRoundToTheCommonDtypeFirst) {
  // PyTorch compares f32(0.1) with 0.1 cast to f32: equal.
  auto eq = run_op("aten.eq.Scalar", {f32({1}, {0.1}), 0.1});
  expect_near(eq.out(), {1});
  // f32(0.3) - 3 * f32(0.1) = 7.450580596923828e-09 exactly, in f32 arithmetic.
  auto fmod = run_op("aten.fmod.Scalar", {f32({1}, {0.3}), 0.1});
  expect_near(fmod.out(), {7.450580596923828e-09}, 1e-12);
  auto floor = run_op("aten.floor_divide.default",
                      {tensor(DType::F64, {1}, {1.0}), tensor(DType::F64, {1}, {0.1})});
  expect_near(floor.out(), {9});
}

TEST(Robustness, BiasesBroadcastLikePyTorch) {
  auto addmm = run_op("aten.addmm.default",
                      {f32({2, 1}, {10, 20}), f32({2, 1}, {1, 2}), f32({1, 2}, {3, 4})});
  ASSERT_TRUE(addmm.ok()) << addmm.error;
  expect_near(addmm.out(), {13, 14, 26, 28});
  auto linear = run_op("aten.linear.default",
                       {f32({2, 1}, {1, 2}), f32({2, 1}, {1, 1}), f32({2, 2}, {0, 1, 2, 3})});
  ASSERT_TRUE(linear.ok()) << linear.error;
  expect_near(linear.out(), {1, 2, 4, 5});
}

TEST(Robustness, IntegerScattersAreExact) {
  auto r = run_op("aten.scatter_add.default",
                  {tensor(DType::I64, {1}, {0}), 0, i64({1}, {0}), i64({1}, {0})});
  ASSERT_TRUE(r.ok());
  // 2^53 + 1 is not a double; the int path keeps it.
  HostTensor big = HostTensor::zeros(DType::I64, {1});
  big.set_int(0, (int64_t{1} << 53) + 1);
  auto exact =
      run_op("aten.scatter_add.default", {tensor(DType::I64, {1}, {0}), 0, i64({1}, {0}), big});
  ASSERT_TRUE(exact.ok()) << exact.error;
  EXPECT_EQ(exact.out().get_int(0), (int64_t{1} << 53) + 1);
}

}  // namespace
}  // namespace kiln::test
