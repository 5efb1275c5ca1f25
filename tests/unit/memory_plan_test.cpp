// The memory planner: buffers live at once never share bytes, dead ones are reused best-fit,
// the verifier catches overlaps, and on random lifetimes every plan verifies and never needs
// more than one allocation per buffer.
#include "core/memory/memory_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

namespace kiln::test {
namespace {

TEST(MemoryPlan, DisjointLifetimesShareBytesOverlappingOnesDoNot) {
  const std::vector<BufferLifetime> b = {{1000, 0, 2}, {1000, 1, 3}, {1000, 3, 5}};
  const MemoryPlan plan = plan_memory(b);
  EXPECT_EQ(plan.offsets[0], 0);
  EXPECT_EQ(plan.offsets[1], 1024);  // 1000 rounded up to the 64-byte alignment
  EXPECT_EQ(plan.offsets[2], 0);     // buffer 0 died at step 2
  EXPECT_EQ(plan.arena_bytes, 2048);
  EXPECT_EQ(plan.naive_bytes, 3072);
  EXPECT_EQ(verify_memory_plan(b, plan), "");
}

TEST(MemoryPlan, BestFitTakesTheSmallestGapThatHolds) {
  // A, G1, B, G2, C are placed one after another; G1 (1024 bytes) and G2 (128) die at step 5,
  // leaving two gaps. X (100 bytes, from step 6) takes the smaller one, not the first.
  const std::vector<BufferLifetime> b = {{4096, 0, 9}, {1024, 1, 5}, {4096, 2, 9},
                                         {128, 3, 5},  {4096, 4, 9}, {100, 6, 7}};
  const MemoryPlan plan = plan_memory(b);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 4096, 5120, 9216, 9344, 9216}));
  EXPECT_EQ(plan.arena_bytes, 9344 + 4096);
  EXPECT_EQ(verify_memory_plan(b, plan), "");
}

TEST(MemoryPlan, TheVerifierCatchesOverlapsAndStrays) {
  const std::vector<BufferLifetime> b = {{100, 0, 2}, {100, 1, 3}};
  MemoryPlan bad{{0, 64}, 256, 256};
  EXPECT_EQ(verify_memory_plan(b, bad), "buffers 0 and 1 are live together and share bytes");
  MemoryPlan outside{{0, 200}, 256, 256};
  EXPECT_EQ(verify_memory_plan(b, outside), "buffer 1 lies outside the arena or is misaligned");
  MemoryPlan misaligned{{0, 130}, 512, 512};
  EXPECT_EQ(verify_memory_plan(b, misaligned), "buffer 1 lies outside the arena or is misaligned");
}

TEST(MemoryPlan, RandomLifetimesAlwaysVerify) {
  std::mt19937_64 rng(std::random_device{}());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferLifetime> b;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 30);
      b.push_back(
          {static_cast<int64_t>(rng() % 5000), first, first + static_cast<int>(rng() % 10)});
    }
    const MemoryPlan plan = plan_memory(b);
    ASSERT_EQ(verify_memory_plan(b, plan), "") << "trial " << trial;
    EXPECT_LE(plan.arena_bytes, plan.naive_bytes);
  }
}

TEST(MemoryPlan, EmptyAndZeroSizedBuffers) {
  EXPECT_EQ(plan_memory({}).arena_bytes, 0);
  const std::vector<BufferLifetime> b = {{0, 0, 1}, {0, 0, 1}};
  const MemoryPlan plan = plan_memory(b);
  EXPECT_EQ(verify_memory_plan(b, plan), "");  // even empty buffers get distinct bytes
}

}  // namespace
}  // namespace kiln::test

namespace kiln {
namespace {

TEST(MemoryPlanInPlace, AnOutputTakesItsDyingInputsBytes) {
  // b0 dies at step 2, where b1 (same size) is born from it elementwise.
  std::vector<BufferLifetime> buffers = {{1000, 0, 2}, {1000, 2, 4}, {64, 1, 3}};
  buffers[1].may_reuse = 0;
  const MemoryPlan plan = plan_memory(buffers);
  EXPECT_EQ(plan.in_place, 1);
  EXPECT_EQ(plan.offsets[1], plan.offsets[0]);
  EXPECT_EQ(verify_memory_plan(buffers, plan), "");
  // The same placement without the in-place declaration is a violation.
  buffers[1].may_reuse = -1;
  EXPECT_THAT(verify_memory_plan(buffers, plan), ::testing::HasSubstr("share bytes"));
}

TEST(MemoryPlanInPlace, ADeclarationThatDoesNotHoldIsIgnored) {
  // b0 lives past b1's birth, and sizes differ for b2: neither may reuse.
  std::vector<BufferLifetime> buffers = {{1000, 0, 3}, {1000, 2, 4}, {512, 3, 5}};
  buffers[1].may_reuse = 0;
  buffers[2].may_reuse = 0;
  const MemoryPlan plan = plan_memory(buffers);
  EXPECT_EQ(plan.in_place, 0);
  EXPECT_NE(plan.offsets[1], plan.offsets[0]);
  EXPECT_EQ(verify_memory_plan(buffers, plan), "");
}

}  // namespace
}  // namespace kiln
