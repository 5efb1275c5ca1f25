// Outputs nobody reads are not computed: max pooling's indices, dropout's mask, an embedding
// bag's offsets, sizes and max positions. The outputs read still match the reference, and the
// kernels move fewer bytes (or are fewer) than when every output is read.
#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledUnreadOutputs : public Differential, public ::testing::WithParamInterface<DType> {
 protected:
  // The node `build` adds, once with every output read and once with only the first: both
  // against the reference; returns (all read, first only).
  std::pair<CompileStats, CompileStats> both_ways(
      const std::function<std::vector<ValueRef>(GraphBuilder&)>& build) {
    CompileStats all, first;
    for (const bool every : {true, false}) {
      GraphBuilder b = builder();
      const std::vector<ValueRef> outs = build(b);
      for (size_t k = 0; k < (every ? outs.size() : 1); ++k) b.output(outs[k]);
      (every ? all : first) = check(b);
    }
    return {all, first};
  }
};

TEST_P(CompiledUnreadOutputs, MaxPoolWithoutIndicesStoresValuesOnly) {
  const DType d = GetParam();
  const auto [all, first] = both_ways([&](GraphBuilder& b) {
    const ValueRef x = input(b, "x", TensorType{d, {2, 3, 9, 7}, {189, 1, 21, 3}});
    return b.ops("aten.max_pool2d_with_indices.default",
                 {x, ints{3, 3}, ints{2, 2}, ints{1, 1}, ints{1, 1}, false}, {}, "pool");
  });
  EXPECT_EQ(first.host_steps, 0u);
  EXPECT_LT(first.bytes_fused, all.bytes_fused) << "the indices are not written";
}

TEST_P(CompiledUnreadOutputs, DropoutWithoutMaskStoresValuesOnly) {
  const DType d = GetParam();
  const auto [all, first] = both_ways([&](GraphBuilder& b) {
    const ValueRef x = input(b, "x", TensorType::contiguous(d, {7, 13}), Range{-2, 2});
    return b.ops("aten.native_dropout.default", {x, 0.4, true}, {}, "dropout");
  });
  EXPECT_EQ(first.host_steps, 0u);
  EXPECT_LT(first.bytes_fused, all.bytes_fused) << "the mask is not written";
}

TEST_P(CompiledUnreadOutputs, EmbeddingBagWithoutItsCountsTakesFewerKernels) {
  const DType d = GetParam();
  for (const int64_t mode : {0, 1, 2}) {  // sum, mean, max
    SCOPED_TRACE("mode " + std::to_string(mode));
    const auto [all, first] = both_ways([&](GraphBuilder& b) {
      const ValueRef table = input(b, "table", TensorType::contiguous(d, {11, 6}), Range{-2, 2});
      const ValueRef ids = input(b, "ids", TensorType::contiguous(DType::I64, {17}), Range{0, 11});
      // Bags 0-4, 5-4 (empty), 5-10, 11-16.
      const ValueRef offsets =
          b.op("aten.cat.default",
               {TensorList{{b.op("aten.arange.start_step", {int64_t{0}, int64_t{6}, int64_t{5}},
                                 {{"dtype", DType::I64}}),
                            b.op("aten.arange.start_step", {int64_t{5}, int64_t{12}, int64_t{6}},
                                 {{"dtype", DType::I64}})}},
                int64_t{0}});
      return b.ops("aten._embedding_bag.default",
                   {table, ids, offsets, false, mode, false, None{}, false, int64_t{-1}}, {},
                   "bag");
    });
    EXPECT_EQ(first.host_steps, 0u);
    EXPECT_LT(first.kernels, all.kernels) << "offsets, sizes or max positions still computed";
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledUnreadOutputs, ::testing::Values(DType::F32, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
