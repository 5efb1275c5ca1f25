// cumsum, cumprod, sort and topk compiled from Reduction kernels against the reference: every
// dim, float and integer dtypes (bool sums), dtype=, lines longer than a warp's step, ties, NaN
// in both sort orders, k from 0 to the whole line, strided inputs, and a fused consumer.
#include <gtest/gtest.h>

#include <cmath>

#include "core/lower/long_line_sort.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledScanSort : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledScanSort, CumsumIsKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {3, 37, 5}));
  const ValueRef xt = input(b, "xt", TensorType{d, {4, 6}, {1, 4}});
  // 300 = nine full steps of a warp and a partial one (a row read contiguously).
  const ValueRef longer = input(b, "long", TensorType{d, {300, 2}, {1, 300}});
  output_of(b, "long_dim0", "aten.cumsum.default", {longer, int64_t{0}});
  output_of(b, "dim1", "aten.cumsum.default", {x, int64_t{1}});
  output_of(b, "dim0", "aten.cumsum.default", {x, int64_t{0}});
  output_of(b, "last", "aten.cumsum.default", {x, int64_t{-1}});
  output_of(b, "strided", "aten.cumsum.default", {xt, int64_t{1}});
  output_of(b, "as_f64", "aten.cumsum.default", {x, int64_t{1}}, {{"dtype", DType::F64}});
  output_of(b, "bools", "aten.cumsum.default", {b.op("aten.gt.Scalar", {x, 0.0}), int64_t{1}});
  output_of(b, "then_mul", "aten.mul.Tensor", {b.op("aten.cumsum.default", {xt, int64_t{0}}), xt});
  // Long lines in one walk: on the GPU 16 elements per lane and step (5000: the last step
  // partly past the end), and lanes of one element where the length is odd.
  output_of(b, "long_runs", "aten.cumsum.default",
            {input(b, "long_runs_in", TensorType::contiguous(d, {2, 5000})), int64_t{1}});
  output_of(b, "long_odd", "aten.cumsum.default",
            {input(b, "long_odd_in", TensorType::contiguous(d, {2, 4099})), int64_t{1}});
  // Few long lines scan in segments of 1024: 9000 = 8 full segments and a partial one.
  const ValueRef few_long = input(b, "few_long", TensorType::contiguous(d, {2, 9000}));
  output_of(b, "segments", "aten.cumsum.default", {few_long, int64_t{1}});
  output_of(b, "segments_dim0", "aten.cumsum.default",
            {b.op("aten.permute.default", {few_long, std::vector<int64_t>{1, 0}}), int64_t{0}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "cumsum runs as kernels";
}

TEST_P(CompiledScanSort, CumprodIsKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  // Near one, so that 37 factors neither overflow nor vanish in half precision; integers
  // from 1 to 3 wrap int64 along the 70-long lines.
  const Range near_one = is_floating(d) ? Range{0.8, 1.25} : Range{1, 3};
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {3, 37, 5}), near_one);
  const ValueRef xt = input(b, "xt", TensorType{d, {70, 3}, {1, 70}}, near_one);
  output_of(b, "dim1", "aten.cumprod.default", {x, int64_t{1}});
  output_of(b, "last", "aten.cumprod.default", {x, int64_t{-1}});
  output_of(b, "strided_dim0", "aten.cumprod.default", {xt, int64_t{0}});
  output_of(b, "as_f64", "aten.cumprod.default", {x, int64_t{0}}, {{"dtype", DType::F64}});
  output_of(b, "then_add", "aten.add.Tensor", {b.op("aten.cumprod.default", {x, int64_t{2}}), x});
  const ValueRef one_long = input(b, "one_long", TensorType::contiguous(d, {8500}),
                                  is_floating(d) ? Range{0.999, 1.001} : Range{1, 1});
  output_of(b, "segments", "aten.cumprod.default", {one_long, int64_t{0}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "cumprod runs as kernels";
}

TEST_P(CompiledScanSort, SortAndTopkAreKernels) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  // Few distinct values: ties decide indices.
  ValueRef x =
      b.op("aten.round.default", {input(b, "x", TensorType::contiguous(d, {4, 13}), Range{-3, 3})});
  if (is_floating(d)) {
    x = b.op("aten.where.self",
             {b.op("aten.gt.Scalar", {x, 1.5}), std::nan(""), x});  // NaNs among them
  }
  const ValueRef xt = input(b, "xt", TensorType{d, {6, 5}, {1, 6}}, Range{-3, 3});
  auto both = [&](const std::string& label, const std::string& op, std::vector<ArgValue> args) {
    for (ValueRef v : b.ops(op, args, {}, label)) b.output(v);
  };
  both("ascending", "aten.sort.default", {x, int64_t{-1}, false});
  both("descending", "aten.sort.default", {x, int64_t{1}, true});
  both("dim0", "aten.sort.default", {xt, int64_t{0}, false});
  both("top3", "aten.topk.default", {x, int64_t{3}, int64_t{-1}, true, true});
  both("bottom4", "aten.topk.default", {xt, int64_t{4}, int64_t{0}, false, true});
  both("all", "aten.topk.default", {x, int64_t{13}, int64_t{1}, true, false});
  if (d == DType::I64) {  // beyond 2^53, neighbours differ where doubles would tie
    both("huge", "aten.sort.default",
         {b.op("aten.add.Tensor", {xt, int64_t{1} << 60}), int64_t{0}, false});
  }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "sort and topk run as kernels";
}

// Long lines (1201 along dim 1, 700 down a strided dim 0, 4099 in one line; many ties and
// NaNs, both directions) through the merge tree: chunks of 256 and 512 (the last one short),
// levels with an odd run count (a run without a partner), runs capped at k (1, 50, 100) and
// growing to a k that is no power of two (1000), sorts of 1, 2 and 5 levels; topk 20 of 700
// in one round.
TEST_P(CompiledScanSort, LongLinesSortAndTopkByMergeTree) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  ValueRef x = b.op("aten.round.default",
                    {input(b, "x", TensorType::contiguous(d, {2, 1201}), Range{-40, 40})});
  if (is_floating(d))
    x = b.op("aten.where.self", {b.op("aten.gt.Scalar", {x, 38.5}), std::nan(""), x});
  const ValueRef xt = input(b, "xt", TensorType{d, {700, 3}, {1, 700}}, Range{-40, 40});
  auto both = [&](const std::string& label, const std::string& op, std::vector<ArgValue> args) {
    for (ValueRef v : b.ops(op, std::move(args), {}, label)) b.output(v);
  };
  both("top1", "aten.topk.default", {x, int64_t{1}, int64_t{-1}, true, true});
  both("top50", "aten.topk.default", {x, int64_t{50}, int64_t{1}, true, true});
  both("bottom100", "aten.topk.default", {x, int64_t{100}, int64_t{1}, false, true});
  both("dim0_top20", "aten.topk.default", {xt, int64_t{20}, int64_t{0}, true, true});
  both("sorted_descending", "aten.sort.default", {x, int64_t{1}, true});
  both("sorted_ascending", "aten.sort.default", {x, int64_t{1}, false});  // NaNs last
  both("sorted_dim0", "aten.sort.default", {xt, int64_t{0}, false});
  // Five levels with a k that grows past a chunk: one float, one half-width and one integer
  // dtype (the others differ from them only in loads and casts, covered above).
  if (d == DType::F32 || d == DType::BF16 || d == DType::I64) {
    const ValueRef one = b.op("aten.round.default",
                              {input(b, "one", TensorType::contiguous(d, {4099}), Range{-90, 90})});
    both("one_top1000", "aten.topk.default", {one, int64_t{1000}, int64_t{0}, false, true});
    both("one_sorted", "aten.sort.default", {one, int64_t{0}, true});
  }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

// The lines above take the merge tree with the chunks their comment names; short lines and
// few kept elements of short lines rank in one round; a vocabulary-wide topk and sort take
// chunks of 32 (11 levels).
TEST(MergeTreeChunk, ByLineLengthKeptElementsAndLines) {
  EXPECT_EQ(merge_tree_chunk(1201, 50, 2), 256);
  EXPECT_EQ(merge_tree_chunk(1201, 1201, 2), 512);
  EXPECT_EQ(merge_tree_chunk(700, 700, 3), 512);
  EXPECT_EQ(merge_tree_chunk(4099, 1000, 1), 256);
  EXPECT_EQ(merge_tree_chunk(700, 20, 3), 0);
  EXPECT_EQ(merge_tree_chunk(13, 13, 4), 0);
  EXPECT_EQ(merge_tree_chunk(50257, 50, 8), 32);
  EXPECT_EQ(merge_tree_chunk(50257, 50257, 8), 32);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledScanSort,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16,
                                           DType::I64, DType::I32, DType::U8),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
