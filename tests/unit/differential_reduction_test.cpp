// Reductions compiled by cpp_openmp against the oracle: every kind, inner and outer and
// several dims, keepdim, rows shorter and longer than a vector, the split reduction over
// few long rows, empty dims, transposed inputs, and the dtypes each kind takes.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledReductionFloat : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledReductionFloat, EveryKindOverInnerOuterAndSeveralDims) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {6, 5, 19}), Range{-2, 2});
  const ValueRef xt = input(b, "xt", TensorType{d, {6, 5, 19}, {1, 6 * 19, 6}}, Range{-2, 2});
  const ValueRef small = input(b, "small", TensorType::contiguous(d, {3, 7}), Range{0.5, 1.5});
  for (const auto& [label, dims] :
       std::vector<std::pair<std::string, ints>>{{"inner", {-1}},
                                                 {"outer", {0}},
                                                 {"middle", {1}},
                                                 {"two", {0, 2}},
                                                 {"trailing", {1, 2}}}) {
    output_of(b, "sum_" + label, "aten.sum.dim_IntList", {x, dims, false});
    output_of(b, "amax_" + label, "aten.amax.default", {x, dims, true});
    output_of(b, "amin_" + label, "aten.amin.default", {xt, dims, false});
    output_of(b, "mean_" + label, "aten.mean.dim", {xt, dims, true});
    output_of(b, "var_" + label, "aten.var.correction", {x, dims}, {{"correction", int64_t{1}}});
  }
  output_of(b, "sum_all", "aten.sum.default", {x});
  output_of(b, "prod", "aten.prod.dim_int", {small, 1});
  output_of(b, "argmax", "aten.argmax.default", {x, -1, false});
  output_of(b, "argmax_outer", "aten.argmax.default", {xt, 0, true});
  output_of(b, "argmin", "aten.argmin.default", {x, 1, false});
  output_of(b, "any", "aten.any.dims", {b.op("aten.gt.Scalar", {x, 1.5}), ints{-1}, false});
  output_of(b, "var_mean", "aten.var_mean.correction", {x, ints{-1}},
            {{"correction", int64_t{0}}, {"keepdim", true}});
  output_of(b, "std", "aten.std.correction", {x, ints{2}}, {{"correction", int64_t{1}}});
  output_of(b, "softmax", "aten._softmax.default", {x, -1, false});
  output_of(b, "softmax_outer", "aten._softmax.default", {xt, 0, false});
  output_of(b, "log_softmax", "aten._log_softmax.default", {x, 1, false});
  output_of(b, "logsumexp", "aten.logsumexp.default", {x, ints{-1}, false});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

// Few distinct values (ties everywhere) and NaNs: the first extreme wins ties and the first NaN
// wins outright, whichever vector lane or scalar tail saw it (rows of 37: vectors and a tail;
// all of a 6x13 tensor: each row's tail comes before the next row's vectors).
TEST_P(CompiledReductionFloat, ArgExtremaTiesAndNaNs) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef r =
      b.op("aten.round.default", {input(b, "x", TensorType::contiguous(d, {5, 37}), Range{-3, 3})});
  const ValueRef x = b.op("aten.where.self", {b.op("aten.gt.Scalar", {r, 2.5}), std::nan(""), r});
  const ValueRef ties =
      b.op("aten.round.default", {input(b, "t", TensorType::contiguous(d, {6, 13}), Range{-2, 2})});
  output_of(b, "argmax_nan", "aten.argmax.default", {x, 1, false});
  output_of(b, "argmin_nan", "aten.argmin.default", {x, -1, true});
  output_of(b, "argmax_ties", "aten.argmax.default", {r, 1, false});
  output_of(b, "argmin_ties", "aten.argmin.default", {r, 1, false});
  output_of(b, "argmax_all", "aten.argmax.default", {ties});
  output_of(b, "argmin_all", "aten.argmin.default", {ties});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledReductionFloat,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

class CompiledReductionInt : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledReductionInt, SumExtremaAndArgExtremaAreExact) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {9, 23}), Range{0, 100});
  output_of(b, "sum", "aten.sum.dim_IntList", {x, ints{-1}, false});  // promotes to i64
  output_of(b, "sum_outer", "aten.sum.dim_IntList", {x, ints{0}, true});
  output_of(b, "amax", "aten.amax.default", {x, ints{-1}, false});
  output_of(b, "amin", "aten.amin.default", {x, ints{0}, false});
  output_of(b, "argmax", "aten.argmax.default", {x, 1, false});
  output_of(b, "argmin", "aten.argmin.default", {x, 0, false});
  output_of(b, "mean_f", "aten.mean.dim", {b.cast(x, DType::F32), ints{-1}, false});
  check(b);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledReductionInt,
                         ::testing::Values(DType::U8, DType::I16, DType::I32, DType::I64),
                         DTypeName());

using CompiledReductionShapes = Differential;

// Few rows and long ones take the split reduction; a prime row length leaves a vector tail.
TEST_F(CompiledReductionShapes, SplitReductionsOverFewLongRows) {
  GraphBuilder b = builder();
  // Positive values: a sum that cancels to near zero would need a tolerance scaled by the
  // sum of magnitudes rather than by the result.
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {2, 100003}), Range{0, 1});
  const ValueRef v = input(b, "v", TensorType::contiguous(DType::F32, {65537}), Range{0, 1});
  output_of(b, "sum", "aten.sum.dim_IntList", {x, ints{-1}, false});
  output_of(b, "amax", "aten.amax.default", {x, ints{-1}, false});
  output_of(b, "argmax", "aten.argmax.default", {x, -1, false});
  output_of(b, "mean", "aten.mean.dim", {v, ints{0}, false});
  output_of(b, "var", "aten.var.correction", {v, ints{0}}, {{"correction", int64_t{1}}});
  output_of(b, "softmax", "aten._softmax.default", {x, 1, false});
  check(b);
}

// Rows whose exps take 64-256 KiB: kept in the row array where the core's L2 is 1 MiB or
// more, recomputed elsewhere; either way the normalizing walk must read back what it wrote.
TEST_F(CompiledReductionShapes, SoftmaxOverVocabularyRows) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 40003}), Range{-8, 8});
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::BF16, {3, 32000}), Range{-8, 8});
  output_of(b, "softmax", "aten._softmax.default", {x, 1, false});
  output_of(b, "softmax_bf16", "aten._softmax.default", {h, -1, false});
  check(b);
}

// Rows that stay whole (not split into partial kernels, however few), so that each is one
// kernel walking its rows.
class CompiledWholeRows : public Differential {
 protected:
  void SetUp() override {
    ScheduleOptions whole;
    whole.split_rows_below = 0;
    set_schedule(whole);
  }
};

// Multi-pass rows whose elements do not deal evenly round the row's threads: a GPU keeps
// them in registers anyway, and the threads whose last step lies past the row's end must
// neither count nor store it (lit gpu/ptx_persistent.test shows the code). Rows of 1000 go
// a warp each in runs of 4 (f32) or 8 (bf16), 777 and 999 one element at a time, 5000 a
// block each; the rows stay whole (not split) so that each is one persistent kernel.
TEST_F(CompiledWholeRows, PersistentRowsWithUnevenTails) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {40, 1000}), Range{-8, 8});
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::BF16, {40, 1000}), Range{-8, 8});
  const ValueRef y = input(b, "y", TensorType::contiguous(DType::F16, {35, 777}), Range{-3, 3});
  const ValueRef w = input(b, "w", TensorType::contiguous(DType::F16, {777}));
  const ValueRef bias = input(b, "bias", TensorType::contiguous(DType::F16, {777}));
  const ValueRef v = input(b, "v", TensorType::contiguous(DType::F32, {33, 999}), Range{-2, 2});
  const ValueRef z = input(b, "z", TensorType::contiguous(DType::F32, {33, 5000}), Range{-8, 8});
  output_of(b, "softmax", "aten._softmax.default", {x, 1, false});
  output_of(b, "softmax_bf16", "aten._softmax.default", {h, -1, false});
  output_of(b, "layer_norm_f16", "aten.layer_norm.default", {y, ints{777}, w, bias, 1e-5});
  // Rows of 20 on a warp: lanes 20-31 hold nothing (an empty Welford state each).
  const ValueRef s = input(b, "s", TensorType::contiguous(DType::F32, {64, 20}), Range{-3, 3});
  const ValueRef sw = input(b, "sw", TensorType::contiguous(DType::F32, {20}));
  const ValueRef sb = input(b, "sb", TensorType::contiguous(DType::F32, {20}));
  output_of(b, "layer_norm_short", "aten.layer_norm.default", {s, ints{20}, sw, sb, 1e-5});
  output_of(b, "var_mean", "aten.var_mean.correction", {v, ints{-1}},
            {{"correction", int64_t{1}}, {"keepdim", true}});
  output_of(b, "log_softmax", "aten._log_softmax.default", {z, 1, false});
  output_of(b, "centered_argmax", "aten.argmax.default",
            {b.op("aten.sub.Tensor", {z, b.op("aten.mean.dim", {z, ints{1}, true})}), 1, false});
  check(b);
}

// Rows too long and odd to keep in registers: a GPU finds the max and the sum of
// exp(x - max) in one online walk, rescaling the sum when the max grows (lit
// gpu/ptx_online_softmax.test). Masks leave threads whose first elements are -inf, rows
// with a single finite stretch, and (where the row's `r` > 0.9) rows of -inf alone, NaN in
// every output as in the oracle; a +inf logit makes its row NaN (about half the rows of
// `spiked` hold one). Each output reads its own input, so that each is its own kernel (a
// kernel with several sums does not fold).
TEST_F(CompiledWholeRows, OnlineSoftmaxOverLongMaskedRows) {
  GraphBuilder b = builder();
  const double inf = std::numeric_limits<double>::infinity();
  auto logits = [&](const std::string& name) {
    return input(b, name, TensorType::contiguous(DType::F32, {40, 20011}), Range{-8, 8});
  };
  auto masked = [&](const std::string& name) {
    const ValueRef x = logits(name);
    const ValueRef r =
        input(b, name + "_r", TensorType::contiguous(DType::F32, {40, 1}), Range{0, 1});
    const ValueRef drop = b.op("aten.logical_or.default", {b.op("aten.lt.Scalar", {x, 6.0}),
                                                           b.op("aten.gt.Scalar", {r, 0.9})});
    return b.op("aten.where.self", {drop, -inf, x});
  };
  const ValueRef s = logits("s");
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::BF16, {36, 30011}), Range{-8, 8});
  output_of(b, "softmax", "aten._softmax.default", {logits("x"), 1, false});
  output_of(b, "masked_softmax", "aten._softmax.default", {masked("m"), -1, false});
  output_of(b, "masked_log_softmax", "aten._log_softmax.default", {masked("l"), 1, false});
  const ValueRef spiked = b.op("aten.where.self", {b.op("aten.gt.Scalar", {s, 7.9995}), inf, s});
  output_of(b, "spiked_softmax", "aten._softmax.default", {spiked, 1, false});
  output_of(b, "log_softmax_bf16", "aten._log_softmax.default", {h, -1, false});
  check(b);
}

// Softmax and log-softmax over an outer dim, large enough that the column form's last pass
// runs row-major over whole rows (codegen/column_row_major.test): odd sizes, an outer dim
// before the reduced one, bf16.
TEST_F(CompiledReductionShapes, OuterDimSoftmaxWithARowMajorLastPass) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {301, 133}));
  const ValueRef y = input(b, "y", TensorType::contiguous(DType::F32, {3, 257, 67}));
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::BF16, {259, 131}));
  output_of(b, "softmax_dim0", "aten._softmax.default", {x, 0, false});
  output_of(b, "softmax_middle", "aten._softmax.default", {y, 1, false});
  output_of(b, "log_softmax_bf16", "aten._log_softmax.default", {h, 0, false});
  check(b);
}

// Reductions over the outer dim of gathered rows (embedding rows, picked per step): each
// pass over them (softmax: max, sum, then the quotient) keeps its own step table; 150
// columns make several groups of vectors and a tail at any vector width.
TEST_F(CompiledReductionShapes, OuterDimReductionsOverGatheredRows) {
  GraphBuilder b = builder();
  const ValueRef table = input(b, "table", TensorType::contiguous(DType::F32, {50, 150}));
  const ValueRef ids = input(b, "ids", TensorType::contiguous(DType::I64, {301}), Range{0, 49});
  const ValueRef rows = b.op("aten.embedding.default", {table, ids});
  output_of(b, "softmax_rows", "aten._softmax.default", {rows, 0, false});
  output_of(b, "log_softmax_rows", "aten._log_softmax.default", {rows, 0, false});
  output_of(b, "sum_rows", "aten.sum.dim_IntList", {rows, ints{0}, false});
  // Picked rows times a gather whose index moves along the outputs: the step table prefetches
  // the picked rows only (the gather's row numbers are per output, not per step).
  const ValueRef table2 = input(b, "table2", TensorType::contiguous(DType::F32, {40, 150}));
  const ValueRef idx2 =
      input(b, "idx2", TensorType::contiguous(DType::I64, {301, 150}), Range{0, 39});
  const ValueRef gathered = b.op("aten.gather.default", {table2, int64_t{0}, idx2});
  output_of(b, "sum_rows_times_gathered", "aten.sum.dim_IntList",
            {b.op("aten.mul.Tensor", {rows, gathered}), ints{0}, false});
  check(b);
}

// Signed terms that cancel: the sums land near zero while the sum of |terms| is large, so
// only the reduction-aware bound (sqrt(n) * u * sum|terms|) can judge them fairly, and a
// kernel that drops or repeats a term still fails it. Odd lengths leave vector tails.
TEST_F(CompiledReductionShapes, LongSignedSumsThatCancel) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {3, 50021}), Range{-1, 1});
  const ValueRef c = input(b, "c", TensorType::contiguous(DType::F32, {4099, 5}), Range{-1, 1});
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::F16, {4, 4099}), Range{-1, 1});
  const ValueRef bf = input(b, "bf", TensorType::contiguous(DType::BF16, {4, 4099}), Range{-1, 1});
  output_of(b, "sum_rows", "aten.sum.dim_IntList", {x, ints{-1}, false});
  output_of(b, "sum_all", "aten.sum.dim_IntList", {x, ints{0, 1}, false});
  output_of(b, "mean_rows", "aten.mean.dim", {x, ints{-1}, false});
  output_of(b, "sum_columns", "aten.sum.dim_IntList", {c, ints{0}, false});
  output_of(b, "var_columns", "aten.var.correction", {c, ints{0}}, {{"correction", int64_t{1}}});
  output_of(b, "sum_f16", "aten.sum.dim_IntList", {h, ints{-1}, false});
  output_of(b, "sum_bf16", "aten.sum.dim_IntList", {bf, ints{-1}, false});
  output_of(b, "dot_rows", "aten.sum.dim_IntList",
            {b.op("aten.mul.Tensor", {x, x}), ints{-1}, false});
  // dtype= casts the input first: terms in (-1, 1) are all true as bools (found by GraphFuzz,
  // seed 20261180: they were truncated to 0 and summed to false).
  output_of(b, "sum_as_bool", "aten.sum.dim_IntList", {x, ints{-1}, false},
            {{"dtype", DType::Bool}});
  output_of(b, "sum_as_f16", "aten.sum.dim_IntList", {c, ints{0}, false}, {{"dtype", DType::F16}});
  check(b);
}

TEST_F(CompiledReductionShapes, EmptyAndSizeOneDims) {
  GraphBuilder b = builder();
  const ValueRef e = input(b, "e", TensorType::contiguous(DType::F32, {4, 0}));
  const ValueRef rows0 = input(b, "rows0", TensorType::contiguous(DType::F32, {0, 5}));
  const ValueRef one = input(b, "one", TensorType::contiguous(DType::F32, {3, 1}));
  output_of(b, "sum_empty_rows", "aten.sum.dim_IntList", {e, ints{-1}, false});
  output_of(b, "prod_empty_rows", "aten.prod.dim_int", {e, 1});
  output_of(b, "mean_empty_rows", "aten.mean.dim", {e, ints{-1}, false});  // NaN, as PyTorch
  output_of(b, "sum_no_rows", "aten.sum.dim_IntList", {rows0, ints{-1}, false});
  output_of(b, "amax_no_rows", "aten.amax.default", {rows0, ints{-1}, true});
  output_of(b, "sum_one", "aten.sum.dim_IntList", {one, ints{-1}, false});
  output_of(b, "softmax_one", "aten._softmax.default", {one, 1, false});
  output_of(b, "var_one", "aten.var.correction", {one, ints{-1}}, {{"correction", int64_t{0}}});
  output_of(b, "argmax_one", "aten.argmax.default", {one, 1, false});
  check(b);
}

}  // namespace
}  // namespace kiln::test
