// Kernels that differ only in their names (a transformer's repeated layers) compile once: the
// later ones launch the first one's code. first_alike on KIR, and a compiled chain of alike
// kernels against the oracle.
#include <gtest/gtest.h>

#include "core/runtime/compile_units.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

kir::Kernel row_sum(const std::string& name, int64_t rows) {
  kir::Kernel k;
  k.name = name;
  k.kind = "reduction";
  k.buffers = {{"in0", kir::DType::F32, rows * 8, kir::Role::In},
               {"out0", kir::DType::F32, rows, kir::Role::Out}};
  k.ranges = {rows};
  k.reduction_ranges = {8};
  return k;
}

TEST(AlikeKernels, FirstAlikeIgnoresOnlyTheName) {
  const std::vector<kir::Kernel> kernels = {row_sum("k0_sum", 4), row_sum("k7_sum", 4),
                                            row_sum("k9_sum", 5), row_sum("k12_sum", 4)};
  EXPECT_EQ(first_alike(kernels, {"", "", "", ""}), (std::vector<size_t>{0, 0, 2, 0}));
  // Another tuning config is other code.
  EXPECT_EQ(first_alike(kernels, {"", "", "", "threads=1"}), (std::vector<size_t>{0, 0, 2, 3}));
}

class CompiledAlikeKernels : public Differential {};

// Softmaxes between products (which no fusion crosses) over rows of one shape: each stage's
// kernels are alike, so three stages compile no more code than one, and each runs right
// against the oracle; a softmax over other rows is code of its own.
TEST_F(CompiledAlikeKernels, RepeatedStagesCompileOnce) {
  const auto stages = [&](int count) {
    GraphBuilder b = builder();
    ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 33}), Range{-3, 3});
    for (int i = 0; i < count; ++i) {
      x = b.op("aten._softmax.default", {x, int64_t{-1}, false});
      const ValueRef w = input(b, "w" + std::to_string(i),
                               TensorType::contiguous(DType::F32, {33, 33}), Range{-1, 1});
      x = b.op("aten.mm.default", {x, w});
    }
    output_of(b, "last", "aten._softmax.default", {x, int64_t{-1}, false});
    output_of(b, "other", "aten._softmax.default",
              {input(b, "y", TensorType::contiguous(DType::F32, {7, 9})), int64_t{-1}, false});
    return check(b);
  };
  const CompileStats one = stages(1), three = stages(3);
  EXPECT_GT(three.kernels, one.kernels);
  EXPECT_EQ(three.distinct_kernels, one.distinct_kernels);
  EXPECT_LT(one.distinct_kernels, one.kernels) << "the two stages' softmaxes are alike";
}

}  // namespace
}  // namespace kiln::test
