// split_long_rows' choice on a GPU (core/sched/split_long_rows.h): which reductions split and
// into how many chunks, by the blocks a GPU would give them. What the split kernels compute
// is checked against the oracle in differential_split_rows_test.cpp.
#include "core/sched/split_long_rows.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

const Expr x0 = Expr::var("x0"), r0 = Expr::var("r0");
Expr c(int64_t v) {
  return Expr::constant(v);
}

// out[x0] = sum over r0 of in[index].
LoopProgram summing(int64_t rows, int64_t n, const Expr& index) {
  LoopKernel k;
  k.name = "k0_sum";
  k.kind = LoopKernelKind::Reduction;
  k.ranges = {rows};
  k.reduction_ranges = {n};
  LoopOp load = make_loop_op(LoopOpKind::Load, DType::F32);
  load.id = 0;
  load.buffer = 0;
  load.index = index;
  LoopOp sum = make_loop_op(LoopOpKind::Reduce, DType::F32, {0}, "sum");
  sum.id = 1;
  LoopOp store = make_loop_op(LoopOpKind::Store, DType::F32, {1});
  store.buffer = 1;
  store.index = x0;
  k.body = {load, sum, store};
  LoopProgram p;
  p.buffers = {{"in", DType::F32, rows * n, BufferKind::Input, {}},
               {"out", DType::F32, rows, BufferKind::Temp, {}}};
  p.kernels.push_back(k);
  return p;
}

// The chunks the first kernel walks (its reduction length against the original's).
int64_t chunks_of(const LoopProgram& p, int64_t n) {
  return n / p.kernels.front().reduction_ranges.at(0);
}

// An H200: 132 compute units, warps of 32.
const SplitRowsOptions kH200 = device_split_options(132, 32);

TEST(SplitLongRows, FewRowsAlongMemorySplitUntilTheDeviceIsBusy) {
  LoopProgram p = summing(64, 262144, x0 * c(262144) + r0);
  EXPECT_EQ(split_long_rows(p, kH200), 1);
  ASSERT_EQ(p.kernels.size(), 2u) << "partial and final";
  EXPECT_EQ(p.kernels[0].ranges, (Shape{16, 64}));  // 16 chunks x 64 rows >= 4 x 132 blocks
  EXPECT_EQ(chunks_of(p, 262144), 16);
  EXPECT_EQ(p.kernels[1].reduction_ranges, (Shape{16}));
}

TEST(SplitLongRows, ManyRowsAlongMemoryStayWhole) {
  LoopProgram p = summing(1024, 32000, x0 * c(32000) + r0);  // 1024 blocks already
  EXPECT_EQ(split_long_rows(p, kH200), 0);
  EXPECT_EQ(p.kernels.size(), 1u);
}

TEST(SplitLongRows, ColumnsCountAWarpOfRowsPerBlock) {
  // A sum over dim 0 of [8192, 1024]: 1024 columns are 32 blocks in column mode.
  LoopProgram p = summing(1024, 8192, r0 * c(1024) + x0);
  EXPECT_EQ(split_long_rows(p, kH200), 1);
  EXPECT_EQ(chunks_of(p, 8192), 16);  // as many as chunks of 512 allow
  // The same columns as rows along memory would be 1024 blocks: no split.
  LoopProgram rows = summing(1024, 8192, x0 * c(8192) + r0);
  EXPECT_EQ(split_long_rows(rows, kH200), 0);
}

TEST(SplitLongRows, CpusShortRowsAndOddLengthsStayWhole) {
  LoopProgram cpu = summing(4, 1 << 20, x0 * c(1 << 20) + r0);
  EXPECT_EQ(split_long_rows(cpu, device_split_options(16, 1)), 0);
  LoopProgram short_rows = summing(4, 1000, x0 * c(1000) + r0);  // under two chunks of 512
  EXPECT_EQ(split_long_rows(short_rows, kH200), 0);
  LoopProgram prime = summing(4, 4099, x0 * c(4099) + r0);
  EXPECT_EQ(split_long_rows(prime, kH200), 0);
}

TEST(SplitLongRows, AnExplicitRowCountOverridesTheDevice) {
  SplitRowsOptions rows;
  rows.min_rows = 4096;
  LoopProgram p = summing(1024, 32000, x0 * c(32000) + r0);
  EXPECT_EQ(split_long_rows(p, rows), 1);
  EXPECT_EQ(chunks_of(p, 32000), 4);  // 1024 x 4 rows >= 4096
}

}  // namespace
}  // namespace kiln
