// Convolution and convolution_backward compiled as Reduction kernels against the reference:
// every float dtype, 1-d to 3-d, odd sizes, stride, padding, dilation, groups (depthwise
// too), transposed with output_padding, channels-last and sliced inputs, a fused epilogue
// (bias, batch norm folded in, ReLU, residual add) and each output_mask.
#include <gtest/gtest.h>

#include "core/lower/lower_context.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledConv : public Differential, public ::testing::WithParamInterface<DType> {
 protected:
  struct CallCounts {
    size_t conv = 0, matmul = 0;
  };
  // The library calls `graph` compiles to under `schedule`: convolutions and matmuls.
  CallCounts call_counts(const Graph& graph, const ScheduleOptions& schedule) {
    CallCounts n;
    auto compiled = compile(graph, schedule);
    EXPECT_TRUE(compiled) << compiled.error().to_string();
    if (!compiled) return n;
    for (const LoopKernel& k : compiled->program().kernels) {
      n.conv += k.extern_name.rfind("conv2d", 0) == 0;
      n.matmul += k.extern_name == "mm" || k.extern_name == "bmm";
    }
    return n;
  }
};

using ints = IntList;

// convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)
ValueRef conv(GraphBuilder& b, ValueRef x, ValueRef w, ArgValue bias, ints stride, ints padding,
              ints dilation, bool transposed, ints output_padding, int64_t groups) {
  return b.op("aten.convolution.default",
              {x, w, bias, stride, padding, dilation, transposed, output_padding, groups});
}

TEST_P(CompiledConv, ForwardIsAKernel) {
  const DType d = GetParam();
  const auto make = [&] {
    GraphBuilder b = builder();
    const auto in = [&](const std::string& name, TensorType t) { return input(b, name, t); };
    const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
    const ValueRef x1 = in("x1", c({2, 4, 13})), w1 = in("w1", c({6, 2, 3})), b1 = in("b1", c({6}));
    b.output(conv(b, x1, w1, b1, {2}, {1}, {1}, false, {0}, 2));
    // ResNet's 3x3 (pad 1) and a strided 1x1 downsample, channels-last input.
    const ValueRef x2 =
        in("x2", TensorType{d, {2, 5, 7, 9}, permuted_strides({2, 5, 7, 9}, {0, 2, 3, 1})});
    const ValueRef w3 = in("w3", c({3, 5, 3, 3})), w1x1 = in("w1x1", c({4, 5, 1, 1}));
    b.output(conv(b, x2, w3, None{}, {1}, {1}, {1}, false, {0}, 1));
    // A channels-last weight too (read in place by a library with the strides feature; y
    // channels-last), with a bias and a ReLU after it.
    const ValueRef w3l =
        in("w3l", TensorType{d, {3, 5, 3, 3}, permuted_strides({3, 5, 3, 3}, {0, 2, 3, 1})});
    b.output(b.op("aten.relu.default",
                  {conv(b, x2, w3l, in("b3l", c({3})), {1}, {1}, {1}, false, {0}, 1)}));
    // The same on NCHW with odd channel counts (a library may compute in a blocked layout
    // whose channels it pads: its copies must be sized for the padding).
    const ValueRef x4 = in("x4", c({2, 5, 9, 7})), w4 = in("w4", c({3, 5, 3, 3}));
    b.output(conv(b, x4, w4, None{}, {1}, {1}, {1}, false, {0}, 1));
    b.output(conv(b, x2, w1x1, None{}, {2}, {0}, {1}, false, {0}, 1));
    // Dilation with uneven stride and padding; depthwise; a sliced (every 2nd) input.
    const ValueRef x3 = in("x3", c({1, 6, 11, 10})), wd = in("wd", c({6, 2, 2, 3}));
    b.output(conv(b, x3, wd, None{}, {2, 1}, {2, 0}, {2, 3}, false, {0}, 3));
    const ValueRef dw = in("dw", c({6, 1, 3, 3})), bd = in("bd", c({6}));
    b.output(conv(b, x3, dw, bd, {1}, {1}, {1}, false, {0}, 6));
    const ValueRef xs = in("xs", sliced_type(d, {1, 2, 5, 7}, 2)), ws = in("ws", c({3, 2, 2, 2}));
    b.output(conv(b, xs, ws, None{}, {1}, {0}, {1}, false, {0}, 1));
    // 3-d, and transposed 1-d / 2-d (stride, dilation, output_padding, groups).
    const ValueRef x5 = in("x5", c({1, 2, 4, 5, 3})), w5 = in("w5", c({3, 2, 2, 3, 2}));
    b.output(conv(b, x5, w5, None{}, {1, 2, 1}, {1, 0, 1}, {1}, false, {0, 0, 0}, 1));
    const ValueRef wt1 = in("wt1", c({4, 3, 3})), bt1 = in("bt1", c({3}));
    const ValueRef xt1 = in("xt1", c({2, 4, 7}));
    b.output(conv(b, xt1, wt1, bt1, {2}, {1}, {1}, true, {1}, 1));
    const ValueRef wt2 = in("wt2", c({6, 2, 3, 2}));
    b.output(conv(b, x3, wt2, None{}, {2, 3}, {1, 0}, {2, 1}, true, {1, 2}, 3));
    // A decoder's upsampling: 4x4, stride 2, padding 1, with a bias.
    const ValueRef wt3 = in("wt3", c({5, 3, 4, 4})), bt3 = in("bt3", c({3}));
    b.output(conv(b, x4, wt3, bt3, {2}, {1}, {1}, true, {0}, 1));
    // 1x1, stride 1, one group: a matmul call (bias and ReLU after it), on NCHW, channels-last,
    // a size-1 spatial dim, 1-d and 3-d, and a sliced input (copied first).
    const ValueRef wp = in("wp", c({4, 5, 1, 1})), bp = in("bp", c({4}));
    b.output(b.op("aten.relu.default", {conv(b, x2, wp, bp, {1}, {0}, {1}, false, {0}, 1)}));
    const ValueRef x1h = in("x1h", c({2, 5, 1, 6}));
    b.output(conv(b, x1h, wp, None{}, {1}, {0}, {1}, false, {0}, 1));
    b.output(conv(b, x1, in("wp1", c({3, 4, 1})), None{}, {1}, {0}, {1}, false, {0}, 1));
    b.output(conv(b, x5, in("wp3", c({3, 2, 1, 1, 1})), None{}, {1}, {0}, {1}, false, {0}, 1));
    b.output(
        conv(b, xs, in("wps", c({3, 2, 1, 1})), in("bps", c({3})), {1}, {0}, {1}, false, {0}, 1));
    // Products of column buffers where a matmul library takes them: a channels-first 3x3 with
    // a bias (half types: in the product), dilated, 1-d with three taps, and a channels-last
    // weight of nine taps read in place.
    b.output(conv(b, x4, w4, in("b4", c({3})), {1}, {1}, {1}, false, {0}, 1));
    b.output(conv(b, x4, w4, None{}, {1}, {2}, {2}, false, {0}, 1));
    b.output(conv(b, x1, in("w1u", c({5, 4, 3})), in("b1u", c({5})), {2}, {1}, {1}, false, {0}, 1));
    b.output(conv(b, x2, w3l, None{}, {1}, {1}, {1}, false, {0}, 1));
    return b;
  };
  // The ungrouped convolutions above (the transposed 1-d and 4x4 ones too): each one library
  // product where the plugin has a matmul library and no convolution library takes it, but for the
  // sliced 1x1 with a bias in f32/f64: a 1x1 product reading x in place, with no unit stride
  // for a library (a generated matmul). Half types add that bias in a product of copied
  // patches.
  const size_t kUngrouped = compute_dtype(d) == d ? 16 : 17;
  GraphBuilder b = make();
  const Graph graph = finish(b);
  const CompileStats st = check(graph);
  EXPECT_EQ(st.host_steps, 0u) << "convolutions run as kernels";
  const CallCounts library = call_counts(graph, {});
  const bool products = offers_extern("mm", d) && offers_extern("bmm", d);
  if (!offers_extern("conv2d", d)) {
    if (products) {
      EXPECT_EQ(library.matmul, kUngrouped);
    }
    return;
  }
  EXPECT_GT(library.conv, 0u) << "2-d convolutions called the plugin's library";
  // The plugin's library took the 2-d ones: the generated kernels for them, checked too (as
  // products through the matmul library where the plugin has one for the dtype).
  ScheduleOptions generated;
  generated.library_conv = false;
  set_schedule(generated);
  GraphBuilder again = make();
  const Graph without = finish(again);
  check(without);
  const CallCounts counts = call_counts(without, generated);
  EXPECT_EQ(counts.conv, 0u);
  if (products) {
    EXPECT_EQ(counts.matmul, kUngrouped) << "the library's convolutions as products";
  }
}

TEST_P(CompiledConv, EpiloguesFuseIntoTheConvolution) {
  // conv -> batch norm (inference) -> relu -> + residual, as a ResNet block ends.
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef x = input(b, "x", c({2, 4, 6, 5})), w = input(b, "w", c({4, 4, 3, 3}));
  const ValueRef mean = input(b, "mean", c({4})), var = input(b, "var", c({4}), Range{0.5, 2});
  const ValueRef gamma = input(b, "gamma", c({4})), beta = input(b, "beta", c({4}));
  const ValueRef y = conv(b, x, w, None{}, {1}, {1}, {1}, false, {0}, 1);
  const std::vector<ValueRef> bn = b.ops("aten._native_batch_norm_legit_no_training.default",
                                         {y, gamma, beta, mean, var, 0.1, 1e-5}, {}, "bn");
  // A positive residual: relu's output plus it never cancels, so one rounding of the
  // half-precision normalization (the reference's and the kernel's may differ by one where a
  // value lies near a rounding boundary) stays one rounding of the sum, not a large relative
  // error of a small difference.
  const ValueRef residual = input(b, "residual", c({2, 4, 6, 5}), Range{0.5, 2});
  b.output(b.op("aten.add.Tensor", {b.op("aten.relu.default", {bn[0]}), residual}));
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

TEST_P(CompiledConv, ManyChannels) {
  // Channel counts as networks have them, so a kernel that tiles the reduction and the output
  // channels (the ptx plugin's own convolution) crosses every tile edge: 70 output channels
  // (over 64), 198 and 170 output positions (over 128), 24 and 40 input channels times 9 taps
  // (several reduction tiles, and 16-byte rows of channels where the layout is channels-last),
  // groups of 20 channels (copied element by element), an input read from an offset; and
  // long reductions over 15 positions, which the ptx kernel cuts into parts summed apart
  // (conv_split.h), the last part shorter than the others: 328 channels by 9 taps into 40
  // output channels channels-last (2 parts for 16-bit floats, 4 for f32), and two groups of
  // 168 channels into 19 each in NCHW (2 parts per group for f32).
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const auto channels_last = [&](const std::string& name, Shape s) {
    return input(b, name, TensorType{d, s, permuted_strides(s, {0, 2, 3, 1})});
  };
  const ValueRef xl = channels_last("xl", {2, 24, 9, 11}), wl = channels_last("wl", {70, 24, 3, 3});
  b.output(conv(b, xl, wl, None{}, {1}, {1}, {1}, false, {0}, 1));
  const ValueRef x = input(b, "x", c({2, 24, 9, 11})), w = input(b, "w", c({70, 24, 3, 3}));
  b.output(conv(b, x, w, None{}, {1}, {1}, {1}, false, {0}, 1));
  // Two groups of 20 channels, stride 2, on a channels-last input with an NCHW weight.
  const ValueRef xg = channels_last("xg", {1, 40, 19, 35}), wg = input(b, "wg", c({16, 20, 3, 3}));
  b.output(conv(b, xg, wg, None{}, {2}, {1}, {1}, false, {0}, 2));
  // The second image of the channels-last input (read from an offset), dilated.
  const ValueRef xo =
      b.op("aten.slice.Tensor", {xl, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{1}});
  b.output(conv(b, xo, wl, None{}, {1}, {2}, {2}, false, {0}, 1));
  const ValueRef xs = channels_last("xs", {1, 328, 3, 5}),
                 ws = channels_last("ws", {40, 328, 3, 3});
  b.output(conv(b, xs, ws, None{}, {1}, {1}, {1}, false, {0}, 1));
  const ValueRef xn = input(b, "xn", c({1, 336, 3, 5})), wn = input(b, "wn", c({38, 168, 3, 3}));
  b.output(conv(b, xn, wn, None{}, {1}, {1}, {1}, false, {0}, 2));
  const Graph graph = finish(b);
  const CompileStats st = check(graph);
  EXPECT_EQ(st.host_steps, 0u);
  if (offers_extern("conv2d", d)) {
    EXPECT_EQ(call_counts(graph, {}).conv, 6u) << "every one a call of the plugin's library";
  }
}

TEST_P(CompiledConv, BackwardIsAKernel) {
  const DType d = GetParam();
  const auto make = [&] {
    GraphBuilder b = builder();
    const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
    auto backward = [&](const std::string& label, ValueRef dy, ValueRef x, ValueRef w,
                        std::vector<ArgValue> rest) {
      std::vector<ArgValue> args{dy, x, w};
      args.insert(args.end(), rest.begin(), rest.end());
      for (ValueRef out : b.ops("aten.convolution_backward.default", args, {}, label))
        b.output(out);
    };
    // Regular 2-d: stride 2, padding, dilation, groups; all three gradients.
    const ValueRef x = input(b, "x", c({2, 4, 9, 8})), w = input(b, "w", c({6, 2, 3, 2}));
    const ValueRef dy = input(b, "dy", c({2, 6, 5, 4}));
    backward("regular", dy, x, w,
             {ints{6}, ints{2, 2}, ints{1, 1}, ints{1, 2}, false, ints{0, 0}, int64_t{2},
              ints{1, 1, 1}});
    // ResNet's 3x3 on a channels-last input; a depthwise one; a sliced input (copied for a
    // library call) with the weight gradient only, and the input gradient only.
    const ValueRef xl =
        input(b, "xl", TensorType{d, {2, 5, 7, 6}, permuted_strides({2, 5, 7, 6}, {0, 2, 3, 1})});
    const ValueRef wl = input(b, "wl", c({3, 5, 3, 3})), dyl = input(b, "dyl", c({2, 3, 7, 6}));
    backward("channels_last", dyl, xl, wl,
             {ints{3}, ints{1, 1}, ints{1, 1}, ints{1, 1}, false, ints{0, 0}, int64_t{1},
              ints{1, 1, 1}});
    const ValueRef wd = input(b, "wd", c({5, 1, 3, 3})), dyd = input(b, "dyd", c({2, 5, 4, 3}));
    backward(
        "depthwise", dyd, xl, wd,
        {None{}, ints{2, 2}, ints{1, 1}, ints{1, 1}, false, ints{0, 0}, int64_t{5}, ints{1, 1, 0}});
    const ValueRef xs = input(b, "xs", sliced_type(d, {1, 2, 5, 7}, 2));
    const ValueRef ws = input(b, "ws", c({3, 2, 2, 2})), dys = input(b, "dys", c({1, 3, 4, 6}));
    backward(
        "sliced_weight", dys, xs, ws,
        {None{}, ints{1, 1}, ints{0, 0}, ints{1, 1}, false, ints{0, 0}, int64_t{1}, ints{0, 1, 0}});
    backward(
        "sliced_input", dys, xs, ws,
        {None{}, ints{1, 1}, ints{0, 0}, ints{1, 1}, false, ints{0, 0}, int64_t{1}, ints{1, 0, 0}});
    // Transposed 1-d with output_padding; no grad_weight.
    const ValueRef xt = input(b, "xt", c({2, 4, 5})), wt = input(b, "wt", c({4, 3, 3}));
    const ValueRef dyt = input(b, "dyt", c({2, 3, 12}));
    backward("transposed", dyt, xt, wt,
             {ints{3}, ints{2}, ints{0}, ints{1}, true, ints{1}, int64_t{1}, ints{1, 0, 1}});
    // Transposed 2-d with groups: the weight gradient only.
    const ValueRef xg = input(b, "xg", c({1, 4, 3, 4})), wg = input(b, "wg", c({4, 3, 2, 3}));
    const ValueRef dyg = input(b, "dyg", c({1, 6, 6, 6}));
    backward(
        "transposed_groups", dyg, xg, wg,
        {None{}, ints{2, 1}, ints{0, 0}, ints{1, 1}, true, ints{0, 0}, int64_t{2}, ints{0, 1, 0}});
    // 3-d, depthwise, a channels-last grad_output.
    const ValueRef x3 = input(b, "x3", c({1, 3, 4, 3, 5})), w3 = input(b, "w3", c({3, 1, 2, 2, 2}));
    const ValueRef dy3 =
        input(b, "dy3",
              TensorType{d, {1, 3, 3, 2, 4}, permuted_strides({1, 3, 3, 2, 4}, {0, 2, 3, 4, 1})});
    backward("depthwise3d", dy3, x3, w3,
             {ints{3}, ints{1}, ints{0}, ints{1}, false, ints{0}, int64_t{3}, ints{1, 1, 1}});
    return b;
  };
  // The input gradients of one group (channels_last, sliced_input, and the transposed one, a
  // regular convolution of dy) are products where the plugin has a matmul library and no
  // convolution library takes them.
  constexpr size_t kProducts = 3;
  GraphBuilder b = make();
  const Graph graph = finish(b);
  const CompileStats st = check(graph);
  EXPECT_EQ(st.host_steps, 0u) << "convolution_backward runs as kernels";
  const bool products = offers_extern("mm", d) && offers_extern("bmm", d);
  const CallCounts library = call_counts(graph, {});
  if (!offers_extern("conv2d_backward_input", d) && !offers_extern("conv2d_backward_weight", d)) {
    if (products) {
      EXPECT_EQ(library.matmul, kProducts);
    }
    return;
  }
  EXPECT_GT(library.conv, 0u) << "2-d gradients called the plugin's library";
  // The plugin's library took the 2-d gradients: the generated kernels for them, checked too.
  ScheduleOptions generated;
  generated.library_conv = false;
  set_schedule(generated);
  GraphBuilder again = make();
  const Graph without = finish(again);
  check(without);
  const CallCounts counts = call_counts(without, generated);
  EXPECT_EQ(counts.conv, 0u);
  EXPECT_EQ(counts.matmul, products ? kProducts : 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledConv,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
