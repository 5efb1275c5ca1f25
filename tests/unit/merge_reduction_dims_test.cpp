// merge_reduction_dims: reduction dims that walk memory as one become one
// (core/sched/merge_reduction_dims.h).
#include "core/sched/merge_reduction_dims.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

const Expr x0 = Expr::var("x0"), r0 = Expr::var("r0"), r1 = Expr::var("r1"), r2 = Expr::var("r2");
Expr c(int64_t v) {
  return Expr::constant(v);
}

// sum over the reduction dims of `reduction` of in[index], stored at out[x0].
LoopProgram summing(const Shape& ranges, const Shape& reduction, const Expr& index) {
  LoopKernel k;
  k.name = "k0_sum";
  k.kind = LoopKernelKind::Reduction;
  k.ranges = ranges;
  k.reduction_ranges = reduction;
  LoopOp load;
  load.kind = LoopOpKind::Load;
  load.id = 0;
  load.buffer = 0;
  load.index = index;
  LoopOp sum;
  sum.kind = LoopOpKind::Reduce;
  sum.id = 1;
  sum.name = "sum";
  sum.args = {0};
  LoopOp store;
  store.kind = LoopOpKind::Store;
  store.buffer = 1;
  store.args = {1};
  store.index = x0;
  k.body = {load, sum, store};
  LoopProgram p;
  p.kernels.push_back(k);
  return p;
}

TEST(MergeReductionDims, ContiguousHeightAndWidthBecomeOneRow) {
  // mean over (H, W) of NCHW [.., 28, 28]: in[x0*784 + r0*28 + r1].
  LoopProgram p = summing({256}, {28, 28}, x0 * c(784) + r0 * c(28) + r1);
  EXPECT_EQ(merge_reduction_dims(p), 1);
  const LoopKernel& k = p.kernels[0];
  EXPECT_EQ(k.reduction_ranges, (Shape{784}));
  EXPECT_EQ(k.body[0].index.to_string(), "r0 + x0*784");
  EXPECT_EQ(k.body[2].index.to_string(), "x0");
}

TEST(MergeReductionDims, ThreeContiguousDimsBecomeOne) {
  LoopProgram p = summing({4}, {2, 3, 5}, x0 * c(30) + r0 * c(15) + r1 * c(5) + r2);
  EXPECT_EQ(merge_reduction_dims(p), 2);
  EXPECT_EQ(p.kernels[0].reduction_ranges, (Shape{30}));
  EXPECT_EQ(p.kernels[0].body[0].index.to_string(), "r0 + x0*30");
}

TEST(MergeReductionDims, StridedInnerPairMergesWithItsStride) {
  // Every other element of a row: r0*2*W + r1*2 is one walk of stride 2.
  LoopProgram p = summing({4}, {3, 7}, x0 * c(42) + r0 * c(14) + r1 * c(2));
  EXPECT_EQ(merge_reduction_dims(p), 1);
  EXPECT_EQ(p.kernels[0].body[0].index.to_string(), "r0*2 + x0*42");
}

TEST(MergeReductionDims, AGapBetweenRowsKeepsTheDims) {
  // Rows of 7 elements 5 apart, 36 apart from row to row (a padded layout): 36 != 7 * 5.
  LoopProgram p = summing({5}, {3, 7}, r0 * c(36) + r1 * c(5) + x0);
  EXPECT_EQ(merge_reduction_dims(p), 0);
  EXPECT_EQ(p.kernels[0].reduction_ranges, (Shape{3, 7}));
}

TEST(MergeReductionDims, TransposedWalksAndNonlinearIndicesStay) {
  LoopProgram transposed = summing({4}, {8, 8}, r0 + r1 * c(8) + x0 * c(64));
  EXPECT_EQ(merge_reduction_dims(transposed), 0);
  LoopProgram divided = summing({4}, {8, 8}, floordiv(r0 * c(8) + r1, c(2)) + x0 * c(32));
  EXPECT_EQ(merge_reduction_dims(divided), 0);
  LoopProgram scaled = summing({4}, {8, 8}, (r0 * c(8) + r1) * x0);
  EXPECT_EQ(merge_reduction_dims(scaled), 0);
}

TEST(MergeReductionDims, EveryIndexMustAgree) {
  // A second load reads the same elements transposed: the pair cannot merge for it.
  LoopProgram p = summing({4}, {8, 8}, x0 * c(64) + r0 * c(8) + r1);
  LoopKernel& k = p.kernels[0];
  LoopOp other = k.body[0];
  other.id = 3;
  other.index = x0 * c(64) + r1 * c(8) + r0;
  k.body.insert(k.body.begin() + 1, other);
  EXPECT_EQ(merge_reduction_dims(p), 0);
}

TEST(MergeReductionDims, PointwiseKernelsAreLeftAlone) {
  LoopProgram p = summing({4}, {8, 8}, x0 * c(64) + r0 * c(8) + r1);
  p.kernels[0].kind = LoopKernelKind::Pointwise;
  EXPECT_EQ(merge_reduction_dims(p), 0);
}

}  // namespace
}  // namespace kiln
