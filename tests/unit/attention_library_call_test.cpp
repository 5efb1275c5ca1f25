// scaled_dot_product_attention stays whole and becomes the plugin's "attention" call where the
// plugin offers it for the dtype and the call takes the shape; q, k, v are read in place
// through their strides when 16-byte aligned with the head dim contiguous, copied first
// otherwise; a mask is read through strides that are 0 where it broadcasts. Elsewhere sdpa
// decomposes. And the plugins' reading of the call's parameters.
#include <gtest/gtest.h>

#include <bit>
#include <optional>
#include <stdexcept>

#include "core/graph/builder.h"
#include "core/lower/lower_graph.h"
#include "core/ops/op_registry.h"
#include "core/passes/decompose.h"
#include "plugins/kir_support/attention_call.h"

namespace kiln {
namespace {

const std::vector<std::string> kOffers = {"attention f16 bf16"};
constexpr const char* kSdpa = "aten.scaled_dot_product_attention.default";

struct Lowered {
  LoopProgram program;
  std::vector<const LoopKernel*> calls;  // the attention calls
  size_t kernels_before = 0;             // kernels before the first call (copies)
};

// The graph `build` makes, decomposed and lowered for a plugin offering `externs`.
Lowered lower(const std::function<void(GraphBuilder&)>& build,
              const std::vector<std::string>& externs) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, "attention");
  build(b);
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  auto primitive = decompose(*g, *registry, [&](const Graph& graph, const Node& node) {
    return lowers_directly(graph, node, externs);
  });
  EXPECT_TRUE(primitive) << primitive.error().to_string();
  auto lowered = lower_graph(*primitive, externs);
  EXPECT_TRUE(lowered) << lowered.error().to_string();
  Lowered out;
  out.program = lowered->program;
  for (const LoopKernel& k : out.program.kernels) {
    if (k.extern_name == "attention") out.calls.push_back(&k);
    if (out.calls.empty()) ++out.kernels_before;
  }
  return out;
}

kir_support::AttentionCall read(const LoopKernel& k) {
  std::vector<int64_t> params;
  for (const auto& [name, value] : k.attrs) params.push_back(value);
  EXPECT_EQ(k.attrs.size(), std::size(kir_support::kAttentionParams));
  for (size_t i = 0; i < k.attrs.size(); ++i)
    EXPECT_EQ(k.attrs[i].first, kir_support::kAttentionParams[i]);
  return kir_support::read_attention_call(params);
}

TEST(AttentionLibraryCall, ContiguousOperandsAreReadInPlace) {
  const Lowered l = lower(
      [](GraphBuilder& b) {
        const auto t = [](Shape s) { return TensorType::contiguous(DType::BF16, std::move(s)); };
        b.output(b.op(kSdpa,
                      {b.input("q", t({2, 3, 77, 64})), b.input("k", t({2, 3, 93, 64})),
                       b.input("v", t({2, 3, 93, 64}))},
                      {{"is_causal", true}}));
      },
      kOffers);
  ASSERT_EQ(l.calls.size(), 1u);
  EXPECT_EQ(l.program.kernels.size(), 1u) << "no copies, no other kernels";
  const auto c = read(*l.calls[0]);
  EXPECT_EQ(c.dtype, kir::DType::BF16);
  EXPECT_EQ(c.batch, 2);
  EXPECT_EQ(c.heads, 3);
  EXPECT_EQ(c.q_len, 77);
  EXPECT_EQ(c.kv_len, 93);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_TRUE(c.causal);
  EXPECT_EQ(c.scale, 0.125);
  EXPECT_EQ(c.q.batch, 3 * 77 * 64);
  EXPECT_EQ(c.q.head, 77 * 64);
  EXPECT_EQ(c.q.row, 64);
  EXPECT_EQ(c.k.batch, 3 * 93 * 64);
  EXPECT_EQ(c.mask, kir_support::AttentionMask::None);
  EXPECT_EQ(l.calls[0]->extern_inputs.size(), 3u);
}

TEST(AttentionLibraryCall, HeadSplitViewsAndBroadcastMasks) {
  const Lowered l = lower(
      [](GraphBuilder& b) {
        // [batch 2, len 10, heads 4, dim 32] transposed to [2, 4, 10, 32]: read in place.
        const ValueRef x = b.input("x", TensorType::contiguous(DType::F16, {2, 10, 4, 32}));
        const ValueRef q = b.op("aten.transpose.int", {x, int64_t{1}, int64_t{2}});
        const ValueRef mask = b.input("mask", TensorType::contiguous(DType::F16, {10, 10}));
        b.output(b.op(kSdpa, {q, q, q, mask}, {{"scale", 0.5}}));
        const ValueRef keep = b.input("keep", TensorType::contiguous(DType::Bool, {2, 1, 1, 10}));
        b.output(b.op(kSdpa, {q, q, q, keep}));
      },
      kOffers);
  ASSERT_EQ(l.calls.size(), 2u);
  EXPECT_EQ(l.kernels_before, 0u) << "no copies";
  const auto add = read(*l.calls[0]);
  EXPECT_EQ(add.q.offset, 0);
  EXPECT_EQ(add.q.batch, 10 * 4 * 32);
  EXPECT_EQ(add.q.head, 32);
  EXPECT_EQ(add.q.row, 4 * 32);
  EXPECT_EQ(add.scale, 0.5);
  EXPECT_EQ(add.mask, kir_support::AttentionMask::Add);
  EXPECT_EQ(add.mask_at.batch, 0);
  EXPECT_EQ(add.mask_at.head, 0);
  EXPECT_EQ(add.mask_at.row, 10);
  EXPECT_EQ(add.mask_at.col, 1);
  const auto keep = read(*l.calls[1]);
  EXPECT_EQ(keep.mask, kir_support::AttentionMask::Keep);
  EXPECT_EQ(keep.mask_at.batch, 10);
  EXPECT_EQ(keep.mask_at.head, 0);
  EXPECT_EQ(keep.mask_at.row, 0);
  EXPECT_EQ(keep.mask_at.col, 1);
  EXPECT_EQ(l.calls[1]->extern_inputs.size(), 4u);
}

TEST(AttentionLibraryCall, UnalignedOperandsAreCopiedFirst) {
  const Lowered l = lower(
      [](GraphBuilder& b) {
        // Starting one element in: not 16-byte aligned.
        const ValueRef x = b.input("x", TensorType::contiguous(DType::BF16, {1, 2, 9, 33}));
        const ValueRef q =
            b.op("aten.slice.Tensor", {x, int64_t{3}, int64_t{1}, int64_t{33}, int64_t{1}});
        b.output(b.op(kSdpa, {q, q, q}));
      },
      kOffers);
  ASSERT_EQ(l.calls.size(), 1u);
  EXPECT_GE(l.kernels_before, 1u);
  const auto c = read(*l.calls[0]);
  EXPECT_EQ(c.q.offset, 0);
  EXPECT_EQ(c.q.row, 32);
  // Flipped rows (negative strides) and a flipped mask: copied too.
  const Lowered flipped = lower(
      [](GraphBuilder& b) {
        const ValueRef x = b.input("x", TensorType::contiguous(DType::BF16, {1, 2, 9, 32}));
        const ValueRef q = b.op("aten.flip.default", {x, IntList{2}});
        const ValueRef m = b.input("m", TensorType::contiguous(DType::BF16, {9, 9}));
        b.output(b.op(kSdpa, {q, q, q, b.op("aten.flip.default", {m, IntList{0}})}));
      },
      kOffers);
  ASSERT_EQ(flipped.calls.size(), 1u);
  const auto f = read(*flipped.calls[0]);
  EXPECT_EQ(f.q.row, 32);
  EXPECT_GE(f.mask_at.row, 0);
  EXPECT_GE(f.mask_at.offset, 0);
}

// Heads transposed back for the projection (transpose(1, 2), contiguous, view, mm): a plugin
// taking the output's strides writes [batch, len, heads, dim], so the copy is a view and the
// product reads the attention's rows in place: two calls, no kernel between them. Without
// the feature, or with the attention's output also a graph output, the copy stays.
TEST(AttentionLibraryCall, HeadsTransposedForTheProjectionAreWrittenSo) {
  const auto graph = [](bool also_output) {
    return [=](GraphBuilder& b) {
      const auto t = [](Shape s) { return TensorType::contiguous(DType::BF16, std::move(s)); };
      const ValueRef att = b.op(kSdpa,
                                {b.input("q", t({2, 4, 64, 64})), b.input("k", t({2, 4, 80, 64})),
                                 b.input("v", t({2, 4, 80, 64}))},
                                {{"is_causal", false}});
      const ValueRef rows =
          b.op("aten.clone.default", {b.op("aten.transpose.int", {att, int64_t{1}, int64_t{2}})});
      const ValueRef flat = b.op("aten.view.default", {rows, IntList{128, 256}});
      b.output(b.op("aten.mm.default", {flat, b.input("w", t({256, 32}))}));
      if (also_output) b.output(att);
    };
  };
  const auto attr = [](const LoopKernel& k, const std::string& name) -> std::optional<int64_t> {
    for (const auto& [key, value] : k.attrs)
      if (key == name) return value;
    return std::nullopt;
  };
  const std::vector<std::string> offers = {"attention f16 bf16 out_strides", "mm bf16"};
  const Lowered l = lower(graph(false), offers);
  ASSERT_EQ(l.calls.size(), 1u);
  ASSERT_EQ(l.program.kernels.size(), 2u) << "the attention call and the product";
  EXPECT_EQ(attr(*l.calls[0], "out_stride_b"), 64 * 4 * 64);
  EXPECT_EQ(attr(*l.calls[0], "out_stride_h"), 64);
  EXPECT_EQ(attr(*l.calls[0], "out_stride_l"), 4 * 64);
  const LoopKernel& mm = l.program.kernels[1];
  EXPECT_EQ(mm.extern_name, "mm");
  EXPECT_EQ(mm.extern_inputs.at(0), l.calls[0]->extern_outputs.at(0)) << "read in place";
  EXPECT_EQ(attr(mm, "a_row_stride"), 256);
  const Lowered plain = lower(graph(false), {"attention f16 bf16", "mm bf16"});
  ASSERT_EQ(plain.calls.size(), 1u);
  EXPECT_EQ(plain.program.kernels.size(), 3u) << "the transpose copied";
  EXPECT_FALSE(attr(*plain.calls[0], "out_stride_l"));
  const Lowered seen = lower(graph(true), offers);
  ASSERT_EQ(seen.calls.size(), 1u);
  EXPECT_FALSE(attr(*seen.calls[0], "out_stride_l")) << "the caller reads it contiguous";
}

TEST(AttentionLibraryCall, OtherShapesAndPluginsDecompose) {
  const auto sdpa = [](DType d, int64_t dim) {
    return [=](GraphBuilder& b) {
      const ValueRef q = b.input("q", TensorType::contiguous(d, {1, 2, 9, dim}));
      b.output(b.op(kSdpa, {q, q, q}));
    };
  };
  EXPECT_EQ(lower(sdpa(DType::BF16, 64), {}).calls.size(), 0u) << "no attention on offer";
  EXPECT_EQ(lower(sdpa(DType::F32, 64), kOffers).calls.size(), 0u) << "f32";
  EXPECT_EQ(lower(sdpa(DType::BF16, 40), kOffers).calls.size(), 0u) << "dim not 16k";
  EXPECT_EQ(lower(sdpa(DType::BF16, 256), kOffers).calls.size(), 0u) << "dim over 128";
  EXPECT_EQ(lower(sdpa(DType::F16, 64), {"attention bf16"}).calls.size(), 0u) << "bf16 only";
  const Lowered decomposed = lower(sdpa(DType::F32, 64), kOffers);
  EXPECT_GT(decomposed.program.kernels.size(), 1u);
}

TEST(AttentionCallParams, RoundTripAndBadInput) {
  kir_support::AttentionCall c;
  c.dtype = kir::DType::F16;
  c.batch = 2, c.heads = 3, c.q_len = 5, c.kv_len = 7, c.head_dim = 16, c.scale = 0.25;
  c.q = {8, 480, 80, 16, 1};
  c.k = c.v = {0, 336, 112, 16, 1};
  c.mask = kir_support::AttentionMask::Add;
  c.mask_at = {0, 0, 0, 7, 1};
  c.out = kir_support::contiguous_output(c);
  const std::vector<int64_t> params = kir_support::attention_params(c);
  EXPECT_EQ(params.size(), std::size(kir_support::kAttentionParams)) << "contiguous: 26";
  const auto back = kir_support::read_attention_call(params);
  EXPECT_EQ(back.key(), c.key());
  EXPECT_EQ(back.scale, 0.25);
  EXPECT_EQ(back.mask_dtype, kir::DType::F16);
  // q spans offset + last batch, head, row and column + 1 elements, 2 bytes each.
  EXPECT_EQ(back.buffer_bytes()[0], (8 + 480 + 2 * 80 + 4 * 16 + 15 + 1) * 2);
  EXPECT_EQ(back.buffer_bytes().size(), 5u);
  const auto rejects = [&](size_t i, int64_t value, const std::string& why) {
    std::vector<int64_t> p = params;
    p[i] = value;
    try {
      kir_support::read_attention_call(p);
      ADD_FAILURE() << "parameter " << i << " = " << value << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  rejects(0, static_cast<int64_t>(kir::DType::F32), "not f16 or bf16");
  rejects(3, -1, "negative");
  rejects(6, 2, "causal");
  rejects(7, std::bit_cast<int64_t>(std::numeric_limits<double>::infinity()), "not finite");
  rejects(20, 3, "mask kind");
  EXPECT_THROW(kir_support::read_attention_call(std::vector<int64_t>(3, 0)), std::invalid_argument);
  // The output as [batch, q_len, heads, head_dim]: three more parameters, read back.
  kir_support::AttentionCall t = c;
  t.out = {0, 5 * 3 * 16, 16, 3 * 16, 1};
  std::vector<int64_t> with_out = kir_support::attention_params(t);
  ASSERT_EQ(with_out.size(), params.size() + 3);
  const auto t_back = kir_support::read_attention_call(with_out);
  EXPECT_EQ(t_back.key(), t.key());
  EXPECT_NE(t_back.key(), c.key());
  EXPECT_EQ(t_back.out.row, 48);
  EXPECT_EQ(t_back.buffer_bytes().back(), 2 * 3 * 5 * 16 * 2);
  // Strides that leave gaps or overlap are refused.
  for (const int64_t row : {int64_t{64}, int64_t{16}}) {
    with_out.back() = row;
    try {
      kir_support::read_attention_call(with_out);
      ADD_FAILURE() << "output row stride " << row << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("dense order"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln
