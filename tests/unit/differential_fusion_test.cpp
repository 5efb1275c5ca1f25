// Inlining of pointwise producers, against the oracle: producers read through masks (pad,
// cat), through indirect loads (computed indices and computed tables), through transposes
// and broadcasts, by reductions, in half precision (the stored rounding must survive), and
// by many readers (kept as a buffer). Differential::check runs fused and unfused.
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
  const ValueRef e = b.op("aten.exp.default", {x});
  const ValueRef v = b.op("aten.tanh.default", {y});
  // Reads beyond the producer's range are masked: the pad value, not a stray load.
  output_of(b, "pad", "aten.constant_pad_nd.default", {e, ints{2, 3, 1, 1}, -7.5});
  output_of(b, "cat", "aten.cat.default", {TensorList{{e, b.mul(x, 2.0)}}, 0});
  output_of(
      b, "transposed", "aten.add.Tensor",
      {b.op("aten.permute.default", {e, ints{1, 0}}), b.op("aten.unsqueeze.default", {v, 1})});
  output_of(b, "broadcast", "aten.mul.Tensor", {x, v});
  output_of(b, "reduced", "aten.sum.dim_IntList", {b.mul(e, v), ints{-1}, false});
  output_of(b, "reduced_outer", "aten.amax.default", {b.sub(e, 1.0), ints{0}, true});
  const CompileStats st = check(b);
  EXPECT_GT(st.inlined, 0u);
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

TEST_F(CompiledFusion, ManyReadersKeepTheProducerAsABuffer) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 7}));
  const ValueRef e = b.op("aten.exp.default", {x});
  for (int k = 0; k < 6; ++k)
    output_of(b, "r" + std::to_string(k), "aten.mul.Tensor", {e, k + 1.0});
  const CompileStats st = check(b);
  EXPECT_EQ(st.kernels, 7u);  // the shared exp, then one kernel per reader
}

}  // namespace
}  // namespace kiln::test
