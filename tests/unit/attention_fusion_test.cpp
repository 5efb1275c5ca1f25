// Which written-out attentions core/passes/attention_fusion.h rewrites: the pattern as matmul
// traces it, with its scale and mask, becomes one scaled_dot_product_attention node (kᵀ taken
// back to k, the scale from the division); patterns whose scores or softmax something else
// reads, or whose mask is added after the scale is applied differently, keep their ops; a
// causal mask built in the graph becomes is_causal.
#include "core/passes/attention_fusion.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/graph/builder.h"
#include "core/interp/compare.h"
#include "core/interp/interpreter.h"
#include "core/interp/random_tensor.h"
#include "core/ops/op_def.h"
#include "core/ops/op_registry.h"
#include "tests/unit/traced_causal_mask.h"

namespace kiln {
namespace {

struct Built {
  Graph graph;
  int rewritten = 0;
  Graph fused;
};

// A plugin whose fused call takes every attention (which one does the pass does not see).
const AttentionTaken kAnyAttention = [](const TensorType&, const TensorType&) { return true; };

int count(const Graph& g, const std::string& op) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [&](const Node& n) { return op_name(n) == op; }));
}

// softmax((q @ kᵀ) / 8 + mask) @ v over [2, 3, 5, 16] (`mask_first`: the mask added before
// the division); with `probs_out` the softmax is a graph output too. The mask is an input, or
// with `built_from` > 0 built in the graph hiding keys from that distance after the query on.
Built build(bool mask_first, bool probs_out, int64_t built_from = 0, int64_t mask_rows = 5) {
  auto registry = OpRegistry::create();
  EXPECT_TRUE(registry);
  GraphBuilder b(*registry, "attention");
  const auto t = [](Shape s) { return TensorType::contiguous(DType::F32, std::move(s)); };
  const ValueRef q = b.input("q", t({2, 3, 5, 16})), k = b.input("k", t({2, 3, 7, 16}));
  const ValueRef v = b.input("v", t({2, 3, 7, 16}));
  const ValueRef mask = built_from > 0
                            ? test::traced_causal_mask(b, mask_rows, 7, DType::F32, built_from)
                            : b.input("mask", t({5, 7}));
  const ValueRef kt = b.op("aten.permute.default", {k, IntList{0, 1, 3, 2}});
  ValueRef s = b.op("aten.bmm.default", {b.op("aten.view.default", {q, IntList{6, 5, 16}}),
                                         b.op("aten.view.default", {kt, IntList{6, 16, 7}})});
  s = b.op("aten.view.default", {s, IntList{2, 3, 5, 7}});
  if (mask_first) s = b.op("aten.add.Tensor", {s, mask});
  s = b.op("aten.div.Tensor", {s, 8.0});
  if (!mask_first) s = b.op("aten.add.Tensor", {s, mask});
  const ValueRef p = b.op("aten._softmax.default", {s, int64_t{-1}, false});
  const ValueRef o = b.op("aten.bmm.default", {b.op("aten.view.default", {p, IntList{6, 5, 7}}),
                                               b.op("aten.view.default", {v, IntList{6, 7, 16}})});
  b.output(b.op("aten.view.default", {o, IntList{2, 3, 5, 16}}));
  if (probs_out) b.output(p);
  auto g = b.finish();
  EXPECT_TRUE(g) << g.error().to_string();
  Built out{*g};
  auto fused = fuse_attention(*g, kAnyAttention, &out.rewritten);
  EXPECT_TRUE(fused) << fused.error().to_string();
  out.fused = *fused;
  return out;
}

TEST(AttentionFusion, TheWrittenOutPatternBecomesOneAttention) {
  const Built built = build(false, false);
  EXPECT_EQ(built.rewritten, 1);
  const Graph& g = built.fused;
  EXPECT_EQ(count(g, "aten.scaled_dot_product_attention.default"), 1);
  EXPECT_EQ(count(g, "aten._softmax.default"), 0);
  EXPECT_EQ(count(g, "aten.bmm.default"), 0);
  EXPECT_EQ(count(g, "aten.permute.default"), 0) << "kᵀ's permute is no longer read";
  for (const Node& n : g.nodes) {
    if (op_name(n) != "aten.scaled_dot_product_attention.default") continue;
    EXPECT_EQ(g.value(std::get<ValueRef>(n.args[1])).name, "k");
    EXPECT_EQ(g.value(std::get<ValueRef>(n.args[3])).name, "mask");
    EXPECT_EQ(std::get<double>(n.args[6]), 1.0 / 8.0);
  }
  EXPECT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.type(g.outputs[0]), built.graph.type(built.graph.outputs[0]));
}

// A mask built from no input that hides exactly the keys after each query is is_causal; one
// hiding from the second key after on stays a mask.
TEST(AttentionFusion, AConstantCausalMaskBecomesIsCausal) {
  for (int64_t from : {1, 2}) {
    const Built built = build(false, false, from);
    EXPECT_EQ(built.rewritten, 1);
    for (const Node& n : built.fused.nodes) {
      if (op_name(n) != "aten.scaled_dot_product_attention.default") continue;
      EXPECT_EQ(std::get<bool>(n.args[5]), from == 1) << "is_causal";
      EXPECT_EQ(std::holds_alternative<None>(n.args[3]), from == 1) << "no mask";
    }
  }
}

// The rewritten graph means what the graph as written does: both on the reference interpreter,
// the same random inputs (f32), with the input mask, the causal one built in the graph, and
// the one built hiding from the second key on.
TEST(AttentionFusion, TheRewriteKeepsTheGraphsMeaning) {
  for (int64_t built_from : {0, 1, 2}) {
    const Built built = build(false, false, built_from);
    ASSERT_EQ(built.rewritten, 1);
    std::vector<HostTensor> inputs;
    uint64_t seed = 11;
    for (ValueRef r : built.graph.inputs)
      inputs.push_back(random_tensor(built.graph.type(r), seed++, std::pair{-2.0, 2.0}));
    auto written = interpret(built.graph, inputs);
    auto fused = interpret(built.fused, inputs);
    ASSERT_TRUE(written && fused);
    const Comparison c = compare((*fused)[0], (*written)[0]);
    EXPECT_TRUE(c.ok()) << "mask " << built_from << ": max abs error " << c.max_abs;
  }
}

TEST(AttentionFusion, PatternsItCannotTakeKeepTheirOps) {
  const Built saved = build(false, true);
  EXPECT_EQ(saved.rewritten, 0) << "the softmax is a graph output";
  EXPECT_EQ(saved.fused.nodes.size(), saved.graph.nodes.size());
  const Built masked_first = build(true, false);
  EXPECT_EQ(masked_first.rewritten, 0) << "the mask is divided by the scale too";
  // A plugin whose call does not take these shapes: nothing rewritten.
  int rewritten = -1;
  auto kept = fuse_attention(
      saved.graph, [](const TensorType&, const TensorType&) { return false; }, &rewritten);
  ASSERT_TRUE(kept);
  EXPECT_EQ(rewritten, 0);
}

// A product whose operands come from ops the pattern does not follow (a cat: a tensor list,
// not a tensor, as its first argument) is left alone, without an error; a constant mask of
// one row, broadcast over the queries, is no causal mask even where its row reads like one.
TEST(AttentionFusion, OtherProductsAndBroadcastMasksAreLeftAlone) {
  auto registry = OpRegistry::create();
  ASSERT_TRUE(registry);
  GraphBuilder b(*registry, "other");
  const auto t = [](Shape s) { return TensorType::contiguous(DType::F32, std::move(s)); };
  const ValueRef x = b.input("x", t({2, 3, 4})), y = b.input("y", t({2, 4, 5}));
  const ValueRef joined = b.op("aten.cat.default", {TensorList{{x, x}}, int64_t{1}});
  b.output(b.op("aten.bmm.default", {joined, y}));
  auto g = b.finish();
  ASSERT_TRUE(g) << g.error().to_string();
  int rewritten = -1;
  ASSERT_TRUE(fuse_attention(*g, kAnyAttention, &rewritten));
  EXPECT_EQ(rewritten, 0);

  // The causal pattern's first row, [0, -inf, ...] over [1, 7], broadcast to every query.
  const Built row = build(false, false, 1, 1);
  EXPECT_EQ(row.rewritten, 1);
  for (const Node& n : row.fused.nodes)
    if (op_name(n) == "aten.scaled_dot_product_attention.default") {
      EXPECT_FALSE(std::get<bool>(n.args[5])) << "not is_causal";
      EXPECT_TRUE(std::holds_alternative<ValueRef>(n.args[3])) << "the mask stays";
    }
}

}  // namespace
}  // namespace kiln
