// A plugin whose conv2d lists `implicit_gemm` gets x and the weight channels-last: copied so
// by a kernel before the call where they are not, read in place where they are; y keeps x's
// layout (only where the channels of a group fill whole 16-byte rows); grouped convolutions of
// fewer than 8 channels per group (depthwise) keep the generated kernels. Without the feature x and
// the weight are read in place as they are. (The numbers are checked against the oracle through the
// ptx plugin's own kernel in differential_conv_test.cpp.)
#include <gtest/gtest.h>

#include <optional>

#include "core/graph/builder.h"
#include "core/lower/lower_graph.h"
#include "core/ops/op_registry.h"
#include "tests/unit/differential.h"

namespace kiln {
namespace {

const std::vector<std::string> kImplicitGemm = {"conv2d bf16 strides implicit_gemm"};
const std::vector<std::string> kStrided = {"conv2d bf16 strides"};

LoopProgram lower(const TensorType& x, const TensorType& w, int64_t groups,
                  const std::vector<std::string>& externs) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, "conv");
  const ValueRef xv = b.input("x", x), wv = b.input("w", w);
  b.output(b.op("aten.convolution.default", {xv, wv, None{}, IntList{1, 1}, IntList{1, 1},
                                             IntList{1, 1}, false, IntList{0, 0}, groups}));
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  auto lowered = lower_graph(*g, externs);
  EXPECT_TRUE(lowered) << lowered.error().to_string();
  return lowered->program;
}

struct Kernels {
  std::optional<LoopKernel> call;  // a copy: the program is gone when the test reads it
  size_t others = 0;               // kernels beside the call
  bool reads_x = false;            // the call reads the input buffers themselves
  bool reads_w = false;
};

Kernels kernels(const LoopProgram& p) {
  Kernels k;
  for (const LoopKernel& kernel : p.kernels) {
    if (kernel.kind == LoopKernelKind::Extern && kernel.extern_name == "conv2d")
      k.call = kernel;
    else
      ++k.others;
  }
  if (k.call) {
    k.reads_x = p.buffers.at(static_cast<size_t>(k.call->extern_inputs.at(0))).name == "x";
    k.reads_w = p.buffers.at(static_cast<size_t>(k.call->extern_inputs.at(1))).name == "w";
  }
  return k;
}

TensorType nchw(Shape s) {
  return TensorType::contiguous(DType::BF16, std::move(s));
}
TensorType channels_last(const Shape& s) {
  return {DType::BF16, s, test::permuted_strides(s, {0, 2, 3, 1})};
}

TEST(ImplicitGemmCall, NchwOperandsAreCopiedChannelsLast) {
  const Kernels k = kernels(lower(nchw({2, 16, 5, 6}), nchw({8, 16, 3, 3}), 1, kImplicitGemm));
  ASSERT_TRUE(k.call);
  EXPECT_EQ(k.others, 2u) << "one copy of x, one of the weight";
  EXPECT_FALSE(k.reads_x);
  EXPECT_FALSE(k.reads_w);
  EXPECT_EQ(extern_attr(*k.call, "x_stride_c"), 1);
  EXPECT_EQ(extern_attr(*k.call, "x_stride_w"), 16);
  EXPECT_EQ(extern_attr(*k.call, "w_stride_c"), 1);
  EXPECT_EQ(extern_attr(*k.call, "w_stride_k"), 16 * 9);
  // y NCHW, as PyTorch gives it for an NCHW x.
  EXPECT_EQ(extern_attr(*k.call, "y_stride_w"), 1);
  EXPECT_EQ(extern_attr(*k.call, "y_stride_k"), 30);
}

TEST(ImplicitGemmCall, ChannelsLastOperandsAreReadInPlace) {
  const Kernels k =
      kernels(lower(channels_last({2, 16, 5, 6}), channels_last({8, 16, 3, 3}), 1, kImplicitGemm));
  ASSERT_TRUE(k.call);
  EXPECT_TRUE(k.reads_x);
  EXPECT_TRUE(k.reads_w);
  EXPECT_EQ(extern_attr(*k.call, "x_stride_c"), 1);
  EXPECT_EQ(extern_attr(*k.call, "w_stride_c"), 1);
  EXPECT_EQ(extern_attr(*k.call, "y_stride_k"), 1) << "y channels-last, as x is";
}

TEST(ImplicitGemmCall, FewChannelsPerGroupKeepTheGeneratedKernels) {
  // Depthwise: one channel per group.
  EXPECT_FALSE(kernels(lower(nchw({2, 8, 5, 6}), nchw({8, 1, 3, 3}), 8, kImplicitGemm)).call);
  // Two groups of 16 channels go to the call; one group of 3 channels (an RGB stem) too, read
  // as it is (16-byte rows of channels do not apply).
  EXPECT_TRUE(kernels(lower(nchw({2, 32, 5, 6}), nchw({8, 16, 3, 3}), 2, kImplicitGemm)).call);
  // Two groups of 12 channels: the call, x read as it is (not whole 16-byte rows of channels).
  const Kernels twelve = kernels(lower(nchw({2, 24, 5, 6}), nchw({8, 12, 3, 3}), 2, kImplicitGemm));
  ASSERT_TRUE(twelve.call);
  EXPECT_TRUE(twelve.reads_x);
  EXPECT_EQ(extern_attr(*twelve.call, "x_stride_w"), 1);
  const Kernels stem = kernels(lower(nchw({2, 3, 5, 6}), nchw({8, 3, 3, 3}), 1, kImplicitGemm));
  ASSERT_TRUE(stem.call);
  EXPECT_TRUE(stem.reads_x);
  EXPECT_EQ(extern_attr(*stem.call, "x_stride_w"), 1);
}

TEST(ImplicitGemmCall, WithoutTheFeatureOperandsAreReadAsTheyAre) {
  const Kernels k = kernels(lower(nchw({2, 16, 5, 6}), nchw({8, 16, 3, 3}), 1, kStrided));
  ASSERT_TRUE(k.call);
  EXPECT_EQ(k.others, 0u);
  EXPECT_TRUE(k.reads_x);
  EXPECT_EQ(extern_attr(*k.call, "x_stride_w"), 1);
  EXPECT_EQ(extern_attr(*k.call, "w_stride_s"), 1);
  EXPECT_TRUE(kernels(lower(nchw({2, 8, 5, 6}), nchw({8, 1, 3, 3}), 8, kStrided)).call);
}

}  // namespace
}  // namespace kiln
