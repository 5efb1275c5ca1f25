// Reductions against hand-worked values: keepdim, negative and repeated dims, dtypes,
// NaN, empty inputs, softmax closed forms.
#include <cmath>

#include "op_test_util.h"

namespace kiln::test {
namespace {

const HostTensor kMatrix = f32({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(Reduction, SumOverDimsWithKeepdim) {
  auto r = run_op("aten.sum.dim_IntList", {kMatrix, IntList{-1}, true});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.out().sizes(), (Shape{2, 1}));
  expect_near(r.out(), {6, 15});
  auto all = run_op("aten.sum.dim_IntList", {kMatrix, None{}});
  EXPECT_EQ(all.out().rank(), 0);
  expect_near(all.out(), {21});
  auto both = run_op("aten.sum.dim_IntList", {kMatrix, IntList{0, 1}});
  expect_near(both.out(), {21});
  auto repeated = run_op("aten.sum.dim_IntList", {kMatrix, IntList{1, -1}});
  EXPECT_NE(repeated.error.find("appears twice"), std::string::npos) << repeated.error;
  auto out_of_range = run_op("aten.sum.dim_IntList", {kMatrix, IntList{2}});
  EXPECT_NE(out_of_range.error.find("dim 2 is out of range for a tensor of rank 2"),
            std::string::npos);
}

TEST(Reduction, SumOfIntegersIsInt64AndDtypeIsHonoured) {
  auto r = run_op("aten.sum.dim_IntList", {tensor(DType::Bool, {3}, {1, 1, 0}), IntList{0}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out().dtype(), DType::I64);
  expect_near(r.out(), {2});
  auto d = run_op("aten.sum.dim_IntList", {tensor(DType::I32, {2}, {1, 2}), IntList{0}},
                  {{"dtype", DType::F64}});
  EXPECT_EQ(d.out().dtype(), DType::F64);
  auto all = run_op("aten.sum.default", {tensor(DType::I8, {2, 2}, {100, 100, 100, 100})});
  EXPECT_EQ(all.out().dtype(), DType::I64);
  expect_near(all.out(), {400});
}

TEST(Reduction, EmptyReductions) {
  auto s = run_op("aten.sum.dim_IntList", {f32({2, 0}, {}), IntList{1}});
  ASSERT_TRUE(s.ok()) << s.error;
  expect_near(s.out(), {0, 0});
  auto p = run_op("aten.prod.dim_int", {f32({2, 0}, {}), 1});
  expect_near(p.out(), {1, 1});
  auto m = run_op("aten.amax.default", {f32({2, 0}, {}), IntList{1}});
  EXPECT_NE(m.error.find("size 0"), std::string::npos) << m.error;
  auto mean = run_op("aten.mean.dim", {f32({0}, {}), IntList{0}});
  ASSERT_TRUE(mean.ok()) << mean.error;
  expect_near(mean.out(), {NAN});
}

TEST(Reduction, MaxMinArgPropagateNaNAndTakeTheFirst) {
  auto mx = run_op("aten.amax.default", {f32({4}, {1, NAN, 3, 2}), IntList{0}});
  expect_near(mx.out(), {NAN});
  auto am = run_op("aten.argmax.default", {f32({2, 3}, {1, 7, 7, 9, 0, 9}), 1});
  ASSERT_TRUE(am.ok()) << am.error;
  EXPECT_EQ(am.out().dtype(), DType::I64);
  expect_near(am.out(), {1, 0});
  auto flat = run_op("aten.argmin.default", {f32({2, 2}, {3, 1, 1, 0})});
  expect_near(flat.out(), {3});
  auto md = run_op("aten.max.dim", {kMatrix, 0, true});
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md.out(0).sizes(), (Shape{1, 3}));
  expect_near(md.out(0), {4, 5, 6});
  expect_near(md.out(1), {1, 1, 1});
  auto imin = run_op("aten.amin.default", {i64({3}, {5, -2, 7})});
  expect_near(imin.out(), {-2});
}

TEST(Reduction, MeanVarAndProd) {
  auto mean = run_op("aten.mean.dim", {kMatrix, IntList{0}});
  expect_near(mean.out(), {2.5, 3.5, 4.5});
  auto int_mean = run_op("aten.mean.dim", {i64({2}, {1, 2}), IntList{0}});
  EXPECT_NE(int_mean.error.find("floating"), std::string::npos);
  // var of [1, 2, 3]: mean 2, squares 1+0+1 = 2; unbiased 2/2 = 1, biased 2/3.
  auto var = run_op("aten.var.correction", {kMatrix, IntList{1}});
  expect_near(var.out(), {1, 1});
  auto biased = run_op("aten.var.correction", {kMatrix, IntList{1}}, {{"correction", int64_t{0}}});
  expect_near(biased.out(), {2.0 / 3, 2.0 / 3});
  auto var_dim = run_op("aten.var.dim", {kMatrix, IntList{1}, false});
  expect_near(var_dim.out(), {2.0 / 3, 2.0 / 3});
  auto prod = run_op("aten.prod.default", {kMatrix});
  expect_near(prod.out(), {720});
  auto any = run_op("aten.any.dim", {f32({2, 2}, {0, 0, 0, 3}), 1});
  expect_near(any.out(), {0, 1});
}

TEST(Reduction, SoftmaxClosedForms) {
  // softmax([0, ln 2]) = [1/3, 2/3]; log_softmax = [-ln 3, ln 2 - ln 3].
  auto s = run_op("aten._softmax.default", {f32({1, 2}, {0, std::log(2.0)}), -1, false});
  ASSERT_TRUE(s.ok()) << s.error;
  expect_near(s.out(), {1.0 / 3, 2.0 / 3});
  auto l = run_op("aten._log_softmax.default", {f32({1, 2}, {0, std::log(2.0)}), 1, false});
  expect_near(l.out(), {-std::log(3.0), std::log(2.0) - std::log(3.0)});
  // Large values stay finite (the max is subtracted first).
  auto big = run_op("aten._softmax.default", {f32({2}, {1000, 1000}), 0, false});
  expect_near(big.out(), {0.5, 0.5});
  auto half = run_op("aten._softmax.default", {tensor(DType::F16, {2}, {0, 0}), 0, true});
  EXPECT_EQ(half.out().dtype(), DType::F32);
  auto lse = run_op("aten.logsumexp.default", {f32({2}, {0, std::log(3.0)}), IntList{0}});
  expect_near(lse.out(), {std::log(4.0)});
}

}  // namespace
}  // namespace kiln::test
