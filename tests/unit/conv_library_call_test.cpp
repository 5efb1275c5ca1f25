// A 2-d convolution becomes the plugin's conv2d library call when the plugin offers one for
// its dtype: the input read in place when packed (NCHW or channels-last, a size-1 dim given the
// stride its layout implies, never 0), copied first otherwise; an f32 bias added by a kernel
// after; half types with a bias and plugins without the call keep the generated kernel. A
// transposed convolution is the backward-input call. And the plugins' reading of the call's
// parameters.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/graph/builder.h"
#include "core/lower/library_call_signature.h"
#include "core/lower/loop_ir_print.h"
#include "core/lower/lower_graph.h"
#include "core/ops/op_registry.h"
#include "plugins/kir_support/conv_call.h"
#include "tests/unit/differential.h"

namespace kiln {
namespace {

struct Lowered {
  LoopProgram program;
  const LoopKernel* call = nullptr;  // the conv2d call, if any
  size_t index = 0;                  // its place among the kernels
};

Lowered lower_conv(DType d, TensorType x, bool bias, bool transposed,
                   const std::vector<std::string>& externs,
                   const std::vector<std::string>& declined = {}, bool conv_tf32 = false) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, "conv");
  const ValueRef xv = b.input("x", std::move(x));
  const ValueRef w = b.input("w", TensorType::contiguous(d, {3, 4, 3, 2}));
  ArgValue bv = None{};
  if (bias) bv = b.input("b", TensorType::contiguous(d, {transposed ? 4 : 3}));  // y's channels
  b.output(b.op("aten.convolution.default", {xv, w, bv, ints{2, 1}, ints{1, 0}, ints{1, 1},
                                             transposed, ints{0, 0}, int64_t{1}}));
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  LowerOptions options;
  options.declined = declined;
  options.conv_tf32 = conv_tf32;
  auto lowered = lower_graph(*g, externs, options);
  EXPECT_TRUE(lowered) << lowered.error().to_string();
  Lowered out{lowered->program};
  for (size_t i = 0; i < out.program.kernels.size(); ++i)
    if (out.program.kernels[i].extern_name == "conv2d") {
      out.call = &out.program.kernels[i];
      out.index = i;
    }
  return out;
}

const std::vector<std::string> kCudnn = {"conv2d f32 f16 bf16"};

// convolution_backward's two gradients of a 3x3 (pad 1) convolution: the calls the program
// makes (kernels of other names are the copies before them).
std::vector<const LoopKernel*> backward_calls(const LoopProgram& program) {
  std::vector<const LoopKernel*> calls;
  for (const LoopKernel& k : program.kernels)
    if (k.kind == LoopKernelKind::Extern) calls.push_back(&k);
  return calls;
}

LoopProgram lower_backward(TensorType x, const std::vector<std::string>& externs) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, "conv_backward");
  const ValueRef xv = b.input("x", std::move(x));
  const ValueRef w = b.input("w", TensorType::contiguous(DType::F32, {3, 4, 3, 3}));
  const ValueRef dy = b.input("dy", TensorType::contiguous(DType::F32, {2, 3, 6, 7}));
  for (ValueRef out : b.ops("aten.convolution_backward.default",
                            {dy, xv, w, None{}, ints{1, 1}, ints{1, 1}, ints{1, 1}, false,
                             ints{0, 0}, int64_t{1}, ints{1, 1, 0}}))
    b.output(out);
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  auto lowered = lower_graph(*g, externs);
  EXPECT_TRUE(lowered) << lowered.error().to_string();
  return lowered->program;
}

const std::vector<std::string> kBackward = {"conv2d_backward_input f32",
                                            "conv2d_backward_weight f32"};

TEST(ConvLibraryCall, GradientsAreCallsAndTheWeightGradientReadsXAsNchw) {
  const LoopProgram nchw =
      lower_backward(TensorType::contiguous(DType::F32, {2, 4, 6, 7}), kBackward);
  const auto calls = backward_calls(nchw);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->extern_name, "conv2d_backward_input");
  EXPECT_EQ(calls[1]->extern_name, "conv2d_backward_weight");
  EXPECT_EQ(nchw.kernels.size(), 2u) << "contiguous operands: nothing copied";
  EXPECT_EQ(extern_attr(*calls[0], "x_stride_c"), 42) << "dx is written NCHW";
  // A channels-last x is copied to NCHW for the weight gradient (cuDNN has no algorithm
  // otherwise).
  const LoopProgram nhwc = lower_backward(
      TensorType{DType::F32, {2, 4, 6, 7}, test::permuted_strides({2, 4, 6, 7}, {0, 2, 3, 1})},
      kBackward);
  const auto copied = backward_calls(nhwc);
  ASSERT_EQ(copied.size(), 2u);
  EXPECT_EQ(nhwc.kernels.size(), 3u) << "one copy";
  EXPECT_EQ(extern_attr(*copied[1], "x_stride_c"), 42);
  EXPECT_EQ(extern_attr(*copied[1], "x_stride_w"), 1);
  // Without the calls on offer, both gradients are generated.
  EXPECT_TRUE(
      backward_calls(lower_backward(TensorType::contiguous(DType::F32, {2, 4, 6, 7}), {})).empty());
}

TEST(ConvLibraryCall, ADeclinedShapeIsGeneratedWithNothingCopiedForTheCall) {
  // A sliced input would be copied for the call: declined, the program is the generated one.
  const TensorType sliced = test::sliced_type(DType::F32, {2, 4, 6, 7}, 2);
  const Lowered called = lower_conv(DType::F32, sliced, true, false, kCudnn);
  ASSERT_NE(called.call, nullptr);
  const std::string signature = library_call_signature(*called.call);
  EXPECT_EQ(signature.find("offset"), std::string::npos) << signature;
  EXPECT_NE(signature.find("x_stride_c=42"), std::string::npos)
      << "the copy's strides: " << signature;
  const Lowered declined = lower_conv(DType::F32, sliced, true, false, kCudnn, {signature});
  EXPECT_EQ(declined.call, nullptr);
  const Lowered generated = lower_conv(DType::F32, sliced, true, false, {});
  EXPECT_EQ(print_loop_program(declined.program), print_loop_program(generated.program));
  // Another shape's signature declines nothing here.
  const Lowered other =
      lower_conv(DType::F32, sliced, true, false, kCudnn, {signature + " groups=2"});
  EXPECT_NE(other.call, nullptr);
}

TEST(ConvLibraryCall, PackedInputsAreReadInPlaceWithRealStrides) {
  // Batch 1: the batch stride a view may leave at 0 is the NCHW extent.
  const Lowered nchw = lower_conv(DType::F32, TensorType::contiguous(DType::F32, {1, 4, 6, 7}),
                                  false, false, kCudnn);
  ASSERT_NE(nchw.call, nullptr);
  EXPECT_EQ(nchw.index, 0u) << "nothing copied first";
  EXPECT_EQ(extern_attr(*nchw.call, "x_stride_n"), 4 * 6 * 7);
  EXPECT_EQ(extern_attr(*nchw.call, "x_stride_c"), 6 * 7);
  EXPECT_EQ(extern_attr(*nchw.call, "stride_h"), 2);
  EXPECT_EQ(extern_attr(*nchw.call, "pad_h"), 1);
  EXPECT_EQ(extern_attr(*nchw.call, "out_h"), 3);
  const Lowered nhwc = lower_conv(
      DType::BF16,
      TensorType{DType::BF16, {2, 4, 6, 7}, test::permuted_strides({2, 4, 6, 7}, {0, 2, 3, 1})},
      false, false, kCudnn);
  ASSERT_NE(nhwc.call, nullptr);
  EXPECT_EQ(nhwc.index, 0u);
  EXPECT_EQ(extern_attr(*nhwc.call, "x_stride_c"), 1);
  EXPECT_EQ(extern_attr(*nhwc.call, "x_stride_w"), 4);
}

TEST(ConvLibraryCall, OtherLayoutsAreCopiedAndABiasFollows) {
  const Lowered sliced =
      lower_conv(DType::F32, test::sliced_type(DType::F32, {2, 4, 6, 7}, 2), true, false, kCudnn);
  ASSERT_NE(sliced.call, nullptr);
  EXPECT_EQ(sliced.index, 1u) << "a copy to NCHW first";
  EXPECT_EQ(extern_attr(*sliced.call, "x_stride_w"), 1);
  ASSERT_EQ(sliced.program.kernels.size(), 3u) << "the bias kernel after the call";
  EXPECT_EQ(sliced.program.kernels[2].kind, LoopKernelKind::Pointwise);
}

TEST(ConvLibraryCall, GeneratedWhereTheCallDoesNotApply) {
  const TensorType f32 = TensorType::contiguous(DType::F32, {2, 4, 6, 7});
  EXPECT_EQ(lower_conv(DType::F32, f32, false, false, {}).call, nullptr) << "no library";
  EXPECT_EQ(lower_conv(DType::F32, f32, false, false, {"conv2d bf16"}).call, nullptr);
  const TensorType f16 = TensorType::contiguous(DType::F16, {2, 4, 6, 7});
  EXPECT_EQ(lower_conv(DType::F16, f16, true, false, kCudnn).call, nullptr) << "half with bias";
  EXPECT_NE(lower_conv(DType::F16, f16, false, false, kCudnn).call, nullptr);
}

// A transposed 2-d convolution is the input gradient of the regular one it reverses: one
// "conv2d_backward_input" call with x in dy's place (k = x's channels, out_h/out_w = x's
// spatial sizes) and y as dx (c = y's channels, h/w = y's sizes), the same stride and
// padding; an f32 bias in a kernel after; generated for a half type with a bias, without
// the call on offer, and where the autotuner declined it.
TEST(ConvLibraryCall, TransposedIsTheBackwardInputCall) {
  const TensorType x = TensorType::contiguous(DType::F32, {2, 3, 6, 7});
  const std::vector<std::string> data = {"conv2d_backward_input f32 f16"};
  const auto call_of = [](const LoopProgram& p) -> const LoopKernel* {
    for (const LoopKernel& k : p.kernels)
      if (k.extern_name == "conv2d_backward_input") return &k;
    return nullptr;
  };
  const Lowered plain = lower_conv(DType::F32, x, false, true, data);
  const LoopKernel* call = call_of(plain.program);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(plain.program.kernels.size(), 1u) << "contiguous operands: nothing copied";
  // y: (6 - 1) * 2 - 2 + (3 - 1) + 1 = 11 rows, (7 - 1) + (2 - 1) + 1 = 8 columns, 4 channels.
  for (const auto& [name, value] : std::vector<std::pair<std::string, int64_t>>{{"n", 2},
                                                                                {"c", 4},
                                                                                {"h", 11},
                                                                                {"w", 8},
                                                                                {"k", 3},
                                                                                {"out_h", 6},
                                                                                {"out_w", 7},
                                                                                {"r", 3},
                                                                                {"s", 2},
                                                                                {"stride_h", 2},
                                                                                {"stride_w", 1},
                                                                                {"pad_h", 1},
                                                                                {"pad_w", 0}})
    EXPECT_EQ(extern_attr(*call, name), value) << name;
  const Lowered biased = lower_conv(DType::F32, x, true, true, data);
  ASSERT_NE(call_of(biased.program), nullptr);
  ASSERT_EQ(biased.program.kernels.size(), 2u) << "the bias kernel after the call";
  EXPECT_EQ(biased.program.kernels[1].kind, LoopKernelKind::Pointwise);
  const TensorType x16 = TensorType::contiguous(DType::F16, {2, 3, 6, 7});
  EXPECT_EQ(call_of(lower_conv(DType::F16, x16, true, true, data).program), nullptr);
  EXPECT_NE(call_of(lower_conv(DType::F16, x16, false, true, data).program), nullptr);
  EXPECT_EQ(call_of(lower_conv(DType::F32, x, false, true, kCudnn).program), nullptr);
  const std::string signature = library_call_signature(*call);
  EXPECT_EQ(call_of(lower_conv(DType::F32, x, false, true, data, {signature}).program), nullptr);
  // An output_padding at the stride (allowed below the dilation): the regular convolution of
  // y has 6 rows, not x's 5, so the call would refuse it; generated.
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  GraphBuilder b(*registry, "conv_transposed_wide_padding");
  const ValueRef xv = b.input("x", TensorType::contiguous(DType::F32, {1, 2, 5, 5}));
  const ValueRef wv = b.input("w", TensorType::contiguous(DType::F32, {2, 3, 3, 3}));
  b.output(b.op("aten.convolution.default", {xv, wv, None{}, ints{1, 1}, ints{0, 0}, ints{2, 2},
                                             true, ints{1, 1}, int64_t{1}}));
  auto g = b.finish();
  ASSERT_TRUE(g) << g.error().to_string();
  auto lowered = lower_graph(*g, data);
  ASSERT_TRUE(lowered) << lowered.error().to_string();
  EXPECT_EQ(call_of(lowered->program), nullptr);
}

// With schedule.conv_tf32 an f32 call's dtype parameter says TF32 products are allowed, but
// only to a plugin listing `tf32` for the call; other dtypes, and the option off, keep theirs.
TEST(ConvLibraryCall, TF32ProductsOnlyWhereAllowedAndListed) {
  const TensorType f32 = TensorType::contiguous(DType::F32, {2, 4, 6, 7});
  const std::vector<std::string> tf32 = {"conv2d f32 bf16 tf32"};
  const auto code = [](const Lowered& l) { return extern_attr(*l.call, "dtype"); };
  const Lowered allowed = lower_conv(DType::F32, f32, false, false, tf32, {}, true);
  EXPECT_EQ(code(allowed), kir::kExternTf32);
  // The autotuner's choice between library and generated kernels is kept per signature: TF32
  // and exact f32 calls are different choices.
  EXPECT_NE(library_call_signature(*allowed.call).find(" dtype=tf32 "), std::string::npos)
      << library_call_signature(*allowed.call);
  EXPECT_EQ(code(lower_conv(DType::F32, f32, false, false, tf32, {}, false)), 8);
  EXPECT_EQ(code(lower_conv(DType::F32, f32, false, false, kCudnn, {}, true)), 8);
  const TensorType bf16 = TensorType::contiguous(DType::BF16, {2, 4, 6, 7});
  EXPECT_EQ(code(lower_conv(DType::BF16, bf16, false, false, tf32, {}, true)), 7);
}

// A 1x1 convolution's matmul call takes the convolution's TF32 choice, not the matmuls'.
TEST(ConvLibraryCall, PointwiseConvolutionMatmulsFollowConvTF32) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  GraphBuilder b(*registry, "conv1x1");
  const ValueRef x = b.input("x", TensorType::contiguous(DType::F32, {2, 4, 5, 3}));
  const ValueRef w = b.input("w", TensorType::contiguous(DType::F32, {6, 4, 1, 1}));
  b.output(b.op("aten.convolution.default",
                {x, w, None{}, ints{1, 1}, ints{0, 0}, ints{1, 1}, false, ints{0, 0}, int64_t{1}}));
  auto g = b.finish();
  ASSERT_TRUE(g) << g.error().to_string();
  for (bool conv_tf32 : {false, true}) {
    LowerOptions options;
    options.conv_tf32 = conv_tf32;
    options.matmul_tf32 = !conv_tf32;
    auto lowered = lower_graph(*g, {"bmm f32 tf32"}, options);
    ASSERT_TRUE(lowered) << lowered.error().to_string();
    const LoopKernel* call = nullptr;
    for (const LoopKernel& k : lowered->program.kernels)
      if (k.extern_name == "bmm") call = &k;
    ASSERT_NE(call, nullptr) << print_loop_program(lowered->program);
    EXPECT_EQ(extern_attr(*call, "dtype"), conv_tf32 ? kir::kExternTf32 : 8);
  }
}

// A convolution of a channels-last x [N, C, H, W] by `w` (no bias, dilation 1, one group),
// returned in its memory order as the bridge returns a channels-last result (a permute).
Graph channels_last_conv(const std::string& name, const Shape& xs, const TensorType& w,
                         IntList stride, IntList padding) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, name);
  const ValueRef x =
      b.input("x", TensorType{DType::F32, xs, test::permuted_strides(xs, {0, 2, 3, 1})});
  const ValueRef y = b.op("aten.convolution.default",
                          {x, b.input("w", w), None{}, std::move(stride), std::move(padding),
                           ints{1, 1}, false, ints{0, 0}, int64_t{1}});
  b.output(b.op("aten.permute.default", {y, ints{0, 2, 3, 1}}));
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  return *g;
}

// With the call's `strides` feature a channels-last weight is read in place and a
// channels-last x gives a channels-last y, written by the call: a graph whose output is that
// y in its memory order (the bridge's permute) runs the call alone, no copy before or after.
// Without the feature the weight is copied and y is NCHW.
TEST(ConvLibraryCall, StridedCallsTakeChannelsLastWeightsAndOutputs) {
  const Shape ws = {3, 4, 3, 2};
  const TensorType w{DType::F32, ws, test::permuted_strides(ws, {0, 2, 3, 1})};
  const Graph g = channels_last_conv("conv_nhwc", {2, 4, 6, 7}, w, {2, 1}, {1, 0});
  auto strided = lower_graph(g, {"conv2d f32 strides"});
  ASSERT_TRUE(strided) << strided.error().to_string();
  const LoopProgram& p = strided->program;
  ASSERT_EQ(p.kernels.size(), 1u) << print_loop_program(p);
  const LoopKernel& call = p.kernels[0];
  ASSERT_EQ(call.attrs.size(), 30u);
  EXPECT_EQ(extern_attr(call, "w_stride_c"), 1);
  EXPECT_EQ(extern_attr(call, "w_stride_s"), 4);
  EXPECT_EQ(extern_attr(call, "w_stride_k"), 4 * 3 * 2);
  EXPECT_EQ(extern_attr(call, "y_stride_k"), 1);
  EXPECT_EQ(extern_attr(call, "y_stride_w"), 3);  // k = 3 output channels
  EXPECT_EQ(extern_attr(call, "y_stride_n"), 3 * 3 * 6);
  auto plain = lower_graph(g, {"conv2d f32"});
  ASSERT_TRUE(plain) << plain.error().to_string();
  EXPECT_EQ(plain->program.kernels.size(), 3u) << "weight copy, call, output copy";
  for (const LoopKernel& k : plain->program.kernels) {
    if (k.kind == LoopKernelKind::Extern) {
      EXPECT_EQ(k.attrs.size(), 22u);
    }
  }
}

// A channels-last 1x1 convolution is one matmul writing y channels-last: x and the weight
// read in place, and nothing copied when the graph's output is y in that order.
TEST(ConvLibraryCall, ChannelsLastPointwiseConvolutionIsOneMatmul) {
  const Graph g =
      channels_last_conv("conv1x1_nhwc", {2, 5, 3, 7},
                         TensorType::contiguous(DType::F32, {4, 5, 1, 1}), {1, 1}, {0, 0});
  auto lowered = lower_graph(g, {"bmm f32"});
  ASSERT_TRUE(lowered) << lowered.error().to_string();
  const LoopProgram& p = lowered->program;
  ASSERT_EQ(p.kernels.size(), 1u) << print_loop_program(p);
  EXPECT_EQ(p.kernels[0].extern_name, "bmm");
  EXPECT_EQ(extern_attr(p.kernels[0], "m"), 3 * 7);  // positions
  EXPECT_EQ(extern_attr(p.kernels[0], "n"), 4);      // output channels
  EXPECT_EQ(extern_attr(p.kernels[0], "a_col_stride"), 1);
}

TEST(ConvCall, ReadsAndChecksItsParameters) {
  //           dtype n  c  h  w  k  r  s  oh ow sh sw ph pw dh dw g  off sn   sc  sh sw
  std::vector<int64_t> p = {8, 2, 4, 6, 7, 3, 3, 2, 3, 6, 2, 1, 1, 0, 1, 1, 1, 0, 168, 42, 7, 1};
  const kir_support::ConvCall c = kir_support::read_conv_call(p);
  EXPECT_EQ(c.k, 3);
  EXPECT_EQ(c.buffer_bytes(),
            (std::vector<int64_t>{2 * 4 * 6 * 7 * 4, 3 * 4 * 3 * 2 * 4, 2 * 3 * 3 * 6 * 4}));
  auto bad = [&](size_t i, int64_t v) {
    std::vector<int64_t> q = p;
    q[i] = v;
    return q;
  };
  EXPECT_THROW(kir_support::read_conv_call(std::vector<int64_t>(p.begin(), p.end() - 1)),
               std::invalid_argument);
  EXPECT_THROW(kir_support::read_conv_call(bad(0, 42)), std::invalid_argument);  // dtype
  EXPECT_THROW(kir_support::read_conv_call(bad(4, -7)), std::invalid_argument);  // negative
  EXPECT_THROW(kir_support::read_conv_call(bad(16, 3)), std::invalid_argument);  // groups
  EXPECT_THROW(kir_support::read_conv_call(bad(8, 4)), std::invalid_argument);   // out_h
  EXPECT_THROW(kir_support::read_conv_call(bad(10, 0)), std::invalid_argument);  // stride 0
  EXPECT_FALSE(c.tf32);
  const kir_support::ConvCall t = kir_support::read_conv_call(bad(0, kir::kExternTf32));
  EXPECT_TRUE(t.tf32);
  EXPECT_EQ(t.dtype, kir::DType::F32);
  EXPECT_NE(t.shape_key(), c.shape_key());  // plans made for one never serve the other
  EXPECT_THROW(kir_support::read_conv_call(bad(0, kir::kExternTf32 + 1)), std::invalid_argument);
  // The strided form: the weight and y channels-last (y's extent is its element count).
  std::vector<int64_t> q = p;
  for (int64_t v : {4 * 3 * 2, 1, 2 * 4, 4, 3 * 6 * 3, 1, 6 * 3, 3}) q.push_back(v);
  const kir_support::ConvCall s = kir_support::read_conv_call(q);
  EXPECT_EQ(s.y_stride[1], 1);
  EXPECT_EQ(s.buffer_bytes(), c.buffer_bytes());
  EXPECT_EQ(c.y_stride[3], 1);  // the 22-parameter form: contiguous
  EXPECT_NE(s.shape_key(), c.shape_key());
  q[27] = 2;  // y's k stride 2 against w stride 3: elements overlap
  EXPECT_THROW(kir_support::read_conv_call(q), std::invalid_argument);
  q.pop_back();
  EXPECT_THROW(kir_support::read_conv_call(q), std::invalid_argument);  // 29 parameters
}

}  // namespace
}  // namespace kiln
