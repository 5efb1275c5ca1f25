// Elementwise ops against hand-worked values: broadcasting, PyTorch's type promotion,
// integer semantics, NaN handling, strided inputs.
#include <cmath>

#include "op_test_util.h"

namespace kiln::test {
namespace {

TEST(Pointwise, AddBroadcastsAndScalesByAlpha) {
  auto r =
      run_op("aten.add.Tensor", {f32({2, 1}, {1, 2}), f32({3}, {10, 20, 30})}, {{"alpha", 2.0}});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.out().sizes(), (Shape{2, 3}));
  expect_near(r.out(), {21, 41, 61, 22, 42, 62});
}

TEST(Pointwise, BroadcastMismatchIsAnError) {
  auto r = run_op("aten.mul.Tensor", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})});
  EXPECT_NE(r.error.find("shapes [2] and [3] do not broadcast"), std::string::npos) << r.error;
}

struct PromotionCase {
  HostTensor a;
  OpArg b;
  DType expected;
};

TEST(Pointwise, TypePromotionFollowsPyTorch) {
  const PromotionCase cases[] = {
      {tensor(DType::I32, {2}, {1, 2}), 2.5, DType::F32},  // int tensor + float number
      {tensor(DType::I32, {2}, {1, 2}), int64_t{3},
       DType::I32},  // int number keeps the tensor's int
      {tensor(DType::I32, {2}, {1, 2}), tensor(DType::F64, {}, {1.5}),
       DType::F64},  // 0-dim tensor of a higher category
      {tensor(DType::F16, {2}, {1, 2}), tensor(DType::F32, {}, {1}),
       DType::F16},  // 0-dim of the same category: no say
      {tensor(DType::F16, {2}, {1, 2}), tensor(DType::F32, {2}, {1, 1}), DType::F32},
      {tensor(DType::U8, {2}, {1, 2}), tensor(DType::I8, {2}, {1, 1}), DType::I16},
      {tensor(DType::Bool, {2}, {1, 0}), tensor(DType::Bool, {2}, {1, 1}), DType::Bool},
      {tensor(DType::Bool, {2}, {1, 0}), int64_t{2}, DType::I64},
      {tensor(DType::F16, {2}, {1, 2}), tensor(DType::BF16, {2}, {1, 2}), DType::F32},
      {tensor(DType::I64, {2}, {1, 2}), true, DType::I64},
  };
  for (const auto& c : cases) {
    auto r = run_op("aten.add.Tensor", {c.a, c.b});
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.out().dtype(), c.expected)
        << dtype_name(c.a.dtype()) << " -> " << dtype_name(r.out().dtype());
  }
}

TEST(Pointwise, IntegerTensorPlusFloatNumberComputesInFloat) {
  auto r = run_op("aten.add.Tensor", {tensor(DType::I32, {3}, {1, 2, 3}), 0.5});
  ASSERT_TRUE(r.ok()) << r.error;
  expect_near(r.out(), {1.5, 2.5, 3.5});
}

TEST(Pointwise, DivisionModes) {
  const HostTensor a = tensor(DType::I64, {4}, {7, -7, 7, -7});
  const HostTensor b = tensor(DType::I64, {4}, {2, 2, -2, -2});
  auto true_div = run_op("aten.div.Tensor", {a, b});
  ASSERT_TRUE(true_div.ok());
  EXPECT_EQ(true_div.out().dtype(), DType::F32);
  expect_near(true_div.out(), {3.5, -3.5, -3.5, 3.5});
  auto floor = run_op("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", std::string("floor")}});
  ASSERT_TRUE(floor.ok()) << floor.error;
  EXPECT_EQ(floor.out().dtype(), DType::I64);
  expect_near(floor.out(), {3, -4, -4, 3});
  auto trunc = run_op("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", std::string("trunc")}});
  ASSERT_TRUE(trunc.ok());
  expect_near(trunc.out(), {3, -3, -3, 3});
  auto rem = run_op("aten.remainder.Tensor", {a, b});
  ASSERT_TRUE(rem.ok());
  expect_near(rem.out(), {1, 1, -1, -1});
  auto fmod = run_op("aten.fmod.Tensor", {a, b});
  ASSERT_TRUE(fmod.ok());
  expect_near(fmod.out(), {1, -1, 1, -1});
  auto frem = run_op("aten.remainder.Scalar", {f32({2}, {-7.5, 7.5}), 2.0});
  ASSERT_TRUE(frem.ok());
  expect_near(frem.out(), {0.5, 1.5});
}

TEST(Pointwise, IntegerDivisionByZeroIsAnErrorNotACrash) {
  auto r = run_op("aten.div.Tensor_mode", {i64({2}, {1, 2}), i64({2}, {1, 0})},
                  {{"rounding_mode", std::string("trunc")}});
  EXPECT_NE(r.error.find("integer division by zero"), std::string::npos) << r.error;
  auto m = run_op("aten.remainder.Tensor", {i64({1}, {5}), i64({1}, {0})});
  EXPECT_NE(m.error.find("modulo by zero"), std::string::npos) << m.error;
}

TEST(Pointwise, IntegerOverflowWraps) {
  auto r = run_op("aten.add.Tensor",
                  {tensor(DType::I8, {2}, {127, -128}), tensor(DType::I8, {2}, {1, -1})});
  ASSERT_TRUE(r.ok());
  expect_near(r.out(), {-128, 127});
  auto n = run_op("aten.neg.default", {tensor(DType::I64, {1}, {0})});
  ASSERT_TRUE(n.ok());
}

TEST(Pointwise, Pow) {
  auto r = run_op("aten.pow.Tensor_Scalar", {i64({3}, {2, 3, -2}), int64_t{3}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out().dtype(), DType::I64);
  expect_near(r.out(), {8, 27, -8});
  auto neg = run_op("aten.pow.Tensor_Scalar", {i64({1}, {2}), int64_t{-1}});
  EXPECT_NE(neg.error.find("negative integer powers"), std::string::npos);
  auto f = run_op("aten.pow.Scalar", {2.0, f32({2}, {3, 0.5})});
  ASSERT_TRUE(f.ok()) << f.error;
  expect_near(f.out(), {8, std::sqrt(2.0)});
}

TEST(Pointwise, UnaryFloatOpsPromoteIntegers) {
  auto r = run_op("aten.sqrt.default", {i64({3}, {0, 4, 9})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out().dtype(), DType::F32);
  expect_near(r.out(), {0, 2, 3});
  auto s = run_op("aten.sigmoid.default", {f32({3}, {0, 1000, -1000})});
  expect_near(s.out(), {0.5, 1, 0});
  auto e = run_op("aten.exp.default", {f32({2}, {0, 1})});
  expect_near(e.out(), {1, M_E});
  auto l = run_op("aten.log1p.default", {f32({2}, {0, M_E - 1})});
  expect_near(l.out(), {0, 1});
}

TEST(Pointwise, RoundingAndSigns) {
  auto r = run_op("aten.round.default", {f32({4}, {0.5, 1.5, 2.5, -0.5})});
  expect_near(r.out(), {0, 2, 2, -0.0});  // half to even
  auto s = run_op("aten.sign.default", {f32({4}, {-3, 0, 2, NAN})});
  expect_near(s.out(), {-1, 0, 1, 0});
  auto t = run_op("aten.trunc.default", {f32({2}, {-1.7, 1.7})});
  expect_near(t.out(), {-1, 1});
  auto relu = run_op("aten.relu.default", {f32({3}, {-1, 0, 2})});
  expect_near(relu.out(), {0, 0, 2});
  auto bad = run_op("aten.relu.default", {tensor(DType::Bool, {1}, {1})});
  EXPECT_NE(bad.error.find("not defined for bool"), std::string::npos);
}

TEST(Pointwise, ComparisonsAndLogic) {
  auto lt = run_op("aten.lt.Scalar", {i64({3}, {1, 2, 3}), 2.5});
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(lt.out().dtype(), DType::Bool);
  expect_near(lt.out(), {1, 1, 0});
  auto eq = run_op("aten.eq.Tensor", {f32({3}, {1, NAN, 3}), f32({3}, {1, NAN, 4})});
  expect_near(eq.out(), {1, 0, 0});
  auto land = run_op("aten.logical_and.default",
                     {f32({3}, {0, 2, -1}), tensor(DType::I32, {3}, {5, 0, 1})});
  expect_near(land.out(), {0, 0, 1});
  auto band = run_op("aten.bitwise_and.Tensor", {i64({2}, {6, 5}), i64({2}, {3, 4})});
  expect_near(band.out(), {2, 4});
  auto bnot = run_op("aten.bitwise_not.default", {tensor(DType::Bool, {2}, {1, 0})});
  expect_near(bnot.out(), {0, 1});
  auto fbit = run_op("aten.bitwise_or.Tensor", {f32({1}, {1}), f32({1}, {2})});
  EXPECT_NE(fbit.error.find("integer and bool"), std::string::npos);
  auto nan = run_op("aten.isnan.default", {f32({3}, {NAN, INFINITY, 1})});
  expect_near(nan.out(), {1, 0, 0});
}

TEST(Pointwise, WhereClampAndMaximum) {
  auto w =
      run_op("aten.where.self", {tensor(DType::Bool, {2, 1}, {1, 0}), f32({3}, {1, 2, 3}), 0.0});
  ASSERT_TRUE(w.ok()) << w.error;
  expect_near(w.out(), {1, 2, 3, 0, 0, 0});
  auto c = run_op("aten.clamp.default", {f32({4}, {-2, 0.5, 3, NAN}), 0.0, 1.0});
  expect_near(c.out(), {0, 0.5, 1, NAN});
  auto none = run_op("aten.clamp.default", {f32({1}, {1}), None{}, None{}});
  EXPECT_NE(none.error.find("at least one of min and max"), std::string::npos);
  auto mx = run_op("aten.maximum.default", {f32({2}, {1, NAN}), f32({2}, {2, 0})});
  expect_near(mx.out(), {2, NAN});
  auto ht = run_op("aten.hardtanh.default", {f32({3}, {-5, 0.2, 5})});
  expect_near(ht.out(), {-1, 0.2, 1});
  auto lr = run_op("aten.leaky_relu.default", {f32({2}, {-2, 3}), 0.5});
  expect_near(lr.out(), {-1, 3});
  auto elu = run_op("aten.elu.default", {f32({2}, {-1, 2})});
  expect_near(elu.out(), {std::expm1(-1.0), 2});
  // Found by the graph fuzzer: a fractional slope has no integer meaning (PyTorch refuses).
  auto int_lr = run_op("aten.leaky_relu.default", {i64({2}, {-4, 3}), 0.5});
  EXPECT_NE(int_lr.error.find("float tensors only"), std::string::npos) << int_lr.error;
}

TEST(Pointwise, CastsRoundToTheTargetType) {
  auto to_half =
      run_op("aten._to_copy.default", {f32({2}, {1.0009765625, 65520})}, {{"dtype", DType::F16}});
  ASSERT_TRUE(to_half.ok());
  expect_near(to_half.out(), {1.0009765625, INFINITY});
  auto to_int =
      run_op("aten._to_copy.default", {f32({3}, {-1.7, 2.9, NAN})}, {{"dtype", DType::I32}});
  expect_near(to_int.out(), {-1, 2, 0});
  auto bf = run_op("aten._to_copy.default", {f32({1}, {1.00390625})}, {{"dtype", DType::BF16}});
  expect_near(bf.out(), {1.0});  // 1 + 2^-8 is a tie: rounds to even
}

TEST(Pointwise, StridedInputsReadTheirLogicalValues) {
  // A [2, 3] input stored transposed: storage holds columns.
  auto storage = std::make_shared<std::vector<std::byte>>(6 * sizeof(float));
  HostTensor flat = f32({6}, {1, 4, 2, 5, 3, 6});
  std::copy(flat.bytes().begin(), flat.bytes().end(), storage->begin());
  auto strided = HostTensor::strided(TensorType{DType::F32, {2, 3}, {1, 2}}, storage, 0);
  ASSERT_TRUE(strided);
  auto r = run_op("aten.mul.Tensor", {*strided, 10.0});
  ASSERT_TRUE(r.ok()) << r.error;
  expect_near(r.out(), {10, 20, 30, 40, 50, 60});
}

TEST(Pointwise, EmptyAndScalarShapes) {
  auto e = run_op("aten.add.Tensor", {f32({0, 3}, {}), f32({3}, {1, 2, 3})});
  ASSERT_TRUE(e.ok()) << e.error;
  EXPECT_EQ(e.out().sizes(), (Shape{0, 3}));
  auto s = run_op("aten.mul.Tensor", {f32({}, {3}), f32({}, {4})});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.out().rank(), 0);
  expect_near(s.out(), {12});
}

}  // namespace
}  // namespace kiln::test
