// Kernel merges against the oracle: several reductions over the same rows with their
// elementwise epilogue in one kernel (softmax, layer norm, log-softmax with a gather), rows
// of odd length and reductions over an outer dim (the epilogue's loops reordered to match),
// reshapes between a reduction and its epilogue, horizontal siblings, argmax next to a sum,
// half precision, and scatter on a constant (one-hot) with its index checks. Differential::check
// runs each graph fused and unfused, outputs poisoned.
#include <gmock/gmock.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

using ::testing::HasSubstr;
using CompiledRowFusion = Differential;

TEST_F(CompiledRowFusion, SoftmaxAndLayerNormBecomeOneKernelEach) {
  for (DType d : {DType::F32, DType::BF16, DType::F64}) {
    GraphBuilder b = builder();
    const ValueRef x = input(b, "x", TensorType::contiguous(d, {37, 301}));
    output_of(b, "softmax", "aten._softmax.default", {x, -1, false});
    const CompileStats one = check(b);
    EXPECT_EQ(one.kernels, 1u) << dtype_name(d);
    GraphBuilder n = builder();
    const ValueRef y = input(n, "y", TensorType::contiguous(d, {41, 67}));
    const ValueRef w = input(n, "w", TensorType::contiguous(d, {67}));
    const ValueRef bias = input(n, "bias", TensorType::contiguous(d, {67}));
    output_of(n, "layer_norm", "aten.layer_norm.default", {y, ints{67}, w, bias, 1e-5});
    EXPECT_EQ(check(n).kernels, 1u) << dtype_name(d);
  }
}

TEST_F(CompiledRowFusion, ReductionsOverOuterDimsAndStridedRows) {
  GraphBuilder b = builder();
  const Shape s{23, 41};
  // Positive, so no column sums to nearly zero: x / x.sum(0) would then magnify the sum's
  // rounding past any f32 tolerance (seen at KILN_TEST_SEED=15387783413741273348).
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, s), Range{0.5, 1.5});
  const ValueRef xt = input(b, "xt", TensorType{DType::F32, s, permuted_strides(s, {1, 0})});
  // Softmax over dim 0: the epilogue walks [23, 41] while the reduction's rows are columns.
  output_of(b, "softmax_dim0", "aten._softmax.default", {x, 0, false});
  output_of(b, "softmax_transposed", "aten._softmax.default", {xt, -1, false});
  // x / x.sum(0): the sum's rows are the epilogue's inner dim.
  output_of(b, "normalized_columns", "aten.div.Tensor",
            {x, b.op("aten.sum.dim_IntList", {x, ints{0}, true})});
  check(b);
}

TEST_F(CompiledRowFusion, ReshapeBetweenReductionAndEpilogue) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {3, 5, 33}));
  const ValueRef m = b.op("aten.amax.default", {x, ints{-1}, true});
  const ValueRef centered = b.sub(x, m);
  // The epilogue sees [15, 33]: its first dim is the reduction's two row dims.
  output_of(b, "flat", "aten.exp.default", {b.op("aten.view.default", {centered, ints{15, 33}})});
  check(b);
}

TEST_F(CompiledRowFusion, SiblingsArgmaxAndChainedReductions) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {29, 53}));
  output_of(b, "sum", "aten.sum.dim_IntList", {x, ints{-1}, false});
  output_of(b, "argmax", "aten.argmax.default", {x, -1, false});
  output_of(b, "max", "aten.amax.default", {x, ints{-1}, false});
  // A variance from a mean: two reductions, the second reading the first's result.
  const ValueRef mean = b.op("aten.mean.dim", {x, ints{-1}, true});
  const ValueRef d = b.sub(x, mean);
  output_of(b, "var", "aten.mean.dim", {b.mul(d, d), ints{-1}, false});
  output_of(b, "log_softmax", "aten._log_softmax.default", {x, -1, false});
  check(b);
}

TEST_F(CompiledRowFusion, FewRowsKeepTheEpilogueApart) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {3, 999}));
  output_of(b, "softmax", "aten._softmax.default", {x, -1, false});
  const CompileStats st = check(b);
  EXPECT_GT(st.kernels, 1u);  // 3 rows < min_fused_rows: the epilogue runs over all elements
  bool few_rows = false;
  for (const FusionFailure& f : st.failures)
    few_rows = few_rows || f.category == FusionCategory::FewRows;
  EXPECT_TRUE(few_rows);
}

TEST_F(CompiledRowFusion, ScatterOnAConstantIsElementwise) {
  for (DType d : {DType::F32, DType::BF16, DType::I64}) {
    GraphBuilder b = builder();
    const ValueRef logits = input(b, "logits", TensorType::contiguous(DType::F32, {33, 101}));
    // Negative indices count from the end, as in the oracle.
    const ValueRef labels =
        input(b, "labels", TensorType::contiguous(DType::I64, {33, 1}), Range{-101, 101});
    const ValueRef zeros = b.op("aten.full.default", {ints{33, 101}, 0.0}, {{"dtype", d}});
    const ValueRef one_hot = b.op("aten.scatter.value", {zeros, 1, labels, 1.0});
    output_of(b, "one_hot", "aten.add.Tensor", {one_hot, int64_t{2}});
    const ValueRef src = input(b, "src", TensorType::contiguous(DType::F32, {33, 4}));
    output_of(b, "scatter_src", "aten.scatter.src",
              {b.op("aten.full.default", {ints{33, 101}, -3.0}), 1, labels, src});
    const ValueRef picked =
        b.mul(b.op("aten._log_softmax.default", {logits, 1, false}),
              b.op("aten.scatter.value",
                   {b.op("aten.full.default", {ints{33, 101}, 0.0}), 1, labels, 1.0}));
    output_of(b, "nll", "aten.sum.dim_IntList", {picked, ints{1}, false});
    const CompileStats st = check(b);
    EXPECT_EQ(st.host_steps, 0u) << dtype_name(d);
  }
}

TEST_F(CompiledRowFusion, ScatterIndexOutOfRangeIsAnError) {
  GraphBuilder b = builder();
  const ValueRef labels =
      input(b, "labels", TensorType::contiguous(DType::I64, {6, 1}), Range{200, 300});
  const ValueRef zeros = b.op("aten.full.default", {ints{6, 40}, 0.0});
  output_of(b, "sum", "aten.sum.dim_IntList",
            {b.op("aten.scatter.value", {zeros, 1, labels, 1.0}), ints{1}, false});
  EXPECT_THAT(run_error(b), HasSubstr("out of range"));
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

using CompiledInPlace = Differential;

// A merged kernel stores one output before it loads a dying temporary of the same size: that
// temporary must not become the output's storage (found by review; the output read back its
// own values).
TEST_F(CompiledInPlace, AStoreBeforeTheLoadIsNotInPlace) {
  GraphBuilder b = builder();
  const ValueRef p = input(b, "p", TensorType::contiguous(DType::F32, {24, 9}));
  const ValueRef q = input(b, "q", TensorType::contiguous(DType::F32, {9, 40}));
  const ValueRef u = input(b, "u", TensorType::contiguous(DType::F32, {24, 40}));
  const ValueRef t = b.op("aten.mm.default", {p, q});
  const ValueRef e = b.op("aten.exp.default", {u});
  b.output(e);
  output_of(b, "greater", "aten.gt.Tensor", {t, e});
  check(b);
}

// Same bytes, different element sizes (f32[8] read, f64[4] written): not in place.
TEST_F(CompiledInPlace, DifferentElementSizesAreNotInPlace) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {8, 16}));
  // amax, not sum: exact in any order, so the f64 output compares at f64 tolerance.
  const ValueRef a = b.op("aten.amax.default", {x, ints{1}, false});
  const ValueRef head = b.op("aten.slice.Tensor", {a, 0, 0, 4});
  output_of(b, "wide", "aten._to_copy.default", {head}, {{"dtype", DType::F64}});
  check(b);
}

TEST_F(CompiledInPlace, EmptyDimsDoNotBreakLoopMatching) {
  GraphBuilder b = builder();
  const ValueRef e1 = input(b, "e1", TensorType::contiguous(DType::F32, {0, 7}));
  const ValueRef e2 = input(b, "e2", TensorType::contiguous(DType::F32, {0, 7}));
  const ValueRef row = input(b, "row", TensorType::contiguous(DType::F32, {1, 7}));
  output_of(b, "sum", "aten.add.Tensor", {e1, row});
  output_of(b, "product", "aten.mul.Tensor", {e2, row});
  check(b);
}

}  // namespace
}  // namespace kiln::test
