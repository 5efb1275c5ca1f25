// scaled_dot_product_attention compiled against the reference, in f16 and bf16: on a plugin
// offering the fused "attention" call (ptx) as that call, elsewhere as its decomposition.
// Odd lengths (a last row block and key tile cut short), one key, more keys than queries and
// fewer, causal, an additive mask broadcast over batch and heads, a bool mask per batch, one
// hiding a whole row, the dtype's lowest value as a mask, q/k/v as the head-split views a
// transformer makes (read in place), views whose strides the call cannot take (every other
// element, flipped: copied first), rank 3, head dims 16, 64, 80 and 128, and 300 rows (several
// blocks of query rows).
#include <gtest/gtest.h>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledAttention : public Differential, public ::testing::WithParamInterface<DType> {};

constexpr const char* kSdpa = "aten.scaled_dot_product_attention.default";

// q and k of [batch, heads, len, dim] as a transformer splits them: views of one
// [batch, len, 2 * heads * dim] projection, heads moved before the rows.
std::vector<ValueRef> head_split(GraphBuilder& b, ValueRef qk, int64_t heads, int64_t dim) {
  const TensorType& t = b.type(qk);
  const int64_t batch = t.sizes[0], len = t.sizes[1], parts = t.sizes[2] / (heads * dim);
  std::vector<ValueRef> out;
  for (int64_t part = 0; part < parts; ++part) {
    ValueRef x = b.op("aten.slice.Tensor",
                      {qk, int64_t{2}, part * heads * dim, (part + 1) * heads * dim, int64_t{1}});
    x = b.op("aten.view.default", {x, IntList{batch, len, heads, dim}});
    out.push_back(b.op("aten.transpose.int", {x, int64_t{1}, int64_t{2}}));
  }
  return out;
}

TEST_P(CompiledAttention, MatchesTheReference) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  // Values in [1, 2]: each output is a weighted mean of them, so a row read wrongly is far off
  // while the rounding of the weights to the dtype (as PyTorch's half attention rounds them)
  // stays within the dtype's relative tolerance; values of both signs would cancel and leave
  // outputs near 0 that only an absolute bound could judge.
  const auto values = [&](const std::string& name, Shape s) {
    return input(b, name, c(std::move(s)), Range{1, 2});
  };
  // q in [-2, 2]: scores spread enough that the softmax is far from flat, so a running max
  // or sum rescaled wrongly between key tiles shows.
  const ValueRef q = input(b, "q", c({2, 3, 77, 64}), Range{-2, 2});
  const ValueRef k = input(b, "k", c({2, 3, 93, 64}));
  const ValueRef v = values("v", {2, 3, 93, 64});
  output_of(b, "plain", kSdpa, {q, k, v});
  output_of(b, "causal", kSdpa, {q, k, v}, {{"is_causal", true}});
  output_of(b, "scaled", kSdpa, {q, k, v}, {{"scale", 0.1}});
  const ValueRef add = input(b, "add_mask", c({77, 93}));
  output_of(b, "additive_mask", kSdpa, {q, k, v, add});
  const ValueRef keep = input(b, "keep_mask", TensorType::contiguous(DType::Bool, {2, 1, 77, 93}));
  output_of(b, "bool_mask", kSdpa, {q, k, v, keep});
  // Query 5 sees no key: its row is 0, as PyTorch gives it (not NaN).
  const ValueRef rows =
      b.op("aten.unsqueeze.default",
           {b.op("aten.arange.start_step", {int64_t{0}, int64_t{77}, int64_t{1}}), int64_t{1}});
  const ValueRef no_row_5 =
      b.op("aten.logical_and.default", {keep, b.op("aten.ne.Scalar", {rows, int64_t{5}})});
  output_of(b, "hidden_row", kSdpa, {q, k, v, no_row_5});
  // An additive mask of the dtype's lowest value where the bool mask hides (Hugging Face's
  // padding): bf16's times log2(e) is past f32's range.
  const double lowest = d == DType::BF16 ? -3.3895313892515355e38 : -65504.0;
  const ValueRef lowest_mask =
      b.op("aten.where.self", {keep, input(b, "add_base", c({2, 1, 77, 93})), lowest});
  output_of(b, "lowest_mask", kSdpa, {q, k, v, lowest_mask});
  // More queries than keys, causal: the rows past the keys see them all.
  output_of(b, "causal_fewer_keys", kSdpa, {k, q, values("vq", {2, 3, 77, 64})},
            {{"is_causal", true}});
  const ValueRef k1 = input(b, "k1", c({2, 3, 1, 64}));
  output_of(b, "one_key", kSdpa, {q, k1, values("v1", {2, 3, 1, 64})});
  const auto qk = head_split(b, input(b, "qk", c({2, 70, 2 * 4 * 32})), 4, 32);
  const auto vs = head_split(b, values("vp", {2, 70, 4 * 32}), 4, 32);
  output_of(b, "head_split_causal", kSdpa, {qk[0], qk[1], vs[0]}, {{"is_causal", true}});
  // Every other element of the head dim: not contiguous, copied first.
  const ValueRef wide = input(b, "wide", c({1, 2, 33, 64}));
  const ValueRef strided =
      b.op("aten.slice.Tensor", {wide, int64_t{3}, int64_t{0}, int64_t{64}, int64_t{2}});
  output_of(b, "strided", kSdpa, {strided, strided, values("vw", {1, 2, 33, 32})});
  const ValueRef q3 = input(b, "q3", c({3, 130, 128})), k3 = input(b, "k3", c({3, 65, 128}));
  output_of(b, "rank3_dim128", kSdpa, {q3, k3, values("v3", {3, 65, 128})}, {{"is_causal", true}});
  const ValueRef q16 = input(b, "q16", c({1, 1, 5, 16})), k16 = input(b, "k16", c({1, 1, 3, 16}));
  output_of(b, "dim16", kSdpa, {q16, k16, values("v16", {1, 1, 3, 16})});
  // Head dim 80: its tiles' 16-byte chunks do not divide among the threads.
  const ValueRef q80 = input(b, "q80", c({1, 2, 37, 80}), Range{-2, 2});
  output_of(b, "dim80", kSdpa,
            {q80, input(b, "k80", c({1, 2, 45, 80})), values("v80", {1, 2, 45, 80})});
  // Queries in reverse order (a flipped view: negative strides, copied first).
  output_of(b, "flipped", kSdpa, {b.op("aten.flip.default", {q, IntList{2}}), k, v});
  // Several blocks of query rows however they are tiled (64 or 128 rows): causal blocks past
  // the first, whose first key tiles need no mask, and an additive mask over a key count that
  // no key tile divides.
  const ValueRef q_long = input(b, "q_long", c({1, 2, 300, 64}), Range{-2, 2});
  const ValueRef k_long = input(b, "k_long", c({1, 2, 300, 64}));
  const ValueRef v_long = values("v_long", {1, 2, 300, 64});
  output_of(b, "long_causal", kSdpa, {q_long, k_long, v_long}, {{"is_causal", true}});
  output_of(b, "long_masked", kSdpa, {q_long, k_long, v_long, input(b, "add_long", c({300, 300}))});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
  if (offers_extern("attention", d)) {
    EXPECT_EQ(st.externs, 17u) << "each attention is one call, and nothing else is";
  }
}

// The heads put back beside each other for the projection after them (transpose(1, 2),
// contiguous, view, mm), as a transformer does: where the call takes the output's strides it
// writes [batch, len, heads, dim] and the product reads its rows in place, odd lengths. The
// weights are positive: products of mixed signs would cancel towards 0, where the halves'
// rounding of the attention's output is no longer relatively small.
TEST_P(CompiledAttention, HeadsBackInRowsForTheProjection) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const auto qk = head_split(b, input(b, "qk", c({2, 70, 2 * 4 * 32}), Range{-2, 2}), 4, 32);
  const auto vs = head_split(b, input(b, "v", c({2, 70, 4 * 32}), Range{1, 2}), 4, 32);
  const ValueRef att = b.op(kSdpa, {qk[0], qk[1], vs[0]}, {{"is_causal", true}});
  const ValueRef rows =
      b.op("aten.clone.default", {b.op("aten.transpose.int", {att, int64_t{1}, int64_t{2}})});
  const ValueRef flat = b.op("aten.view.default", {rows, IntList{140, 128}});
  output_of(b, "projected", "aten.mm.default",
            {flat, input(b, "w", c({128, 24}), Range{0.01, 0.25})});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
  if (offers_extern("attention", d) && offers_extern("mm", d)) {
    EXPECT_EQ(st.externs, 2u);
    if (offers_extern_feature("attention", "out_strides")) {
      EXPECT_EQ(st.kernels, 0u) << "no copy between the attention and the product";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, CompiledAttention, ::testing::Values(DType::F16, DType::BF16),
                         DTypeName());

}  // namespace
}  // namespace kiln::test
