// Inlining of pointwise producers, against the oracle: producers read through masks (pad,
// cat), through indirect loads (computed indices and computed tables), through transposes
// and broadcasts, by reductions, in half precision (the stored rounding must survive), and
// by many readers (kept as a buffer). Differential::check runs fused and unfused.
#include <gmock/gmock.h>

#include <string>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

using CompiledFusion = Differential;

TEST_F(CompiledFusion, ChainsBecomeOneKernel) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {37, 129}));
  b.output(b.op("aten.sin.default", {b.op("aten.cos.default", {x})}));
  const CompileStats st = check(b);
  EXPECT_EQ(st.kernels, 1u);
  EXPECT_EQ(st.inlined, 1u);
}

TEST_F(CompiledFusion, ProducersUnderMasksTransposesAndBroadcasts) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {9, 13}));
  const ValueRef y = input(b, "y", TensorType::contiguous(DType::F32, {13}));
  // Each producer has at most 4 readers, so each is inlined into all of them.
  const ValueRef e = b.op("aten.exp.default", {x});
  const ValueRef s = b.op("aten.sigmoid.default", {x});
  const ValueRef v = b.op("aten.tanh.default", {y});
  // Reads beyond the producer's range are masked: the pad value, not a stray load.
  output_of(b, "pad", "aten.constant_pad_nd.default", {e, ints{2, 3, 1, 1}, -7.5});
  output_of(b, "cat", "aten.cat.default", {TensorList{{e, b.mul(x, 2.0)}}, 0});
  output_of(
      b, "transposed", "aten.add.Tensor",
      {b.op("aten.permute.default", {s, ints{1, 0}}), b.op("aten.unsqueeze.default", {v, 1})});
  output_of(b, "broadcast", "aten.mul.Tensor", {x, v});
  output_of(b, "reduced", "aten.sum.dim_IntList", {b.mul(s, v), ints{-1}, false});
  output_of(b, "reduced_outer", "aten.amax.default", {b.sub(s, 1.0), ints{0}, true});
  const CompileStats st = check(b);
  EXPECT_GE(st.inlined, 3u);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_F(CompiledFusion, ComputedIndicesAndTables) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {7, 11}));
  const ValueRef table = input(b, "table", TensorType::contiguous(DType::F32, {13, 6}));
  const ValueRef i = input(b, "i", TensorType::contiguous(DType::I64, {7, 4}), Range{0, 5});
  // Indices computed by a producer (i + 3 stays in range), a table computed by one.
  const ValueRef shifted = b.add(i, int64_t{3});
  output_of(b, "gather", "aten.gather.default", {b.op("aten.neg.default", {x}), 1, shifted});
  output_of(b, "embedding", "aten.embedding.default", {b.mul(table, 0.5), shifted});
  // An indirect producer read through a pad's mask stays a buffer.
  output_of(b, "padded_gather", "aten.constant_pad_nd.default",
            {b.op("aten.gather.default", {x, 1, shifted}), ints{1, 1}, 0.0});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_F(CompiledFusion, IntegerDivisionUnderAMaskIsNotInlined) {
  // cat masks each part; an inlined a // b would divide placeholder zeros off-mask.
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(DType::I64, {6, 5}), Range{-50, 50});
  const ValueRef d = input(b, "d", TensorType::contiguous(DType::I64, {6, 5}), Range{1, 9});
  const ValueRef c = input(b, "c", TensorType::contiguous(DType::I64, {3, 5}), Range{-9, 9});
  output_of(b, "cat", "aten.cat.default",
            {TensorList{{b.op("aten.floor_divide.default", {a, d}), c}}, 0});
  output_of(b, "cat_mod", "aten.cat.default",
            {TensorList{{c, b.op("aten.remainder.Tensor", {a, d})}}, 0});
  check(b);
}

TEST_F(CompiledFusion, IndexChecksSeeEveryElementEvenWhenPartlyRead) {
  // The gather's bad index sits in a row the slice never reads; it is still an error, as
  // it is without fusion.
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {4, 6}));
  const ValueRef good = input(b, "good", TensorType::contiguous(DType::I64, {1, 3}), Range{0, 6});
  const ValueRef bad = input(b, "bad", TensorType::contiguous(DType::I64, {3, 3}), Range{40, 50});
  const ValueRef i = b.op("aten.cat.default", {TensorList{{good, bad}}, 0});
  const ValueRef g = b.op("aten.gather.default", {x, 1, i});
  output_of(b, "head", "aten.slice.Tensor", {g, 0, int64_t{0}, int64_t{0}, int64_t{1}});
  EXPECT_THAT(run_error(b), ::testing::HasSubstr("out of range"));
}

TEST_F(CompiledFusion, EmptyRowsWithALongInnerDim) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {0, 9001}));
  output_of(b, "y", "aten.sin.default", {b.op("aten.cos.default", {x})});
  check(b);
}

TEST_F(CompiledFusion, HalfPrecisionProducersKeepTheirRounding) {
  for (const DType d : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    GraphBuilder b = builder();
    const ValueRef x = input(b, "x", TensorType::contiguous(d, {17, 33}), Range{-3, 3});
    // exp in half precision, then a subtraction that exposes whether exp was rounded.
    const ValueRef e = b.op("aten.exp.default", {x});
    output_of(b, "diff", "aten.sub.Tensor", {b.mul(e, 3.0), e});
    output_of(b, "to_f32", "aten._to_copy.default", {e}, {{"dtype", DType::F32}});
    check(b);
  }
}

TEST_F(CompiledFusion, FewLongRowsCutTheInnerDimIntoChunks) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {100003}));
  const ValueRef y = input(b, "y", TensorType::contiguous(DType::F32, {3, 50001}));
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::BF16, {2, 40009}));
  output_of(b, "one_dim", "aten.sin.default", {b.op("aten.cos.default", {x})});
  output_of(b, "rows", "aten.mul.Tensor", {b.op("aten.exp.default", {y}), 0.5});
  output_of(b, "half", "aten.add.Tensor", {h, 1.0});
  output_of(b, "var", "aten.var.correction", {y, ints{-1}}, {{"correction", int64_t{1}}});
  check(b);
}

TEST_F(CompiledFusion, TransposedReadsWalkInTilesWithPartialEdges) {
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(DType::F32, {70, 130}));
  const ValueRef at = input(b, "at", TensorType::contiguous(DType::F32, {130, 70}));
  const ValueRef c = input(b, "c", TensorType::contiguous(DType::F16, {3, 41, 67}));
  output_of(b, "a_plus_at", "aten.add.Tensor", {a, b.op("aten.permute.default", {at, ints{1, 0}})});
  output_of(b, "self_transpose", "aten.add.Tensor",
            {at, b.op("aten.permute.default", {b.op("aten.exp.default", {a}), ints{1, 0}})});
  output_of(b, "batched", "aten.mul.Tensor",
            {b.op("aten.permute.default", {c, ints{0, 2, 1}}), 2.0});
  check(b);
}

// Too many readers to recompute the exp in each: it is not inlined, but its readers then merge
// with it into one kernel that computes it once per element.
TEST_F(CompiledFusion, ManyReadersComputeTheProducerOnce) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 7}));
  const ValueRef e = b.op("aten.exp.default", {x});
  for (int k = 0; k < 6; ++k)
    output_of(b, "r" + std::to_string(k), "aten.mul.Tensor", {e, k + 1.0});
  const CompileStats st = check(b);
  EXPECT_EQ(st.kernels, 1u);
  EXPECT_EQ(st.inlined, 0u);
}

}  // namespace
}  // namespace kiln::test
