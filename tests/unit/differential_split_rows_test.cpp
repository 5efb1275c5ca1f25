// Reductions over few long rows split into partial and final kernels
// (core/sched/split_long_rows.h), forced on with schedule.split_rows_below on whichever plugin
// the suite runs (GPUs split such rows by default): every splittable kind against the oracle,
// over inner, outer and middle dims, several levels (softmax, layer norm), Welford states,
// bf16 and f16, transposed inputs, and rows that cannot split.
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledSplitRows : public Differential {
 protected:
  void SetUp() override {
    ScheduleOptions s;
    s.split_rows_below = int64_t{1} << 20;  // every row count qualifies
    set_schedule(s);
  }
};

TEST_F(CompiledSplitRows, EveryKindAgainstTheOracle) {
  GraphBuilder b = builder();
  // 3072 = 6 chunks of 512: each row splits into as many chunks as it can.
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {3, 3072}), Range{-3, 3});
  const ValueRef near1 =
      input(b, "near1", TensorType::contiguous(DType::F32, {2, 1024}), Range{0.999, 1.001});
  output_of(b, "sum", "aten.sum.dim_IntList", {x, ints{-1}, false});
  output_of(b, "amax", "aten.amax.default", {x, ints{-1}, true});
  output_of(b, "amin", "aten.amin.default", {x, ints{1}, false});
  output_of(b, "mean", "aten.mean.dim", {x, ints{-1}, true});
  output_of(b, "prod", "aten.prod.dim_int", {near1, 1});
  output_of(b, "any", "aten.any.dims", {b.op("aten.gt.Scalar", {x, 2.99}), ints{-1}, false});
  output_of(b, "var", "aten.var.correction", {x, ints{-1}}, {{"correction", int64_t{1}}});
  output_of(b, "var_mean", "aten.var_mean.correction", {x, ints{-1}},
            {{"correction", int64_t{0}}, {"keepdim", true}});
  output_of(b, "std", "aten.std.correction", {x, ints{1}}, {{"correction", int64_t{1}}});
  output_of(b, "softmax", "aten._softmax.default", {x, -1, false});
  output_of(b, "log_softmax", "aten._log_softmax.default", {x, 1, false});
  output_of(b, "logsumexp", "aten.logsumexp.default", {x, ints{-1}, false});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_F(CompiledSplitRows, OuterMiddleAndTransposedRows) {
  GraphBuilder b = builder();
  const ValueRef cols =
      input(b, "cols", TensorType::contiguous(DType::F32, {2048, 7}), Range{-4, 4});
  const ValueRef mid =
      input(b, "mid", TensorType::contiguous(DType::F32, {2, 1536, 3}), Range{-4, 4});
  // The rows of `xt` lie across memory (a transposed [1024, 5]).
  const ValueRef xt = input(b, "xt", TensorType{DType::F32, {5, 1024}, {1, 5}}, Range{-4, 4});
  output_of(b, "softmax_outer", "aten._softmax.default", {cols, 0, false});
  output_of(b, "var_mean_outer", "aten.var_mean.correction", {cols, ints{0}},
            {{"correction", int64_t{1}}, {"keepdim", false}});
  output_of(b, "sum_outer", "aten.sum.dim_IntList", {cols, ints{0}, true});
  output_of(b, "softmax_middle", "aten._softmax.default", {mid, 1, false});
  output_of(b, "amax_middle", "aten.amax.default", {mid, ints{1}, false});
  output_of(b, "softmax_transposed", "aten._softmax.default", {xt, -1, false});
  output_of(b, "log_softmax_transposed", "aten._log_softmax.default", {xt, 1, false});
  EXPECT_EQ(check(b).host_steps, 0u);
}

TEST_F(CompiledSplitRows, HalfFloatsLayerNormAndMaskedSoftmax) {
  GraphBuilder b = builder();
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::BF16, {2, 4096}), Range{-8, 8});
  const ValueRef f = input(b, "f", TensorType::contiguous(DType::F16, {3, 2048}), Range{-2, 2});
  const ValueRef w = input(b, "w", TensorType::contiguous(DType::F16, {2048}), Range{0.5, 1.5});
  const ValueRef bias = input(b, "bias", TensorType::contiguous(DType::F16, {2048}), Range{-1, 1});
  output_of(b, "softmax_bf16", "aten._softmax.default", {h, -1, false});
  const std::vector<ValueRef> norm =
      b.ops("aten.native_layer_norm.default", {f, ints{2048}, w, bias, 1e-5});
  for (size_t i = 0; i < norm.size(); ++i) {
    b.output(norm[i]);
  }
  // A masked softmax: whole masked stretches of -inf inside a row (a chunk may hold no
  // finite value at all).
  const ValueRef s = input(b, "s", TensorType::contiguous(DType::F32, {2, 2048}), Range{-4, 4});
  const ValueRef keep = b.op("aten.lt.Scalar", {b.op("aten.abs.default", {s}), 3.9});
  output_of(
      b, "masked_softmax", "aten._softmax.default",
      {b.op("aten.where.self", {keep, s, -std::numeric_limits<double>::infinity()}), -1, false});
  EXPECT_EQ(check(b).host_steps, 0u);
}

// The folded sum where chunks hold no finite value: the last chunk of 512 of every row is
// -inf, row 2 is -inf throughout (NaN, as two passes give), row 3 holds a +inf (NaN).
TEST_F(CompiledSplitRows, SoftmaxChunksOfInfinities) {
  GraphBuilder b = builder();
  const double inf = std::numeric_limits<double>::infinity();
  const ValueRef s = input(b, "s", TensorType::contiguous(DType::F32, {4, 2048}), Range{-4, 4});
  const ValueRef col = b.op("aten.arange.start_step", {int64_t{0}, int64_t{2048}, int64_t{1}});
  const ValueRef row =
      b.op("aten.view.default",
           {b.op("aten.arange.start_step", {int64_t{0}, int64_t{4}, int64_t{1}}), ints{4, 1}});
  const ValueRef keep = b.op(
      "aten.logical_and.default",
      {b.op("aten.lt.Scalar", {col, int64_t{1536}}), b.op("aten.ne.Scalar", {row, int64_t{2}})});
  const ValueRef big = b.op(
      "aten.logical_and.default",
      {b.op("aten.eq.Scalar", {col, int64_t{700}}), b.op("aten.eq.Scalar", {row, int64_t{3}})});
  const ValueRef x = b.op("aten.where.self", {big, inf, b.op("aten.where.self", {keep, s, -inf})});
  output_of(b, "softmax", "aten._softmax.default", {x, -1, false});
  output_of(b, "log_softmax", "aten._log_softmax.default", {x, -1, false});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

// Rows gathered through an index (an embedding lookup inlined into the reduction, pdist's
// pair rows) are read through values of the body (tN in an index), which the split does not
// follow: such kernels stay whole, and right.
TEST_F(CompiledSplitRows, GatheredRowsStayWhole) {
  GraphBuilder b = builder();
  const ValueRef table = input(b, "table", TensorType::contiguous(DType::F32, {50, 2048}));
  const ValueRef ids = input(b, "ids", TensorType::contiguous(DType::I64, {64}), Range{0, 49});
  output_of(b, "sum", "aten.sum.dim_IntList",
            {b.op("aten.embedding.default", {table, ids}), ints{-1}, false});
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 4096}));
  output_of(b, "pdist", "aten._pdist_forward.default", {x, 2.0});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
  EXPECT_EQ(st.kernels, 2u);
}

// A softmax's max and its sum of exponentials share one partial kernel (each chunk's own max
// and sum) and one final kernel (the chunks' sums rescaled to the row's max), and its quotient
// is a pointwise kernel: three where there was one. A row that does not split (a prime
// length), argmax and a reduction over two dims stay single kernels.
TEST_F(CompiledSplitRows, KernelsThatSplitAndKernelsThatStay) {
  GraphBuilder b = builder();
  output_of(b, "softmax", "aten._softmax.default",
            {input(b, "x", TensorType::contiguous(DType::F32, {4, 2048})), -1, false});
  EXPECT_EQ(check(b).kernels, 3u);
  GraphBuilder stays = builder();
  const ValueRef p = input(stays, "p", TensorType::contiguous(DType::F32, {3, 4099}));
  output_of(stays, "sum_prime", "aten.sum.dim_IntList", {p, ints{-1}, false});
  EXPECT_EQ(check(stays).kernels, 1u);
  GraphBuilder arg = builder();
  output_of(arg, "argmax", "aten.argmax.default",
            {input(arg, "a", TensorType::contiguous(DType::F32, {2, 4096})), -1, false});
  EXPECT_EQ(check(arg).kernels, 1u);
}

}  // namespace
}  // namespace kiln::test
