// A convolution without a convolution library but with a matmul one is a column buffer and
// one mm/bmm call: the shapes the call multiplies, the weight read in place or copied (with
// the bias as one more column), and the cases that keep the gather form. The numbers are
// checked against the oracle in differential_conv_test.cpp.
#include <gtest/gtest.h>

#include "core/graph/builder.h"
#include "core/lower/loop_ir_print.h"
#include "core/lower/lower_graph.h"
#include "core/ops/op_registry.h"
#include "tests/unit/differential.h"

namespace kiln {
namespace {

struct ConvCase {
  TensorType x;
  TensorType w;
  bool bias = false;
  IntList stride{1, 1}, padding{1, 1};
  bool transposed = false;
  int64_t groups = 1;
  bool memory_order = false;  // the output permuted to channels-last, as the bridge returns it
};

LoopProgram lower(const ConvCase& c, const std::vector<std::string>& externs) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, "conv");
  const ValueRef x = b.input("x", c.x), w = b.input("w", c.w);
  ArgValue bias = None{};
  if (c.bias) bias = b.input("b", TensorType::contiguous(c.w.dtype, {c.w.sizes[c.transposed]}));
  IntList no_output_padding(c.stride.size(), 0);
  const ValueRef y = b.op(
      "aten.convolution.default",
      {x, w, bias, c.stride, c.padding, IntList{1, 1}, c.transposed, no_output_padding, c.groups});
  b.output(c.memory_order ? b.op("aten.permute.default", {y, IntList{0, 2, 3, 1}}) : y);
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  auto lowered = lower_graph(*g, externs);
  EXPECT_TRUE(lowered) << lowered.error().to_string();
  return lowered->program;
}

std::vector<const LoopKernel*> calls(const LoopProgram& p) {
  std::vector<const LoopKernel*> out;
  for (const LoopKernel& k : p.kernels)
    if (k.kind == LoopKernelKind::Extern) out.push_back(&k);
  return out;
}

TensorType nchw(DType d, Shape s) {
  return TensorType::contiguous(d, std::move(s));
}

TensorType channels_last(DType d, const Shape& s) {
  return {d, s, test::permuted_strides(s, {0, 2, 3, 1})};
}

// ResNet's 3x3 on NCHW: one column kernel [2, 4*9, 5*6] and a bmm of the weight in place
// (batch stride 0) by it, writing y NCHW.
TEST(ConvAsMatmul, ChannelsFirstIsColumnsAndOneBatchedProduct) {
  const LoopProgram p =
      lower({nchw(DType::F32, {2, 4, 5, 6}), nchw(DType::F32, {3, 4, 3, 3})}, {"bmm f32"});
  ASSERT_EQ(p.kernels.size(), 2u) << print_loop_program(p);
  EXPECT_EQ(p.kernels[0].kind, LoopKernelKind::Pointwise);
  const LoopKernel& call = p.kernels[1];
  ASSERT_EQ(call.extern_name, "bmm");
  EXPECT_EQ(extern_attr(call, "batch"), 2);
  EXPECT_EQ(extern_attr(call, "m"), 3);
  EXPECT_EQ(extern_attr(call, "k"), 4 * 9);
  EXPECT_EQ(extern_attr(call, "n"), 5 * 6);
  EXPECT_EQ(extern_attr(call, "a_batch_stride"), 0) << "the weight is shared by the batch";
  EXPECT_EQ(extern_attr(call, "a_row_stride"), 4 * 9);
  EXPECT_EQ(extern_attr(call, "b_batch_stride"), 4 * 9 * 5 * 6);
}

// Channels-last x with a bias, stride 2: the columns [N*P, taps*C + 1] (the last all ones),
// the weight and bias copied into [taps*C + 1, O], one mm writing y channels-last (a graph
// returning y in that memory order copies nothing after it).
TEST(ConvAsMatmul, ChannelsLastTakesTheBiasIntoTheProduct) {
  ConvCase c{channels_last(DType::BF16, {2, 4, 7, 6}), nchw(DType::BF16, {5, 4, 3, 3}), true,
             IntList{2, 2}};
  c.memory_order = true;
  const LoopProgram p = lower(c, {"mm bf16"});
  const auto ext = calls(p);
  ASSERT_EQ(ext.size(), 1u) << print_loop_program(p);
  const LoopKernel& call = *ext[0];
  EXPECT_EQ(call.extern_name, "mm");
  EXPECT_EQ(extern_attr(call, "m"), 2 * 4 * 3);  // positions: 4 x 3 at stride 2
  EXPECT_EQ(extern_attr(call, "k"), 9 * 4 + 1);
  EXPECT_EQ(extern_attr(call, "n"), 5);
  EXPECT_EQ(p.kernels.size(), 5u) << "columns, ones, weight, bias, mm\n" << print_loop_program(p);
  EXPECT_EQ(p.kernels.back().extern_name, "mm") << "y is written by the call, no copy after";
}

// An f32 bias is added after the product by an elementwise kernel (which stays f32 where
// the product multiplies on TF32): no column of ones, the weight read in place.
TEST(ConvAsMatmul, WideBiasIsAddedAfterTheProduct) {
  ConvCase c{nchw(DType::F32, {2, 4, 5, 6}), nchw(DType::F32, {3, 4, 3, 3}), true};
  const LoopProgram p = lower(c, {"bmm f32"});
  ASSERT_EQ(p.kernels.size(), 3u) << "columns, bmm, bias\n" << print_loop_program(p);
  EXPECT_EQ(p.kernels[1].extern_name, "bmm");
  EXPECT_EQ(extern_attr(p.kernels[1], "k"), 4 * 9);
  EXPECT_EQ(p.kernels[2].kind, LoopKernelKind::Pointwise);
}

// A channels-last weight under a channels-last x is read in place as [taps*C, O].
TEST(ConvAsMatmul, ChannelsLastWeightIsReadInPlace) {
  ConvCase c{channels_last(DType::F32, {2, 4, 7, 6}), channels_last(DType::F32, {5, 4, 3, 3})};
  c.memory_order = true;
  const LoopProgram p = lower(c, {"mm f32"});
  ASSERT_EQ(p.kernels.size(), 2u) << "columns, mm\n" << print_loop_program(p);
  EXPECT_EQ(extern_attr(p.kernels[1], "b_row_stride"), 1) << "j = tap*C + c: w's own order";
  EXPECT_EQ(extern_attr(p.kernels[1], "b_col_stride"), 4 * 9);
}

// A transposed convolution (stride 2, padding 1) is the wide side: columns of the input
// elements each tap lands from, [N, C_in * taps + 1, P] with a half-type bias, and one bmm by
// the weight copied as [C_out, C_in * taps + 1].
TEST(ConvAsMatmul, TransposedIsTheWideSideProduct) {
  ConvCase c{nchw(DType::F16, {2, 4, 5, 6}), nchw(DType::F16, {4, 3, 3, 3}), true, IntList{2, 2}};
  c.transposed = true;
  const LoopProgram p = lower(c, {"bmm f16"});
  const auto ext = calls(p);
  ASSERT_EQ(ext.size(), 1u) << print_loop_program(p);
  EXPECT_EQ(ext[0]->extern_name, "bmm");
  EXPECT_EQ(extern_attr(*ext[0], "m"), 3);
  EXPECT_EQ(extern_attr(*ext[0], "k"), 4 * 9 + 1);
  EXPECT_EQ(extern_attr(*ext[0], "n"), 9 * 11);  // (5 - 1) * 2 - 2 + 3, (6 - 1) * 2 - 2 + 3
  EXPECT_EQ(extern_attr(*ext[0], "a_batch_stride"), 0);
}

bool gather_form(const LoopProgram& p) {
  return calls(p).empty() && p.kernels.size() == 1 &&
         p.kernels[0].kind == LoopKernelKind::Reduction;
}

TEST(ConvAsMatmul, OtherConvolutionsKeepTheGatherForm) {
  const ConvCase plain{nchw(DType::F32, {2, 4, 5, 6}), nchw(DType::F32, {4, 4, 3, 3})};
  EXPECT_TRUE(gather_form(lower(plain, {}))) << "no matmul library";
  EXPECT_TRUE(gather_form(lower(plain, {"bmm f64"}))) << "not for this dtype";
  ConvCase grouped = plain;
  grouped.w = nchw(DType::F32, {4, 2, 3, 3});
  grouped.groups = 2;
  EXPECT_TRUE(gather_form(lower(grouped, {"bmm f32"})));
  ConvCase transposed = grouped;
  transposed.transposed = true;
  transposed.w = nchw(DType::F32, {4, 2, 3, 3});
  EXPECT_TRUE(gather_form(lower(transposed, {"bmm f32"}))) << "grouped, transposed";
  // 64 x 2304 x 128^2 f32 columns: 9.7 GB, over kMaxColumnBytes.
  const ConvCase huge{nchw(DType::F32, {64, 256, 128, 128}), nchw(DType::F32, {8, 256, 3, 3})};
  EXPECT_TRUE(gather_form(lower(huge, {"bmm f32"})));
}

}  // namespace
}  // namespace kiln
