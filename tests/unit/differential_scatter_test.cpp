// The scatter family as KIR `scatter` kernels against the reference: scatter_add and
// scatter_reduce (every reduce, with and without self) with repeated indices, index_put
// (accumulating and not, broadcast values, an index after a kept dim), embedding backward
// (padding row, gradients scaled by frequency), scatter into a non-constant; strided operands,
// a fused reader, and an out-of-range index reported as an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

using ::testing::HasSubstr;

class CompiledScatter : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledScatter, CombinesAreKernels) {
  const DType d = GetParam();
  const bool fp = is_floating(d);
  GraphBuilder b = builder();
  const Range values = fp ? Range{-2, 2} : Range{0, 5};
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  // A permutation of 0..n-1 along `dim` (the indices that sort random values): indices that
  // never repeat, for the writes whose duplicates have no defined winner.
  const auto permutation = [&](const std::string& name, Shape sizes, int64_t dim) {
    const ValueRef keys = input(b, name, TensorType::contiguous(DType::F32, std::move(sizes)));
    return b.ops("aten.sort.default", {keys, dim, false}).at(1);
  };
  const ValueRef self = input(b, "self", c({5, 7}), values);
  const ValueRef self_t = input(b, "self_t", TensorType{d, {5, 7}, {1, 5}}, values);
  const ValueRef src = input(b, "src", c({6, 9}), values);
  const ValueRef src_t = input(b, "src_t", TensorType{d, {4, 6}, {1, 4}}, values);
  // Repeated indices: 4 x 6 indices into 7 columns, 4 x 6 into 5 rows.
  const ValueRef cols = input(b, "cols", TensorType::contiguous(DType::I64, {4, 6}), Range{-7, 7});
  const ValueRef rows = input(b, "rows", TensorType::contiguous(DType::I64, {4, 6}), Range{0, 5});
  output_of(b, "scatter_add", "aten.scatter_add.default", {self, int64_t{1}, cols, src});
  output_of(b, "scatter_add_t", "aten.scatter_add.default", {self_t, int64_t{0}, rows, src_t});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      output_of(b, std::string(reduce) + (include_self ? "_self" : "_alone"),
                "aten.scatter_reduce.two", {self_t, int64_t{-1}, cols, src, std::string(reduce)},
                {{"include_self", include_self}});
    }
  }
  // index_put: rows repeated (accumulate), broadcast values, an index after a kept dim.
  const ValueRef picks = input(b, "picks", TensorType::contiguous(DType::I64, {9}), Range{-5, 5});
  output_of(b, "index_put_acc", "aten.index_put.default",
            {self, TensorList{{picks}}, input(b, "row_values", c({1, 7}), values), true});
  output_of(b, "index_put_cols_acc", "aten.index_put.default",
            {self_t, TensorList{{std::nullopt, cols}}, input(b, "v2", c({5, 4, 6}), values), true});
  const ValueRef unique_rows = b.op("aten.slice.Tensor", {permutation("perm", {5}, 0), int64_t{0},
                                                          int64_t{0}, int64_t{3}, int64_t{1}});
  output_of(b, "index_put", "aten.index_put.default",
            {self_t, TensorList{{unique_rows}}, input(b, "v3", c({7}), values), false});
  // scatter into a non-constant: each row's places are a permutation (no duplicates).
  const ValueRef places =
      b.op("aten.slice.Tensor",
           {permutation("perm_rows", {5, 7}, 1), int64_t{1}, int64_t{0}, int64_t{4}, int64_t{1}});
  output_of(b, "scatter_src", "aten.scatter.src", {self_t, int64_t{1}, places, src});
  output_of(b, "scatter_value", "aten.scatter.value", {self, int64_t{1}, places, 3});
  // masked_scatter: a mask broadcast over rows and a full one; a strided, larger source.
  const ValueRef mask_row = input(b, "mask_row", TensorType::contiguous(DType::Bool, {1, 7}));
  const ValueRef mask = input(b, "mask", TensorType{DType::Bool, {5, 7}, {1, 5}});
  output_of(b, "masked_scatter_row", "aten.masked_scatter.default", {self_t, mask_row, src});
  output_of(b, "masked_scatter", "aten.masked_scatter.default",
            {self, mask, input(b, "source_t", TensorType{d, {6, 7}, {1, 6}}, values)});
  // 9000 places: their positions are counted by a scan in segments (scan_lowering.h), the
  // last one partial.
  output_of(b, "masked_scatter_long", "aten.masked_scatter.default",
            {input(b, "long_self", c({90, 100}), values),
             input(b, "long_mask", TensorType::contiguous(DType::Bool, {90, 100})),
             input(b, "long_source", c({9000}), values)});
  // A reader fused after the scatter.
  output_of(b, "scatter_add_then_mul", "aten.mul.Tensor",
            {b.op("aten.scatter_add.default", {self, int64_t{0}, rows, src}), self_t});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "the scatter family runs as kernels";
}

TEST_P(CompiledScatter, EmbeddingBackwardIsAKernel) {
  const DType d = GetParam();
  if (!is_floating(d)) GTEST_SKIP() << "embedding gradients are floating point";
  GraphBuilder b = builder();
  const ValueRef grad = input(b, "grad", TensorType::contiguous(d, {3, 8, 6}), Range{-2, 2});
  const ValueRef grad_t = input(b, "grad_t", TensorType{d, {8, 5}, {1, 8}}, Range{-2, 2});
  const ValueRef tokens =
      input(b, "tokens", TensorType::contiguous(DType::I64, {3, 8}), Range{0, 11});
  const ValueRef tokens32 =
      input(b, "tokens32", TensorType::contiguous(DType::I32, {8}), Range{0, 4});
  output_of(b, "plain", "aten.embedding_dense_backward.default",
            {grad, tokens, int64_t{11}, int64_t{-1}, false});
  output_of(b, "padding", "aten.embedding_dense_backward.default",
            {grad, tokens, int64_t{13}, int64_t{2}, false});
  output_of(b, "by_frequency", "aten.embedding_dense_backward.default",
            {grad_t, tokens32, int64_t{4}, int64_t{0}, true});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_P(CompiledScatter, EmbeddingBagIsKernels) {
  const DType d = GetParam();
  if (!is_floating(d)) GTEST_SKIP() << "embedding tables are floating point";
  GraphBuilder b = builder();
  const ValueRef table = input(b, "table", TensorType::contiguous(d, {9, 6}), Range{-2, 2});
  const ValueRef table_t = input(b, "table_t", TensorType{d, {9, 5}, {1, 9}}, Range{-2, 2});
  const ValueRef flat = input(b, "flat", TensorType::contiguous(DType::I64, {13}), Range{0, 9});
  const ValueRef grid = input(b, "grid", TensorType::contiguous(DType::I32, {4, 3}), Range{-9, 9});
  const ValueRef weights = input(b, "weights", TensorType::contiguous(d, {13}), Range{-2, 2});
  // Bags of 1-D indices: an empty bag, and (include_last_offset) a tail in no bag.
  const ValueRef offsets = b.op("aten.arange.start_step", {int64_t{0}, int64_t{13}, int64_t{4}},
                                {{"dtype", DType::I64}});  // 0 4 8 12
  // 0 4 4 8 12: bag 1 is empty.
  const ValueRef four =
      b.op("aten.arange.start_step", {int64_t{4}, int64_t{5}, int64_t{1}}, {{"dtype", DType::I64}});
  const ValueRef with_empty =
      b.ops(
           "aten.sort.default",
           {b.op("aten.cat.default", {TensorList{{offsets, four}}, int64_t{0}}), int64_t{0}, false})
          .at(0);
  const auto bag = [&](const std::string& label, std::vector<ArgValue> args) {
    const auto outs = b.ops("aten._embedding_bag.default", std::move(args), {}, label);
    for (size_t k = 0; k < outs.size(); ++k) b.output(outs[k]);
  };
  bag("sum", {table, flat, offsets, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  bag("mean_pad", {table_t, flat, offsets, false, int64_t{1}, false, None{}, false, int64_t{3}});
  bag("max", {table, flat, offsets, false, int64_t{2}, false, None{}, true, int64_t{-1}});
  bag("weighted", {table, flat, offsets, false, int64_t{0}, false, weights, false, int64_t{2}});
  bag("grid_max_pad",
      {table_t, grid, offsets, false, int64_t{2}, false, None{}, false, int64_t{1}});
  bag("grid_mean", {table, grid, offsets, false, int64_t{1}, false, None{}, false, int64_t{-1}});
  bag("empty_bag_mean",
      {table, flat, with_empty, false, int64_t{1}, false, None{}, true, int64_t{-1}});
  bag("empty_bag_max",
      {table_t, flat, with_empty, false, int64_t{2}, false, None{}, false, int64_t{-1}});
  // 61 positions, kernels sum 16 at a time: bags of 0 to 13 positions (short: one reduction
  // each), across chunk edges or not; with include_last_offset, the last 2 positions in no
  // bag.
  const ValueRef many = input(b, "many", TensorType::contiguous(DType::I64, {61}), Range{0, 9});
  const ValueRef many_weights =
      input(b, "many_weights", TensorType::contiguous(d, {61}), Range{-2, 2});
  const auto arange = [&](int64_t from, int64_t to, int64_t step) {
    return b.op("aten.arange.start_step", {from, to, step}, {{"dtype", DType::I64}});
  };
  // The offsets of three ranges, sorted.
  const auto sorted = [&](ValueRef x, ValueRef y, ValueRef z) {
    return b
        .ops("aten.sort.default",
             {b.op("aten.cat.default", {TensorList{{x, y, z}}, int64_t{0}}), int64_t{0}, false})
        .at(0);
  };
  // 0 1 13 26 30 30 31 32 39 52 59
  const ValueRef uneven = sorted(arange(0, 61, 13), arange(1, 61, 29), arange(30, 33, 1));
  // 0 1 38 38 39 40 40: bags of 37 and 21 positions across chunks of 16 (with
  // include_last_offset the second is no bag), short and empty bags between them inside a
  // chunk. Chunks of 64 (the CPU's) take them as short bags: `long_spans` below are long there.
  const ValueRef spans = sorted(arange(0, 61, 40), arange(1, 61, 37), arange(38, 41, 1));
  bag("spans_sum", {table, many, spans, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  bag("spans_weighted",
      {table_t, many, spans, false, int64_t{0}, false, many_weights, true, int64_t{-1}});
  bag("spans_mean_pad", {table, many, spans, false, int64_t{1}, false, None{}, false, int64_t{5}});
  bag("spans_max", {table_t, many, spans, false, int64_t{2}, false, None{}, false, int64_t{-1}});
  bag("uneven_sum", {table, many, uneven, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  bag("uneven_weighted",
      {table_t, many, uneven, false, int64_t{0}, false, many_weights, true, int64_t{4}});
  bag("uneven_mean_pad",
      {table, many, uneven, false, int64_t{1}, false, None{}, false, int64_t{2}});
  bag("uneven_max", {table_t, many, uneven, false, int64_t{2}, false, None{}, true, int64_t{-1}});
  // 200 positions, 0 1 151 151 152 153: a bag of 150 positions across chunks of 64, an empty
  // and two single bags inside one, and 47 positions (long in chunks of 16, short in 64; with
  // include_last_offset in no bag).
  const ValueRef longer =
      input(b, "longer", TensorType::contiguous(DType::I64, {200}), Range{0, 9});
  const ValueRef longer_weights =
      input(b, "longer_weights", TensorType::contiguous(d, {200}), Range{-2, 2});
  const ValueRef long_spans = sorted(arange(0, 201, 151), arange(1, 201, 152), arange(151, 153, 1));
  // 37 columns: the CPU reduces these in column form (vectors along the columns, and a tail).
  const ValueRef table_wide =
      input(b, "table_wide", TensorType::contiguous(d, {9, 37}), Range{-2, 2});
  bag("long_spans_sum",
      {table_wide, longer, long_spans, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  bag("long_spans_weighted",
      {table_t, longer, long_spans, false, int64_t{0}, false, longer_weights, true, int64_t{-1}});
  bag("long_spans_mean_pad",
      {table, longer, long_spans, false, int64_t{1}, false, None{}, false, int64_t{5}});
  bag("long_spans_max",
      {table_wide, longer, long_spans, false, int64_t{2}, false, None{}, true, int64_t{-1}});
  // 150 columns: rows picked per step are read 8 vectors at a time, so at any vector width
  // each bag's row goes in several groups and a tail.
  const ValueRef table_widest =
      input(b, "table_widest", TensorType::contiguous(d, {9, 150}), Range{-2, 2});
  bag("long_spans_widest",
      {table_widest, longer, long_spans, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  bag("spans_wide_mean",
      {table_wide, many, spans, false, int64_t{1}, false, None{}, false, int64_t{-1}});
  // Rows of 21 positions: one reduction per bag.
  const ValueRef wide = input(b, "wide", TensorType::contiguous(DType::I64, {5, 21}), Range{0, 9});
  bag("wide_sum", {table_t, wide, offsets, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  bag("wide_max_pad", {table, wide, offsets, false, int64_t{2}, false, None{}, false, int64_t{0}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledScatter,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16,
                                           DType::I64, DType::I32, DType::U8),
                         DTypeName());

using CompiledScatterErrors = Differential;

TEST_F(CompiledScatterErrors, OutOfRangeIndexIsAnError) {
  for (const char* op : {"scatter_add", "index_put", "masked_scatter", "embedding_backward"}) {
    GraphBuilder b = builder();
    const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 6}));
    const ValueRef i = input(b, "i", TensorType::contiguous(DType::I64, {5, 3}), Range{40, 50});
    const std::string name = op;
    if (name == "scatter_add") output_of(b, op, "aten.scatter_add.default", {x, 1, i, x});
    if (name == "index_put")
      output_of(b, op, "aten.index_put.default",
                {x, TensorList{{i}}, input(b, "v", TensorType::contiguous(DType::F32, {6})), true});
    if (name == "masked_scatter") {
      // The mask selects every place, more than the source has elements.
      output_of(b, op, "aten.masked_scatter.default",
                {x, b.op("aten.ge.Scalar", {x, -10.0}),
                 input(b, "s", TensorType::contiguous(DType::F32, {2, 3}))});
    }
    if (name == "embedding_backward")
      output_of(b, op, "aten.embedding_dense_backward.default",
                {input(b, "g", TensorType::contiguous(DType::F32, {5, 3, 4})), i, int64_t{6},
                 int64_t{-1}, false});
    EXPECT_THAT(run_error(b), HasSubstr("out of range")) << op;
  }
}

// Offsets that do not start at 0, decrease, or pass the end of the indices fail the run, as
// the reference fails: the offsets are checked in the kernel that numbers the bags.
TEST_F(CompiledScatterErrors, BadBagOffsetsAreAnError) {
  const auto arange = [](GraphBuilder& b, int64_t from, int64_t to, int64_t step) {
    return b.op("aten.arange.start_step", {from, to, step}, {{"dtype", DType::I64}});
  };
  for (const char* kind : {"not_from_zero", "decreasing", "past_the_end"}) {
    GraphBuilder b = builder();
    const ValueRef table = input(b, "table", TensorType::contiguous(DType::F32, {9, 6}));
    const ValueRef flat = input(b, "flat", TensorType::contiguous(DType::I64, {13}), Range{0, 9});
    const std::string k = kind;
    ValueRef offsets = arange(b, 1, 12, 4);  // 1 5 9: ascending, not from 0
    if (k == "decreasing")                   // 0 8 4
      offsets = b.op("aten.cat.default",
                     {TensorList{{arange(b, 0, 1, 1), arange(b, 8, 3, -4)}}, int64_t{0}});
    if (k == "past_the_end") offsets = arange(b, 0, 40, 10);  // 0 10 20 30 of 13 indices
    b.output(b.ops("aten._embedding_bag.default",
                   {table, flat, offsets, false, int64_t{0}, false, None{}, false, int64_t{-1}})
                 .at(0));
    EXPECT_THAT(run_error(b), HasSubstr("out of range")) << kind;
  }
}

}  // namespace
}  // namespace kiln::test
