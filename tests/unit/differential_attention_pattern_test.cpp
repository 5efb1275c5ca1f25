// Attention written out as PyTorch traces it (head-split views, kᵀ by permute, expand and
// clone to 3-d, bmm, a scale, an additive mask, _softmax, bmm): core/passes/attention_fusion.h
// makes each one scaled dot-product attention where the plugin's fused call takes it (ptx:
// f16, bf16). The graph as written is checked in f32 (no rewrite there); the rewritten graph
// (as the pass makes it for such a plugin) in every dtype against its own reference
// (attention in f64): the graph as written rounds half-precision scores and probabilities to
// the dtype, the fused form does not. AttentionFusion.TheRewriteKeepsTheGraphsMeaning checks
// the two graphs mean the same. Odd lengths, the
// scale as a division and as a product, a mask broadcast over batch and heads, no mask, a
// causal mask built in the graph (is_causal); a pattern whose softmax the graph also returns
// keeps its ops.
#include <gtest/gtest.h>

#include <cmath>

#include "core/passes/attention_fusion.h"
#include "tests/unit/differential.h"
#include "tests/unit/traced_causal_mask.h"

namespace kiln::test {
namespace {

class CompiledAttentionPattern : public Differential,
                                 public ::testing::WithParamInterface<DType> {};

// x viewed as `sizes` (through a clone of an expand to its own sizes, as matmul traces it).
ValueRef as_batched(GraphBuilder& b, ValueRef x, const IntList& sizes) {
  const IntList own = b.type(x).sizes;
  x = b.op("aten.clone.default", {b.op("aten.expand.default", {x, own})});
  return b.op("aten.view.default", {x, sizes});
}

// softmax(q kᵀ `scale_op` `scale` + mask) v over [batch, heads, s, d] written out; the
// probabilities too when `keep_probs`.
std::vector<ValueRef> written_out(GraphBuilder& b, ValueRef q, ValueRef k, ValueRef v,
                                  std::optional<ValueRef> mask, const std::string& scale_op,
                                  double scale) {
  const IntList qs = b.type(q).sizes, ks = b.type(k).sizes, vs = b.type(v).sizes;
  const int64_t batch = qs[0] * qs[1];
  const ValueRef kt = b.op("aten.permute.default", {k, IntList{0, 1, 3, 2}});
  ValueRef s = b.op("aten.bmm.default", {as_batched(b, q, {batch, qs[2], qs[3]}),
                                         as_batched(b, kt, {batch, ks[3], ks[2]})});
  s = b.op("aten.view.default", {s, IntList{qs[0], qs[1], qs[2], ks[2]}});
  s = b.op(scale_op, {s, scale});
  if (mask) s = b.op("aten.add.Tensor", {s, *mask});
  const ValueRef p = b.op("aten._softmax.default", {s, int64_t{-1}, false});
  const ValueRef pb = b.op("aten.view.default",
                           {b.op("aten.expand.default", {p, IntList{qs[0], qs[1], qs[2], ks[2]}}),
                            IntList{batch, qs[2], ks[2]}});
  const ValueRef o = b.op("aten.bmm.default", {pb, as_batched(b, v, {batch, vs[2], vs[3]})});
  return {b.op("aten.view.default", {o, IntList{qs[0], qs[1], qs[2], vs[3]}}), p};
}

TEST_P(CompiledAttentionPattern, MatchesTheGraphAsWritten) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  // q and k as head-split views of one [batch, len, 2 * hidden] projection, in [-1, 1]: where
  // attention decomposes (no fused call), half-precision scores round to the dtype, an error
  // that grows with their size past the dtype's tolerance. Values in [1, 2], as the attention
  // test draws them: their weighted means do not cancel to near zero.
  const Range unit{-1, 1}, values{1, 2};
  const ValueRef qkv = input(b, "qk", c({2, 45, 2 * 4 * 32}), unit);
  std::vector<ValueRef> heads;
  for (int64_t part = 0; part < 2; ++part) {
    ValueRef x =
        b.op("aten.slice.Tensor", {qkv, int64_t{2}, part * 128, (part + 1) * 128, int64_t{1}});
    x = b.op("aten.view.default", {x, IntList{2, 45, 4, 32}});
    heads.push_back(b.op("aten.permute.default", {x, IntList{0, 2, 1, 3}}));
  }
  const ValueRef mask = input(b, "mask", c({45, 45}), Range{-3, 0});
  b.output(written_out(b, heads[0], heads[1], input(b, "v", c({2, 4, 45, 32}), values), mask,
                       "aten.div.Tensor", std::sqrt(32.0))[0]);
  // Cross attention with the scale as a product, no mask, 19 keys.
  const ValueRef k2 = input(b, "k2", c({1, 3, 19, 64}), unit);
  const ValueRef v2 = input(b, "v2", c({1, 3, 19, 64}), values);
  b.output(written_out(b, input(b, "q2", c({1, 3, 7, 64}), unit), k2, v2, std::nullopt,
                       "aten.mul.Tensor", 0.125)[0]);
  // GPT-2's causal mask built in the graph: is_causal.
  const ValueRef q4 = input(b, "q4", c({1, 2, 33, 32}), unit);
  b.output(written_out(b, q4, input(b, "k4", c({1, 2, 33, 32}), unit),
                       input(b, "v4", c({1, 2, 33, 32}), values), traced_causal_mask(b, 33, 33, d),
                       "aten.div.Tensor", std::sqrt(32.0))[0]);
  // The probabilities read too (as a training graph saves them): the ops stay.
  const std::vector<ValueRef> kept =
      written_out(b, input(b, "q3", c({1, 2, 5, 16})), input(b, "k3", c({1, 2, 6, 16})),
                  input(b, "v3", c({1, 2, 6, 16})), std::nullopt, "aten.div.Tensor", 4.0);
  b.output(kept[0]);
  b.output(kept[1]);
  const Graph graph = finish(b);
  int rewritten = 0;
  auto fused = fuse_attention(
      graph, [](const TensorType&, const TensorType&) { return true; }, &rewritten);
  ASSERT_TRUE(fused) << fused.error().to_string();
  EXPECT_EQ(rewritten, 3);
  if (d == DType::F32) check(graph);  // as written (on ptx f32 keeps its ops)
  const CompileStats st = check(*fused);
  EXPECT_EQ(st.host_steps, 0u);
  if (offers_extern("attention", d)) {
    EXPECT_EQ(st.externs, 3u + 2u) << "three fused attentions, the kept pattern's two products";
  }
}

INSTANTIATE_TEST_SUITE_P(All, CompiledAttentionPattern,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16), DTypeName());

}  // namespace
}  // namespace kiln::test
