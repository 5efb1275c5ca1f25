// cat/pad, indexing, scatter, matmul, norms, composites, conv/pool and creation ops
// against hand-worked values.
#include <cmath>

#include "op_test_util.h"

namespace kiln::test {
namespace {

TEST(CatPad, CatPromotesAndSkipsLegacyEmpty) {
  auto r = run_op("aten.cat.default",
                  {std::vector<HostTensor>{tensor(DType::I32, {1, 2}, {1, 2}), f32({0}, {}),
                                           f32({2, 2}, {3, 4, 5, 6})}});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.out().dtype(), DType::F32);
  EXPECT_EQ(r.out().sizes(), (Shape{3, 2}));
  expect_near(r.out(), {1, 2, 3, 4, 5, 6});
  auto dim1 = run_op("aten.cat.default",
                     {std::vector<HostTensor>{f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}, -1});
  expect_near(dim1.out(), {1, 3, 4, 2, 5, 6});
  auto bad = run_op("aten.cat.default",
                    {std::vector<HostTensor>{f32({2, 1}, {1, 2}), f32({3, 1}, {1, 2, 3})}, 1});
  EXPECT_NE(bad.error.find("must match except in dimension 1"), std::string::npos) << bad.error;
}

TEST(CatPad, Padding) {
  auto p = run_op("aten.constant_pad_nd.default", {f32({2}, {1, 2}), IntList{1, 2}, 9.0});
  ASSERT_TRUE(p.ok());
  expect_near(p.out(), {9, 1, 2, 9, 9});
  auto crop = run_op("aten.constant_pad_nd.default", {f32({4}, {1, 2, 3, 4}), IntList{-1, 1}});
  expect_near(crop.out(), {2, 3, 4, 0});
  auto refl = run_op("aten.reflection_pad1d.default", {f32({1, 3}, {1, 2, 3}), IntList{2, 1}});
  ASSERT_TRUE(refl.ok()) << refl.error;
  expect_near(refl.out(), {3, 2, 1, 2, 3, 2});
  auto rep =
      run_op("aten.replication_pad2d.default", {f32({1, 1, 2}, {1, 2}), IntList{1, 1, 1, 0}});
  ASSERT_TRUE(rep.ok()) << rep.error;
  EXPECT_EQ(rep.out().sizes(), (Shape{1, 2, 4}));
  expect_near(rep.out(), {1, 1, 2, 2, 1, 1, 2, 2});
  auto too_far = run_op("aten.reflection_pad1d.default", {f32({1, 2}, {1, 2}), IntList{2, 0}});
  EXPECT_NE(too_far.error.find("smaller than the input size"), std::string::npos);
  auto rpt = run_op("aten.repeat.default", {f32({2}, {1, 2}), IntList{2, 2}});
  expect_near(rpt.out(), {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(Indexing, EmbeddingGatherIndexSelect) {
  const HostTensor table = f32({3, 2}, {0, 1, 10, 11, 20, 21});
  auto e = run_op("aten.embedding.default", {table, i64({2, 1}, {2, 0})});
  ASSERT_TRUE(e.ok()) << e.error;
  EXPECT_EQ(e.out().sizes(), (Shape{2, 1, 2}));
  expect_near(e.out(), {20, 21, 0, 1});
  auto oob = run_op("aten.embedding.default", {table, i64({1}, {3})});
  EXPECT_NE(oob.error.find("index 3 is out of range for 3 rows"), std::string::npos) << oob.error;
  auto g = run_op("aten.gather.default", {table, 1, i64({3, 1}, {1, 0, 1})});
  expect_near(g.out(), {1, 10, 21});
  auto g_oob = run_op("aten.gather.default", {table, 1, i64({1, 1}, {-3})});
  EXPECT_NE(g_oob.error.find("out of bounds"), std::string::npos) << g_oob.error;
  auto sel = run_op("aten.index_select.default", {table, 0, i64({2}, {-1, 0})});
  expect_near(sel.out(), {20, 21, 0, 1});
}

TEST(Indexing, AdvancedIndexPlacesTheIndexedBlock) {
  const HostTensor x = f32({2, 3, 4}, {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                       12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  // x[:, [2, 0]] -> [2, 2, 4]: the block stays in place.
  HostTensor idx = i64({2}, {2, 0});
  GraphBuilder b(registry(), "t");
  ValueRef xi = b.input("x", x.type());
  ValueRef ii = b.input("i", idx.type());
  ValueRef r = b.op("aten.index.Tensor", {xi, TensorList{{std::nullopt, ii}}});
  b.output(r);
  auto g = b.finish();
  ASSERT_TRUE(g) << g.error().to_string();
  EXPECT_EQ(g->type(g->outputs[0]).sizes, (Shape{2, 2, 4}));
  auto out = interpret(*g, {x, idx});
  ASSERT_TRUE(out);
  EXPECT_EQ(values((*out)[0])[0], 8);
  EXPECT_EQ(values((*out)[0])[4], 0);
  // x[[1, 0], :, [3, 3]] -> non-adjacent: the broadcast dims go first: [2, 3].
  GraphBuilder b2(registry(), "t2");
  ValueRef x2 = b2.input("x", x.type());
  ValueRef i0 = b2.input("i0", TensorType::contiguous(DType::I64, {2}));
  ValueRef i2 = b2.input("i2", TensorType::contiguous(DType::I64, {2}));
  b2.output(b2.op("aten.index.Tensor", {x2, TensorList{{i0, std::nullopt, i2}}}));
  auto g2 = b2.finish();
  ASSERT_TRUE(g2) << g2.error().to_string();
  auto out2 = interpret(*g2, {x, i64({2}, {1, 0}), i64({2}, {3, 3})});
  ASSERT_TRUE(out2) << out2.error().to_string();
  EXPECT_EQ((*out2)[0].sizes(), (Shape{2, 3}));
  expect_near((*out2)[0], {15, 19, 23, 3, 7, 11});
  auto none = run_op("aten.index.Tensor", {x, std::vector<HostTensor>{}});
  EXPECT_NE(none.error.find("at least one index"), std::string::npos) << none.error;
}

TEST(Scatter, IndexPutAssignsOrAccumulates) {
  auto put = [](bool accumulate) {
    GraphBuilder b(registry(), "t");
    ValueRef self = b.input("s", TensorType::contiguous(DType::F32, {3}));
    ValueRef idx = b.input("i", TensorType::contiguous(DType::I64, {3}));
    ValueRef v = b.input("v", TensorType::contiguous(DType::F32, {3}));
    b.output(b.op("aten.index_put.default", {self, TensorList{{idx}}, v, accumulate}));
    auto g = b.finish();
    EXPECT_TRUE(g);
    return interpret(*g, {f32({3}, {0, 0, 0}), i64({3}, {0, 0, 2}), f32({3}, {1, 2, 3})});
  };
  auto acc = put(true);
  ASSERT_TRUE(acc);
  expect_near((*acc)[0], {3, 0, 3});
  auto assign = put(false);
  ASSERT_TRUE(assign);
  expect_near((*assign)[0], {2, 0, 3});
}

TEST(Scatter, ScatterAddIndexPutAndFriends) {
  auto s = run_op("aten.scatter_add.default",
                  {f32({3}, {1, 1, 1}), 0, i64({3}, {0, 2, 0}), f32({3}, {5, 6, 7})});
  ASSERT_TRUE(s.ok()) << s.error;
  expect_near(s.out(), {13, 1, 7});
  auto v = run_op("aten.scatter.value", {f32({2, 2}, {0, 0, 0, 0}), 1, i64({2, 1}, {1, 0}), 3.0});
  expect_near(v.out(), {0, 3, 3, 0});
  auto mean = run_op("aten.scatter_reduce.two", {f32({2}, {2, 2}), 0, i64({2}, {0, 0}),
                                                 f32({2}, {4, 6}), std::string("mean")});
  ASSERT_TRUE(mean.ok()) << mean.error;
  expect_near(mean.out(), {4, 2});  // (2 + 4 + 6) / 3
  auto amax = run_op("aten.scatter_reduce.two",
                     {f32({2}, {9, 9}), 0, i64({1}, {1}), f32({1}, {4}), std::string("amax")},
                     {{"include_self", false}});
  expect_near(amax.out(), {9, 4});
  auto oob =
      run_op("aten.scatter_add.default", {f32({2}, {0, 0}), 0, i64({1}, {5}), f32({1}, {1})});
  EXPECT_NE(oob.error.find("out of bounds"), std::string::npos) << oob.error;
  auto ss = run_op("aten.slice_scatter.default",
                   {f32({4}, {0, 0, 0, 0}), f32({2}, {1, 2}), 0, int64_t{0}, None{}, int64_t{2}});
  ASSERT_TRUE(ss.ok()) << ss.error;
  expect_near(ss.out(), {1, 0, 2, 0});
  auto sel =
      run_op("aten.select_scatter.default", {f32({2, 2}, {0, 0, 0, 0}), f32({2}, {7, 8}), 1, 1});
  expect_near(sel.out(), {0, 7, 0, 8});
  auto ms = run_op("aten.masked_scatter.default",
                   {f32({3}, {0, 0, 0}), tensor(DType::Bool, {3}, {1, 0, 1}), f32({2}, {5, 6})});
  expect_near(ms.out(), {5, 0, 6});
  auto edb = run_op("aten.embedding_dense_backward.default",
                    {f32({3, 1}, {1, 2, 4}), i64({3}, {1, 1, 0}), 3, -1, false});
  ASSERT_TRUE(edb.ok()) << edb.error;
  expect_near(edb.out(), {4, 3, 0});
}

TEST(Matmul, ProductsAndLinear) {
  const HostTensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 2}, {5, 6, 7, 8});
  auto mm = run_op("aten.mm.default", {a, b});
  expect_near(mm.out(), {19, 22, 43, 50});
  auto mismatch = run_op("aten.mm.default", {a, f32({3, 1}, {1, 1, 1})});
  EXPECT_NE(mismatch.error.find("cannot be multiplied"), std::string::npos);
  auto dtypes = run_op("aten.mm.default", {a, tensor(DType::F64, {2, 2}, {1, 0, 0, 1})});
  EXPECT_NE(dtypes.error.find("same dtype"), std::string::npos);
  auto addmm =
      run_op("aten.addmm.default", {f32({2}, {1, 1}), a, b}, {{"beta", 2.0}, {"alpha", 0.5}});
  expect_near(addmm.out(), {11.5, 13, 23.5, 27});
  auto dot = run_op("aten.matmul.default", {f32({2}, {1, 2}), f32({2}, {3, 4})});
  EXPECT_EQ(dot.out().rank(), 0);
  expect_near(dot.out(), {11});
  auto batched = run_op("aten.matmul.default", {f32({2, 1, 2}, {1, 0, 0, 1}), a});
  EXPECT_EQ(batched.out().sizes(), (Shape{2, 1, 2}));
  expect_near(batched.out(), {1, 2, 3, 4});
  auto lin = run_op("aten.linear.default", {f32({1, 2}, {1, 1}), a, f32({2}, {10, 20})});
  expect_near(lin.out(), {13, 27});
}

TEST(Norm, LayerNormClosedForm) {
  // [1, 2, 3]: mean 2, biased var 2/3, rstd = 1/sqrt(2/3 + eps).
  const double rstd = 1.0 / std::sqrt(2.0 / 3 + 1e-5);
  auto r =
      run_op("aten.native_layer_norm.default",
             {f32({1, 3}, {1, 2, 3}), IntList{3}, f32({3}, {1, 2, 1}), f32({3}, {0, 0, 5}), 1e-5});
  ASSERT_TRUE(r.ok()) << r.error;
  expect_near(r.out(0), {-rstd, 0, rstd + 5}, 1e-5);
  expect_near(r.out(1), {2});
  expect_near(r.out(2), {rstd}, 1e-5);
  auto bad = run_op("aten.native_layer_norm.default",
                    {f32({1, 3}, {1, 2, 3}), IntList{2}, None{}, None{}, 1e-5});
  EXPECT_NE(bad.error.find("does not match the end of input"), std::string::npos);
}

TEST(Norm, BatchNormInferenceAndTraining) {
  // One channel of [1, 3]; running mean 1, var 4 -> (x - 1) / 2.
  const HostTensor x = f32({2, 1}, {1, 3});
  auto inf = run_op("aten._native_batch_norm_legit_no_training.default",
                    {x, None{}, None{}, f32({1}, {1}), f32({1}, {4}), 0.1, 0.0});
  ASSERT_TRUE(inf.ok()) << inf.error;
  expect_near(inf.out(0), {0, 1});
  auto train =
      run_op("aten._native_batch_norm_legit.no_stats", {x, None{}, None{}, true, 0.1, 0.0});
  ASSERT_TRUE(train.ok()) << train.error;
  expect_near(train.out(0), {-1, 1});
  expect_near(train.out(1), {2});
  auto mutate = run_op("aten._native_batch_norm_legit.default",
                       {x, None{}, None{}, f32({1}, {1}), f32({1}, {4}), true, 0.1, 0.0});
  EXPECT_NE(mutate.error.find("in place"), std::string::npos);
  auto gn = run_op("aten.native_group_norm.default",
                   {f32({1, 2, 1}, {1, 3}), None{}, None{}, 1, 2, 1, 1, 0.0});
  ASSERT_TRUE(gn.ok()) << gn.error;
  expect_near(gn.out(0), {-1, 1});
}

TEST(Norm, LayerNormBackwardMatchesFiniteDifferences) {
  // d/dx of sum(dy * layer_norm(x)) by central differences, against the op.
  const HostTensor x = f32({1, 3}, {0.3, -1.2, 2.0}), dy = f32({1, 3}, {1.0, 0.5, -2.0}),
                   w = f32({3}, {1.5, 0.5, 2.0});
  auto fwd = run_op("aten.native_layer_norm.default", {x, IntList{3}, w, None{}, 1e-5});
  ASSERT_TRUE(fwd.ok()) << fwd.error;
  auto bwd = run_op("aten.native_layer_norm_backward.default",
                    {dy, x, IntList{3}, fwd.out(1), fwd.out(2), w, None{}, IntList{1, 1, 1}});
  ASSERT_TRUE(bwd.ok()) << bwd.error;
  const auto xs = values(x), dys = values(dy), ws = values(w);
  auto loss = [&](std::vector<double> v) {
    const double mean = (v[0] + v[1] + v[2]) / 3;
    double var = 0;
    for (double e : v) var += (e - mean) * (e - mean) / 3;
    double total = 0;
    for (size_t i = 0; i < 3; ++i) total += dys[i] * (v[i] - mean) / std::sqrt(var + 1e-5) * ws[i];
    return total;
  };
  const auto dx = values(bwd.out(0));
  for (size_t i = 0; i < 3; ++i) {
    auto up = xs, down = xs;
    up[i] += 1e-6;
    down[i] -= 1e-6;
    EXPECT_NEAR(dx[i], (loss(up) - loss(down)) / 2e-6, 1e-4) << i;
  }
  expect_near(bwd.out(2), {1.0, 0.5, -2.0});  // dbias = dy summed over rows
  auto masked = run_op("aten.native_layer_norm_backward.default",
                       {dy, x, IntList{3}, fwd.out(1), fwd.out(2), w, None{}, IntList{1, 0, 0}});
  EXPECT_EQ(masked.out(1).numel(), 0);
  auto gn = run_op("aten.native_group_norm_backward.default",
                   {f32({1, 2, 1}, {1, 1}), f32({1, 2, 1}, {1, 3}), f32({1, 1}, {2}),
                    f32({1, 1}, {1}), None{}, 1, 2, 1, 1, IntList{1, 1, 1}});
  ASSERT_TRUE(gn.ok()) << gn.error;
  expect_near(gn.out(0),
              {0, 0});  // a constant upstream gradient has no effect through normalization
  expect_near(gn.out(1), {-1, 1});
}

TEST(Indexing, EmbeddingBag) {
  const HostTensor table = f32({3, 2}, {0, 1, 10, 11, 20, 21});
  // bags: [0, 2] and [1]; padding_idx 1 skips row 1.
  auto sum = run_op("aten._embedding_bag.default", {table, i64({3}, {0, 2, 1}), i64({2}, {0, 2})});
  ASSERT_TRUE(sum.ok()) << sum.error;
  expect_near(sum.out(0), {20, 22, 10, 11});
  expect_near(sum.out(1), {0, 0, 1});
  expect_near(sum.out(2), {2, 1});
  auto mean = run_op("aten._embedding_bag.default",
                     {table, i64({3}, {0, 2, 1}), i64({2}, {0, 2}), false, 1});
  expect_near(mean.out(0), {10, 11, 10, 11});
  auto max = run_op("aten._embedding_bag.default",
                    {table, i64({2, 2}, {0, 2, 1, 0}), i64({0}, {}), false, 2});
  ASSERT_TRUE(max.ok()) << max.error;
  expect_near(max.out(0), {20, 21, 10, 11});
  expect_near(max.out(3), {2, 2, 1, 1});
  auto padded = run_op("aten._embedding_bag.default", {table, i64({3}, {0, 2, 1}), i64({2}, {0, 2}),
                                                       false, 0, false, None{}, false, 1});
  expect_near(padded.out(0), {20, 22, 0, 0});
  expect_near(padded.out(2), {2, 0});
  auto oob = run_op("aten._embedding_bag.default", {table, i64({1}, {3}), i64({1}, {0})});
  EXPECT_NE(oob.error.find("out of bounds"), std::string::npos) << oob.error;
}

TEST(Composite, ActivationsAndLosses) {
  auto gelu = run_op("aten.gelu.default", {f32({3}, {0, 1, -1})});
  expect_near(gelu.out(), {0, 0.5 * (1 + std::erf(1 / std::sqrt(2.0))),
                           -0.5 * (1 - std::erf(1 / std::sqrt(2.0)))});
  auto silu = run_op("aten.silu.default", {f32({2}, {0, 1})});
  expect_near(silu.out(), {0, 1 / (1 + std::exp(-1.0))});
  // cross_entropy of equal logits over 2 classes is ln 2 whatever the target.
  auto ce =
      run_op("aten.cross_entropy_loss.default", {f32({2, 2}, {0, 0, 3, 3}), i64({2}, {0, 1})});
  ASSERT_TRUE(ce.ok()) << ce.error;
  expect_near(ce.out(), {std::log(2.0)});
  auto ignored = run_op("aten.nll_loss_forward.default",
                        {f32({2, 2}, {-1, -2, -3, -4}), i64({2}, {1, -100}), None{}, 1, -100});
  ASSERT_TRUE(ignored.ok()) << ignored.error;
  expect_near(ignored.out(0), {2});
  expect_near(ignored.out(1), {1});
  auto bad_target = run_op("aten.nll_loss_forward.default",
                           {f32({1, 2}, {0, 0}), i64({1}, {2}), None{}, 1, -100});
  EXPECT_NE(bad_target.error.find("out of bounds"), std::string::npos);
  auto smoothing = run_op("aten.cross_entropy_loss.default",
                          {f32({1, 2}, {0, 0}), i64({1}, {0}), None{}, 1, -100, 0.1});
  EXPECT_NE(smoothing.error.find("label_smoothing"), std::string::npos);
}

TEST(Composite, AttentionWithOneKeyReturnsTheValue) {
  auto r =
      run_op("aten.scaled_dot_product_attention.default",
             {f32({1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 2}, {5, 6}), f32({1, 1, 3}, {7, 8, 9})});
  ASSERT_TRUE(r.ok()) << r.error;
  expect_near(r.out(), {7, 8, 9, 7, 8, 9});
  // Causal over two equal keys: row 0 sees only key 0.
  auto causal = run_op("aten.scaled_dot_product_attention.default",
                       {f32({2, 1}, {0, 0}), f32({2, 1}, {0, 0}), f32({2, 1}, {2, 4})},
                       {{"is_causal", true}});
  ASSERT_TRUE(causal.ok()) << causal.error;
  expect_near(causal.out(), {2, 3});
}

TEST(ConvPool, SmallCases) {
  // 1-D conv: input [1, 1, 4], kernel [1, 1, 2] = [1, -1], stride 1, no padding.
  auto conv = run_op("aten.convolution.default",
                     {f32({1, 1, 4}, {1, 3, 6, 10}), f32({1, 1, 2}, {1, -1}), f32({1}, {100}),
                      IntList{1}, IntList{0}, IntList{1}, false, IntList{0}, 1});
  ASSERT_TRUE(conv.ok()) << conv.error;
  expect_near(conv.out(), {98, 97, 96});
  auto avg = run_op("aten.avg_pool2d.default", {f32({1, 2, 2}, {1, 2, 3, 4}), IntList{2, 2}});
  ASSERT_TRUE(avg.ok()) << avg.error;
  expect_near(avg.out(), {2.5});
  auto mp =
      run_op("aten.max_pool2d_with_indices.default", {f32({1, 2, 2}, {1, 9, 3, 4}), IntList{2, 2}});
  ASSERT_TRUE(mp.ok()) << mp.error;
  expect_near(mp.out(0), {9});
  expect_near(mp.out(1), {1});
  auto ad = run_op("aten._adaptive_avg_pool2d.default", {f32({1, 1, 3}, {1, 2, 6}), IntList{1, 2}});
  ASSERT_TRUE(ad.ok()) << ad.error;
  expect_near(ad.out(), {1.5, 4});
}

TEST(Creation, FullArangeAndDtypes) {
  auto f = run_op("aten.full.default", {IntList{2}, 1.5});
  EXPECT_EQ(f.out().dtype(), DType::F32);
  expect_near(f.out(), {1.5, 1.5});
  auto fi = run_op("aten.full.default", {IntList{1}, int64_t{3}});
  EXPECT_EQ(fi.out().dtype(), DType::I64);
  auto a = run_op("aten.arange.start_step", {int64_t{1}, int64_t{7}, int64_t{2}});
  EXPECT_EQ(a.out().dtype(), DType::I64);
  expect_near(a.out(), {1, 3, 5});
  auto af = run_op("aten.arange.start_step", {0.0, 1.0, 0.25});
  EXPECT_EQ(af.out().dtype(), DType::F32);
  expect_near(af.out(), {0, 0.25, 0.5, 0.75});
  auto bad = run_op("aten.arange.start_step", {int64_t{0}, int64_t{5}, int64_t{-1}});
  EXPECT_NE(bad.error.find("inconsistent signs"), std::string::npos);
  auto neg = run_op("aten.full.default", {IntList{-1}, 0.0});
  EXPECT_NE(neg.error.find("non-negative"), std::string::npos);
}

}  // namespace
}  // namespace kiln::test
