// select_scatter, slice_scatter and atan2.out compiled as elementwise kernels against the
// reference: every dtype (integers and bool embed exactly), each dim, negative and clamped
// bounds, steps, strided operands, and a consumer that fuses.
#include <gtest/gtest.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledEmbed : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledEmbed, SelectAndSliceScatterAreKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef self = input(b, "self", c({4, 7, 5}));
  const ValueRef self_t =
      input(b, "self_t", TensorType{d, {4, 7, 5}, permuted_strides({4, 7, 5}, {2, 0, 1})});
  output_of(b, "select0", "aten.select_scatter.default",
            {self, input(b, "s0", c({7, 5})), int64_t{0}, int64_t{3}});
  output_of(b, "select_neg", "aten.select_scatter.default",
            {self_t, input(b, "s1", TensorType{d, {4, 5}, {1, 4}}), int64_t{-2}, int64_t{-1}});
  output_of(b, "slice_step", "aten.slice_scatter.default",
            {self, input(b, "s2", c({4, 3, 5})), int64_t{1}, int64_t{1}, int64_t{6}, int64_t{2}});
  output_of(b, "slice_neg", "aten.slice_scatter.default",
            {self_t, input(b, "s3", c({4, 7, 2})), int64_t{2}, int64_t{-2}, None{}, int64_t{1}});
  output_of(
      b, "slice_clamped", "aten.slice_scatter.default",
      {self, input(b, "s4", c({2, 7, 5})), int64_t{0}, int64_t{-100}, int64_t{100}, int64_t{3}});
  // Fused with a reader: the embedding feeds an add.
  output_of(b, "slice_then_add", "aten.add.Tensor",
            {b.op("aten.slice_scatter.default", {self, input(b, "s5", c({4, 7, 1})), int64_t{2},
                                                 int64_t{4}, int64_t{5}, int64_t{1}}),
             self_t});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "select_scatter and slice_scatter run as kernels";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledEmbed,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16,
                                           DType::I64, DType::I32, DType::U8, DType::Bool),
                         DTypeName());

class CompiledAtan2 : public Differential {};

TEST_F(CompiledAtan2, OutFormIsAKernel) {
  // f16 operands, one broadcast and one strided, into an f32 `out`.
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(DType::F16, {5, 1, 7}), Range{-2, 2});
  const ValueRef o = input(b, "o", TensorType{DType::F16, {3, 7}, {1, 3}}, Range{-2, 2});
  const ValueRef out = input(b, "out", TensorType::contiguous(DType::F32, {5, 3, 7}));
  output_of(b, "atan2_out", "aten.atan2.out", {a, o}, {{"out", out}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

}  // namespace
}  // namespace kiln::test
