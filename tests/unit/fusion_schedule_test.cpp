// The fusion pass on LoopIR built by hand: loop matching (reorder, reshape), the memory
// bound and its category, dead kernels, the failure CSV, and CSE of merged bodies.
#include <gmock/gmock.h>

#include "core/sched/common_ops.h"
#include "core/sched/fuse_kernels.h"
#include "core/sched/program_bytes.h"
#include "core/sched/space_map.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

Expr v(const std::string& name) {
  return Expr::var(name);
}
Expr c(int64_t value) {
  return Expr::constant(value);
}

LoopOp load(int id, int buffer, Expr index) {
  LoopOp op = make_loop_op(LoopOpKind::Load, DType::F32);
  op.id = id;
  op.buffer = buffer;
  op.index = std::move(index);
  return op;
}
LoopOp store(int buffer, Expr index, int value) {
  LoopOp op = make_loop_op(LoopOpKind::Store, DType::F32, {value});
  op.buffer = buffer;
  op.index = std::move(index);
  return op;
}
LoopOp math(int id, const std::string& name, std::vector<int> args) {
  LoopOp op = make_loop_op(LoopOpKind::Math, DType::F32, std::move(args), name);
  op.id = id;
  return op;
}
LoopOp reduce(int id, const std::string& kind, int arg) {
  LoopOp op = make_loop_op(LoopOpKind::Reduce, DType::F32, {arg}, kind);
  op.id = id;
  return op;
}
LoopBuffer temp(const std::string& name, int64_t elements) {
  return {name, DType::F32, elements, BufferKind::Temp, {}};
}
LoopKernel host_step(const std::string& name, int in, int out) {
  LoopKernel k;
  k.name = name;
  k.kind = LoopKernelKind::Extern;
  k.extern_name = "reference";
  k.extern_inputs = {in};
  k.extern_outputs = {out};
  return k;
}

TEST(SpaceMap, PairsDimsByStrideWhenOrdersDiffer) {
  LoopKernel from;  // pointwise over [41, 23] reading stats[x1]
  from.ranges = {41, 23};
  const LoopSpace to{{23}, {41}};  // rows are the columns
  const auto m = map_space(from, to, false, {{v("x1"), v("x0")}});
  ASSERT_TRUE(m.ok) << m.detail;
  EXPECT_EQ(m.bind.at("x0").to_string(), "r0");
  EXPECT_EQ(m.bind.at("x1").to_string(), "x0");
}

TEST(SpaceMap, MatchesADimAgainstARunOfDims) {
  LoopKernel from;
  from.ranges = {32, 64};
  const auto m = map_space(from, {{2, 16}, {64}}, false, {});
  ASSERT_TRUE(m.ok) << m.detail;
  EXPECT_EQ(m.bind.at("x0").to_string(), "x0*16 + x1");
  EXPECT_EQ(m.bind.at("x1").to_string(), "r0");
  LoopKernel split;
  split.ranges = {2, 16, 64};
  const auto s = map_space(split, {{32}, {64}}, false, {});
  ASSERT_TRUE(s.ok) << s.detail;
  EXPECT_EQ(s.bind.at("x0").to_string(), "x0 floordiv 16");
  EXPECT_EQ(s.bind.at("x1").to_string(), "x0 mod 16");
}

TEST(SpaceMap, NamesWhyLoopsDoNotLineUp) {
  LoopKernel from;
  from.ranges = {6, 10};
  EXPECT_EQ(map_space(from, {{7}, {9}}, false, {}).why, FusionCategory::DifferentNumel);
  EXPECT_EQ(map_space(from, {{6}, {5}}, false, {}).why, FusionCategory::Broadcast);
  LoopKernel rows;  // a reduction over other rows
  rows.kind = LoopKernelKind::Reduction;
  rows.ranges = {6};
  rows.reduction_ranges = {10};
  EXPECT_EQ(map_space(rows, {{10}, {6}}, false, {}).why, FusionCategory::DifferentOrder);
}

// An epilogue placed after a kernel that allocates: merging would keep the reduction's input
// alive across that allocation.
LoopProgram memory_bound_program() {
  LoopProgram p;
  p.buffers = {{"x", DType::F32, 1000, BufferKind::Input, {}},
               temp("t1", 1000),
               temp("s", 10),
               temp("t2", 1000),
               temp("out", 1000)};
  p.kernels.push_back(host_step("k0_host", 0, 1));
  LoopKernel r;
  r.name = "k1_sum";
  r.kind = LoopKernelKind::Reduction;
  r.ranges = {40};
  r.reduction_ranges = {100};
  r.body = {load(0, 1, v("x0") * c(100) + v("r0")), reduce(1, "sum", 0), store(2, v("x0"), 1)};
  p.kernels.push_back(r);
  p.kernels.push_back(host_step("k2_host", 0, 3));
  LoopKernel e;
  e.name = "k3_add";
  e.ranges = {40, 100};
  e.body = {load(0, 3, v("x0") * c(100) + v("x1")), load(1, 2, v("x0")), math(2, "add", {0, 1}),
            store(4, v("x0") * c(100) + v("x1"), 2)};
  p.kernels.push_back(e);
  p.outputs = {4};
  return p;
}

TEST(FuseKernels, ARaisedPeakIsAFailureUnlessTheBoundAllowsIt) {
  LoopProgram p = memory_bound_program();
  const FuseReport strict = fuse_kernels(p);
  EXPECT_EQ(strict.fused, 0);
  ASSERT_EQ(strict.failures.size(), 1u);
  EXPECT_EQ(strict.failures[0].category, FusionCategory::WouldRaiseMemory);
  EXPECT_EQ(strict.failures[0].producer, "k1_sum");
  EXPECT_EQ(strict.failures[0].consumer, "k3_add");

  LoopProgram q = memory_bound_program();
  const int64_t before = live_peak_bytes(q);
  FuseOptions loose;
  loose.max_peak_growth_bytes = 1 << 20;
  EXPECT_EQ(fuse_kernels(q, loose).fused, 1);
  EXPECT_EQ(q.kernels.size(), 3u);
  EXPECT_GT(live_peak_bytes(q), before);
  // The row statistics are passed in registers: their buffer is gone.
  for (const LoopBuffer& b : q.buffers) EXPECT_NE(b.name, "s");
}

TEST(FuseKernels, DeadFillsGoButIndexChecksStay) {
  LoopProgram p;
  p.buffers = {temp("unused", 8), temp("checked", 8), temp("out", 8)};
  LoopKernel fill;
  fill.name = "k0_full";
  fill.ranges = {8};
  LoopOp zero = make_loop_op(LoopOpKind::Const, DType::F32);
  zero.id = 0;
  fill.body = {zero, store(0, v("x0"), 0)};
  LoopKernel check = fill;
  check.name = "k1_check";
  LoopOp i = make_loop_op(LoopOpKind::Const, DType::I64);
  i.id = 0;
  LoopOp ci = make_loop_op(LoopOpKind::CheckIndex, DType::I64, {0});
  ci.id = 1;
  ci.number = 4;
  check.body = {i, ci, store(1, v("x0"), 1)};
  LoopKernel out = fill;
  out.name = "k2_out";
  out.body = {zero, store(2, v("x0"), 0)};
  p.kernels = {fill, check, out};
  p.outputs = {2};
  remove_dead_kernels(p);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "k1_check");
  prune_buffers(p);
  ASSERT_EQ(p.buffers.size(), 2u);
  EXPECT_EQ(p.outputs, std::vector<int>{1});
}

TEST(FusionFailures, CsvQuotesDetails) {
  const std::string csv = fusion_failures_csv(
      {{"k1", "k2", FusionCategory::DifferentOffset, "reads x0 + 1, \"shifted\""}});
  EXPECT_EQ(csv,
            "producer,consumer,category,detail\n"
            "k1,k2,different offset,\"reads x0 + 1, \"\"shifted\"\"\"\n");
}

TEST(CommonOps, RepeatedLoadsAndMathCollapse) {
  LoopKernel k;
  k.ranges = {4};
  k.body = {load(0, 0, v("x0")),    load(1, 0, v("x0")),    math(2, "mul", {0, 1}),
            math(3, "mul", {1, 0}), math(4, "add", {2, 3}), store(1, v("x0"), 4)};
  eliminate_common_ops(k);
  // One load; then both products read it twice and are one product.
  ASSERT_EQ(k.body.size(), 4u);
  EXPECT_EQ(k.body[1].args, (std::vector<int>{0, 0}));
  EXPECT_EQ(k.body[2].args, (std::vector<int>{1, 1}));
  EXPECT_EQ(k.body[3].args, std::vector<int>{2});
}

}  // namespace
}  // namespace kiln
