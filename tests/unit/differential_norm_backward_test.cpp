// native_layer_norm_backward and native_group_norm_backward decomposed into row and column
// sums and compiled against the reference: every float dtype, statistics from the forward op
// (so they are consistent), with and without weight, each output_mask, odd sizes, one
// normalized dim and several, and a strided grad_out.
#include <gtest/gtest.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledNormBackward : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledNormBackward, LayerNormBackwardIsKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef x = input(b, "x", c({3, 5, 13})), w = input(b, "w", c({13}));
  const ValueRef bias = input(b, "bias", c({13}));
  const std::vector<ValueRef> fwd =
      b.ops("aten.native_layer_norm.default", {x, ints{13}, w, bias, 1e-5}, {}, "ln");
  const ValueRef dy =
      input(b, "dy", TensorType{d, {3, 5, 13}, permuted_strides({3, 5, 13}, {2, 0, 1})});
  auto grads = [&](const std::string& label, std::vector<ArgValue> args) {
    for (ValueRef v : b.ops("aten.native_layer_norm_backward.default", args, {}, label))
      b.output(v);
  };
  grads("all", {dy, x, ints{13}, fwd[1], fwd[2], w, bias, ints{1, 1, 1}});
  grads("no_weight", {dy, x, ints{13}, fwd[1], fwd[2], None{}, None{}, ints{1, 0, 0}});
  grads("affine_only", {dy, x, ints{13}, fwd[1], fwd[2], w, bias, ints{0, 1, 1}});
  // Two normalized dims.
  const ValueRef x2 = input(b, "x2", c({4, 3, 7})), w2 = input(b, "w2", c({3, 7}));
  const std::vector<ValueRef> fwd2 =
      b.ops("aten.native_layer_norm.default", {x2, ints{3, 7}, w2, None{}, 1e-5}, {}, "ln2");
  grads("two_dims", {input(b, "dy2", c({4, 3, 7})), x2, ints{3, 7}, fwd2[1], fwd2[2], w2, None{},
                     ints{1, 1, 1}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "layer norm backward runs as kernels";
}

TEST_P(CompiledNormBackward, GroupNormBackwardIsKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef x = input(b, "x", c({2, 6, 5, 3})), w = input(b, "w", c({6}));
  const std::vector<ValueRef> fwd =
      b.ops("aten.native_group_norm.default",
            {x, w, None{}, int64_t{2}, int64_t{6}, int64_t{15}, int64_t{3}, 1e-5}, {}, "gn");
  auto grads = [&](const std::string& label, std::vector<ArgValue> args) {
    for (ValueRef v : b.ops("aten.native_group_norm_backward.default", args, {}, label))
      b.output(v);
  };
  const ValueRef dy = input(b, "dy", c({2, 6, 5, 3}));
  grads("all",
        {dy, x, fwd[1], fwd[2], w, int64_t{2}, int64_t{6}, int64_t{15}, int64_t{3}, ints{1, 1, 1}});
  grads("no_weight", {dy, x, fwd[1], fwd[2], None{}, int64_t{2}, int64_t{6}, int64_t{15},
                      int64_t{3}, ints{1, 0, 1}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "group norm backward runs as kernels";
}

TEST_P(CompiledNormBackward, FunctionalBatchNormIsKernels) {
  // What training graphs export batch norm to: batch statistics and moved running statistics
  // in training, the running statistics passed through otherwise.
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const DType stats = d == DType::F64 ? DType::F64 : DType::F32;
  const ValueRef x = input(b, "x", c({4, 3, 5, 2})), w = input(b, "w", c({3}));
  const ValueRef bias = input(b, "bias", c({3}));
  const ValueRef rm = input(b, "rm", TensorType::contiguous(stats, {3}));
  const ValueRef rv = input(b, "rv", TensorType::contiguous(stats, {3}), Range{0.5, 2});
  for (bool training : {true, false}) {
    const std::vector<ValueRef> out =
        b.ops("aten._native_batch_norm_legit_functional.default",
              {x, w, bias, rm, rv, training, 0.1, 1e-5}, {}, training ? "train" : "eval");
    for (ValueRef v : out) b.output(v);
  }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledNormBackward,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
