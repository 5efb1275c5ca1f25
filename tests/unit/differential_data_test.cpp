// Views, data movement, indexing and matmul compiled by cpp_openmp against the oracle.
// Views are index remaps (no kernel of their own); indirect loads report an index out of
// range as an error.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

using ::testing::HasSubstr;

class CompiledDataMovement : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledDataMovement, ViewsRemapIndicesWithoutCopies) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {4, 6, 5}), Range{-2, 2});
  const ValueRef xt = input(b, "xt", TensorType{d, {4, 6, 5}, {1, 20, 4}}, Range{-2, 2});
  const ValueRef r = input(b, "r", TensorType::contiguous(d, {5}), Range{-2, 2});
  output_of(b, "view", "aten.view.default", {x, ints{24, 5}});
  output_of(b, "reshape_t", "aten.reshape.default", {xt, ints{6, 20}});
  output_of(b, "permute", "aten.permute.default", {x, ints{2, 0, 1}});
  output_of(b, "transpose", "aten.transpose.int", {x, 0, 2});
  output_of(b, "expand", "aten.expand.default", {r, ints{3, 4, 5}});
  output_of(b, "slice", "aten.slice.Tensor", {x, 1, 1, 6, 2});
  output_of(b, "slice_neg", "aten.slice.Tensor", {xt, 2, -3, int64_t{1} << 40, 1});
  output_of(b, "select", "aten.select.int", {x, 1, -2});
  output_of(b, "squeeze_unsqueeze", "aten.squeeze.dim",
            {b.op("aten.unsqueeze.default", {x, 1}), 1});
  output_of(b, "diagonal", "aten.diagonal.default", {x, 0, 1, 2});
  output_of(b, "as_strided", "aten.as_strided.default", {x, ints{3, 4}, ints{7, 2}, 3});
  output_of(
      b, "chain", "aten.add.Tensor",
      {b.op("aten.permute.default", {b.op("aten.slice.Tensor", {xt, 0, 1, 4, 1}), ints{1, 2, 0}}),
       b.op("aten.expand.default", {b.op("aten.view.default", {r, ints{5, 1}}), ints{6, 5, 3}})});
  output_of(b, "flatten_t", "aten.flatten.using_ints",
            {b.op("aten.permute.default", {x, ints{1, 0, 2}}), 0, -1});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
  EXPECT_EQ(st.externs, 0u);
}

// flip reads its input backwards (a negative stride): every dim, some dims, a transposed
// and a sliced input, size-1 and empty dims, and flips composed with other views.
TEST_P(CompiledDataMovement, FlipWalksDimsBackwards) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(d, {3, 7, 5}), Range{-2, 2});
  const ValueRef xt = input(b, "xt", TensorType{d, {3, 7, 5}, {1, 15, 3}}, Range{-2, 2});
  const ValueRef xs = input(b, "xs", sliced_type(d, {4, 9}, 3), Range{-2, 2});
  const ValueRef one = input(b, "one", TensorType::contiguous(d, {1, 11}), Range{-2, 2});
  const ValueRef empty = input(b, "empty", TensorType::contiguous(d, {0, 4}), Range{-2, 2});
  output_of(b, "flip_last", "aten.flip.default", {x, ints{-1}});
  output_of(b, "flip_all", "aten.flip.default", {x, ints{0, 1, 2}});
  output_of(b, "flip_none", "aten.flip.default", {x, ints{}});
  output_of(b, "flip_transposed", "aten.flip.default", {xt, ints{0, 2}});
  output_of(b, "flip_sliced", "aten.flip.default", {xs, ints{1}});
  output_of(b, "flip_size_one", "aten.flip.default", {one, ints{0, 1}});
  output_of(b, "flip_empty", "aten.flip.default", {empty, ints{0}});
  // Rows of 37 and 38 elements: vectors of every lane count and a tail. A flip reads a
  // reversed vector (stride -1), every other column two vectors and a shuffle (stride 2), the
  // odd columns' last lane at the row's last element.
  const ValueRef wide = input(b, "wide", TensorType::contiguous(d, {3, 37}), Range{-2, 2});
  output_of(b, "flip_wide", "aten.flip.default", {wide, ints{1}});
  const ValueRef wider = input(b, "wider", TensorType::contiguous(d, {3, 76}), Range{-2, 2});
  output_of(b, "every_other_column", "aten.mul.Tensor",
            {b.op("aten.slice.Tensor", {wider, 1, 0, 76, 2}),
             b.op("aten.slice.Tensor", {wider, 1, 1, 76, 2})});
  output_of(b, "flip_of_views", "aten.add.Tensor",
            {b.op("aten.flip.default",
                  {b.op("aten.slice.Tensor",
                        {b.op("aten.permute.default", {x, ints{2, 0, 1}}), 2, 1, 7, 2}),
                   ints{0, 2}}),
             b.op("aten.permute.default",
                  {b.op("aten.flip.default", {b.op("aten.slice.Tensor", {x, 1, 1, 7, 2}), ints{1}}),
                   ints{2, 0, 1}})});
  check(b);
}

TEST_P(CompiledDataMovement, MirrorAndEdgePaddingRemapIndices) {
  // reflection_pad and replication_pad as index remaps: odd sizes, pads up to size - 1,
  // strided and sliced inputs, batched and unbatched ranks, and a view of a padded value.
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef x1 = input(b, "x1", TensorType::contiguous(d, {2, 3, 7}), Range{-2, 2});
  const ValueRef x2 = input(b, "x2", TensorType{d, {2, 5, 6}, {1, 12, 2}}, Range{-2, 2});
  const ValueRef x3 = input(b, "x3", TensorType::contiguous(d, {1, 2, 3, 4, 5}), Range{-2, 2});
  const ValueRef xs = input(b, "xs", sliced_type(d, {3, 9}, 2), Range{-2, 2});
  const ValueRef x4 = input(b, "x4", TensorType::contiguous(d, {2, 3, 2, 4}), Range{-2, 2});
  output_of(b, "reflect1d", "aten.reflection_pad1d.default", {x1, ints{3, 6}});
  output_of(b, "reflect2d", "aten.reflection_pad2d.default", {x2, ints{5, 1, 4, 0}});
  output_of(b, "reflect3d", "aten.reflection_pad3d.default", {x3, ints{4, 2, 0, 3, 2, 1}});
  output_of(b, "replicate2d", "aten.replication_pad2d.default",
            {b.op("aten.unsqueeze.default", {xs, 0}), ints{0, 5, 3, 1}});
  output_of(b, "replicate3d", "aten.replication_pad3d.default", {x4, ints{2, 0, 1, 1, 3, 2}});
  output_of(b, "flip_of_padded", "aten.flip.default",
            {b.op("aten.reflection_pad2d.default", {x2, ints{1, 2, 3, 1}}), ints{0, 2}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u) << "padding modes are kernels";
}

TEST_P(CompiledDataMovement, CatPadRepeatAndCreation) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(d, {3, 5}), Range{-2, 2});
  const ValueRef c = input(b, "c", TensorType::contiguous(d, {3, 2}), Range{-2, 2});
  const ValueRef e = input(b, "e", TensorType::contiguous(d, {0, 5}), Range{-2, 2});
  const ValueRef at = input(b, "at", TensorType{d, {3, 5}, {1, 3}}, Range{-2, 2});
  output_of(b, "cat1", "aten.cat.default", {TensorList{{a, c, a}}, 1});
  output_of(b, "cat0", "aten.cat.default", {TensorList{{a, e, at}}, 0});
  output_of(b, "cat_neg", "aten.cat.default", {TensorList{{c, a}}, -1});
  output_of(b, "pad", "aten.constant_pad_nd.default", {a, ints{1, 2, 0, 3}, 1.5});
  output_of(b, "pad_neg", "aten.constant_pad_nd.default", {at, ints{-1, 2, 1, -1}});
  output_of(b, "repeat", "aten.repeat.default", {c, ints{2, 1, 3}});
  output_of(b, "full", "aten.full.default", {ints{3, 4}, 2.5}, {{"dtype", d}});
  output_of(b, "full_like", "aten.full_like.default", {a, -1.0});
  output_of(b, "fill", "aten.fill.Scalar", {at, 0.25});
  output_of(b, "scalar_tensor", "aten.scalar_tensor.default", {3.0}, {{"dtype", d}});
  if (d != DType::Bool) {
    output_of(b, "arange", "aten.arange.start_step", {int64_t{-3}, int64_t{17}, int64_t{3}},
              {{"dtype", d}});
  }
  check(b);
}

// Reads across rows (a + b^T, permuted 3-d inputs): on the CPU, blocks of a vector's width
// of rows read such operands as transposed squares of row vectors (f32 f64 i32 i64), the rows
// and columns left over (37 and 45 are no multiples of 4, 8 or 16) the old way; f16 and bool
// always the old way. Two transposed operands in one body, one read twice, a fused consumer.
TEST_P(CompiledDataMovement, TransposedReadsInBlocksOfRows) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(d, {37, 45}));
  const ValueRef at = input(b, "at", TensorType{d, {37, 45}, {1, 37}});
  const ValueRef c = input(b, "c", TensorType::contiguous(d, {45, 37}));
  const ValueRef p =
      input(b, "p", TensorType{d, {3, 29, 70}, permuted_strides({3, 29, 70}, {0, 2, 1})});
  const ValueRef q = input(b, "q", TensorType::contiguous(d, {3, 29, 70}));
  const ValueRef ct = b.op("aten.t.default", {c});
  if (d == DType::Bool) {
    output_of(b, "and_t", "aten.logical_and.default", {a, ct});
  } else {
    output_of(b, "plus_t", "aten.add.Tensor", {a, ct});
    output_of(b, "two_transposed", "aten.mul.Tensor", {b.op("aten.add.Tensor", {at, ct}), ct});
    output_of(b, "permuted", "aten.sub.Tensor", {q, p});
    output_of(b, "fused", "aten.abs.default", {b.op("aten.sub.Tensor", {ct, a})});
  }
  check(b);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledDataMovement,
                         ::testing::Values(DType::F32, DType::F16, DType::I64, DType::Bool,
                                           DType::F64, DType::I32),
                         DTypeName());

using CompiledIndexing = Differential;

TEST_F(CompiledIndexing, GatherIndexSelectEmbeddingAndAdvancedIndexing) {
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {7, 11}));
  const ValueRef xt = input(b, "xt", TensorType{DType::F32, {7, 11}, {1, 7}});
  const ValueRef table = input(b, "table", TensorType::contiguous(DType::F16, {13, 6}));
  const ValueRef gi = input(b, "gi", TensorType::contiguous(DType::I64, {7, 4}), Range{0, 11});
  const ValueRef gi0 = input(b, "gi0", TensorType::contiguous(DType::I64, {3, 11}), Range{0, 7});
  const ValueRef sel = input(b, "sel", TensorType::contiguous(DType::I32, {5}), Range{0, 7});
  const ValueRef tok = input(b, "tok", TensorType::contiguous(DType::I64, {2, 9}), Range{0, 13});
  const ValueRef neg = input(b, "neg", TensorType::contiguous(DType::I64, {4}), Range{-11, 11});
  const ValueRef rows = input(b, "rows", TensorType::contiguous(DType::I64, {4, 1}), Range{-7, 7});
  output_of(b, "gather", "aten.gather.default", {x, 1, gi});
  output_of(b, "gather_t", "aten.gather.default", {xt, 1, gi});
  output_of(b, "gather0", "aten.gather.default", {xt, 0, gi0});
  output_of(b, "index_select", "aten.index_select.default", {x, 0, sel});
  output_of(b, "index_select_t", "aten.index_select.default", {xt, 1, sel});
  output_of(b, "embedding", "aten.embedding.default", {table, tok});
  output_of(b, "index_last", "aten.index.Tensor", {x, TensorList{{std::nullopt, neg}}});
  output_of(b, "index_both", "aten.index.Tensor", {xt, TensorList{{rows, neg}}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_F(CompiledIndexing, OutOfRangeIndexIsAnErrorNotACrash) {
  for (const char* op : {"gather", "index_select", "embedding", "index"}) {
    GraphBuilder b = builder();
    const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {5, 6}));
    const ValueRef i = input(b, "i", TensorType::contiguous(DType::I64, {5, 3}), Range{40, 50});
    const std::string name = op;
    if (name == "gather") output_of(b, op, "aten.gather.default", {x, 1, i});
    if (name == "index_select")
      output_of(b, op, "aten.index_select.default",
                {x, 0, b.op("aten.view.default", {i, ints{15}})});
    if (name == "embedding") output_of(b, op, "aten.embedding.default", {x, i});
    if (name == "index") output_of(b, op, "aten.index.Tensor", {x, TensorList{{i}}});
    EXPECT_THAT(run_error(b), HasSubstr("out of range")) << op;
  }
}

using CompiledMatmul = Differential;

// Through the plugin's library, then as generated reduction kernels (what a plugin without a
// matmul library gets).
TEST_F(CompiledMatmul, MmAndBmmWithTransposedOperandsAndOddSizes) {
  auto build = [&](GraphBuilder& b) {
    const ValueRef a = input(b, "a", TensorType::contiguous(DType::F32, {17, 31}));
    const ValueRef w = input(b, "w", TensorType::contiguous(DType::F32, {31, 9}));
    const ValueRef wt = input(b, "wt", TensorType{DType::F32, {31, 9}, {1, 31}});
    const ValueRef p = input(b, "p", TensorType::contiguous(DType::F64, {3, 5, 7}));
    const ValueRef q = input(b, "q", TensorType{DType::F64, {3, 7, 2}, {14, 1, 7}});
    const ValueRef h = input(b, "h", TensorType::contiguous(DType::F16, {6, 10}));
    const ValueRef hk = input(b, "hk", TensorType::contiguous(DType::F16, {10, 3}));
    const ValueRef ia = input(b, "ia", TensorType::contiguous(DType::I64, {4, 5}), Range{-5, 5});
    const ValueRef ib = input(b, "ib", TensorType::contiguous(DType::I64, {5, 3}), Range{-5, 5});
    output_of(b, "mm", "aten.mm.default", {a, w});
    output_of(b, "mm_t", "aten.mm.default", {a, wt});
    output_of(
        b, "mm_sliced", "aten.mm.default",
        {b.op("aten.slice.Tensor", {a, 1, 0, 31, 3}), b.op("aten.slice.Tensor", {w, 0, 0, 31, 3})});
    output_of(b, "bmm", "aten.bmm.default", {p, q});
    output_of(b, "mm_f16", "aten.mm.default", {h, hk});
    output_of(b, "mm_i64", "aten.mm.default", {ia, ib});
    output_of(b, "linear", "aten.linear.default", {a, b.op("aten.t.default", {w})});
  };
  GraphBuilder with_library = builder();
  build(with_library);
  EXPECT_EQ(check(with_library).host_steps, 0u);
  ScheduleOptions generated;
  generated.library_matmul = false;
  set_schedule(generated);
  GraphBuilder with_kernels = builder();
  build(with_kernels);
  const CompileStats kernels = check(with_kernels);
  EXPECT_EQ(kernels.externs, 0u);
  EXPECT_EQ(kernels.host_steps, 0u);
}

// Output rows that are not 16 bytes apart, in each float dtype, and rows narrower than 16
// bytes. The ptx plugin computes large such products (not the narrow ones) on padded rows; run
// with KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=pad_rows_from=0 to send every one there.
TEST_F(CompiledMatmul, UnalignedOutputRows) {
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(DType::BF16, {37, 70}));
  const ValueRef w = input(b, "w", TensorType{DType::BF16, {70, 43}, {1, 70}});
  const ValueRef f = input(b, "f", TensorType::contiguous(DType::F32, {13, 52}));
  const ValueRef g = input(b, "g", TensorType::contiguous(DType::F32, {52, 11}));
  const ValueRef p = input(b, "p", TensorType::contiguous(DType::F16, {3, 17, 40}));
  const ValueRef q = input(b, "q", TensorType::contiguous(DType::F16, {3, 40, 21}));
  const ValueRef t = input(b, "t", TensorType::contiguous(DType::BF16, {2, 33, 64}));
  const ValueRef u = input(b, "u", TensorType::contiguous(DType::BF16, {2, 64, 5}));
  output_of(b, "mm_bf16", "aten.mm.default", {a, w});
  output_of(b, "mm_f32", "aten.mm.default", {f, g});
  output_of(b, "bmm_f16", "aten.bmm.default", {p, q});
  output_of(b, "bmm_narrow", "aten.bmm.default", {t, u});  // no whole 16 bytes of columns
  EXPECT_EQ(check(b).host_steps, 0u);
}

// The same for linear layers' products (A's rows and the weight's columns 16 bytes apart),
// which the ptx plugin computes as aligned row sets written in place (`unaligned_rows:
// groups`): every phase of rows within 16 bytes, row counts no phase count divides, columns
// at both edges. Run with KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=pad_rows_from=0.
TEST_F(CompiledMatmul, UnalignedOutputRowsOfLinearLayers) {
  GraphBuilder b = builder();
  const ValueRef a = input(b, "a", TensorType::contiguous(DType::BF16, {37, 64}));
  const ValueRef w = input(b, "w", TensorType{DType::BF16, {64, 43}, {1, 64}});
  const ValueRef f = input(b, "f", TensorType::contiguous(DType::F32, {21, 8}));
  const ValueRef g = input(b, "g", TensorType{DType::F32, {8, 19}, {1, 8}});
  const ValueRef h = input(b, "h", TensorType::contiguous(DType::F16, {19, 32}));
  const ValueRef v = input(b, "v", TensorType{DType::F16, {32, 17}, {1, 32}});
  output_of(b, "linear_bf16", "aten.mm.default", {a, w});
  output_of(b, "linear_f32", "aten.mm.default", {f, g});
  output_of(b, "linear_f16", "aten.mm.default", {h, v});
  EXPECT_EQ(check(b).host_steps, 0u);
}

}  // namespace
}  // namespace kiln::test
