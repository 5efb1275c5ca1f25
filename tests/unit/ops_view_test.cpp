// Views against hand-worked values.
#include "op_test_util.h"

namespace kiln::test {
namespace {

const HostTensor kM = f32({2, 3}, {0, 1, 2, 3, 4, 5});

TEST(View, PermuteTransposeAndT) {
  auto p = run_op("aten.permute.default", {kM, IntList{1, 0}});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.out().sizes(), (Shape{3, 2}));
  expect_near(p.out(), {0, 3, 1, 4, 2, 5});
  auto t = run_op("aten.t.default", {kM});
  expect_near(t.out(), {0, 3, 1, 4, 2, 5});
  auto tr = run_op("aten.transpose.int", {f32({1, 2, 2}, {1, 2, 3, 4}), -1, -2});
  expect_near(tr.out(), {1, 3, 2, 4});
  auto bad = run_op("aten.permute.default", {kM, IntList{0, 0}});
  EXPECT_NE(bad.error.find("repeats"), std::string::npos);
}

TEST(View, SliceSelectAndNarrowing) {
  auto s = run_op("aten.slice.Tensor", {kM, 1, int64_t{0}, int64_t{100}, int64_t{2}});
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(s.out().sizes(), (Shape{2, 2}));
  expect_near(s.out(), {0, 2, 3, 5});
  auto neg = run_op("aten.slice.Tensor", {kM, 1, int64_t{-2}, None{}, int64_t{1}});
  expect_near(neg.out(), {1, 2, 4, 5});
  auto empty = run_op("aten.slice.Tensor", {kM, 1, int64_t{2}, int64_t{1}, int64_t{1}});
  EXPECT_EQ(empty.out().sizes(), (Shape{2, 0}));
  auto sel = run_op("aten.select.int", {kM, 1, -1});
  expect_near(sel.out(), {2, 5});
  auto oob = run_op("aten.select.int", {kM, 0, 2});
  EXPECT_NE(oob.error.find("index 2 out of range"), std::string::npos) << oob.error;
}

TEST(View, ViewReshapeExpandSqueeze) {
  auto v = run_op("aten.view.default", {kM, IntList{3, -1}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.out().sizes(), (Shape{3, 2}));
  expect_near(v.out(), {0, 1, 2, 3, 4, 5});
  auto bad = run_op("aten.view.default", {kM, IntList{4, -1}});
  EXPECT_NE(bad.error.find("invalid for a tensor of 6 elements"), std::string::npos) << bad.error;
  auto e = run_op("aten.expand.default", {f32({2, 1}, {7, 8}), IntList{2, 2, -1, 3}});
  ASSERT_TRUE(e.ok()) << e.error;
  EXPECT_EQ(e.out().sizes(), (Shape{2, 2, 2, 3}));
  EXPECT_EQ(values(e.out())[3], 8);
  auto sq = run_op("aten.squeeze.dims", {f32({1, 2, 1}, {1, 2}), IntList{0, 1}});
  EXPECT_EQ(sq.out().sizes(), (Shape{2, 1}));
  auto sq_all = run_op("aten.squeeze.default", {f32({1, 2, 1}, {1, 2})});
  EXPECT_EQ(sq_all.out().sizes(), (Shape{2}));
  auto un = run_op("aten.unsqueeze.default", {kM, -1});
  EXPECT_EQ(un.out().sizes(), (Shape{2, 3, 1}));
  auto fl = run_op("aten.flatten.using_ints", {f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), 1, 2});
  EXPECT_EQ(fl.out().sizes(), (Shape{2, 4}));
}

TEST(View, DiagonalAndAsStrided) {
  const HostTensor sq = f32({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  auto d = run_op("aten.diagonal.default", {sq});
  expect_near(d.out(), {0, 4, 8});
  auto up = run_op("aten.diagonal.default", {sq, 1});
  expect_near(up.out(), {1, 5});
  auto down = run_op("aten.diagonal.default", {sq, -2});
  expect_near(down.out(), {6});
  auto a = run_op("aten.as_strided.default", {sq, IntList{2, 2}, IntList{1, 3}, int64_t{1}});
  ASSERT_TRUE(a.ok()) << a.error;
  expect_near(a.out(), {1, 4, 2, 5});
  auto outside = run_op("aten.as_strided.default", {sq, IntList{2, 2}, IntList{4, 5}});
  EXPECT_NE(outside.error.find("reaches element"), std::string::npos) << outside.error;
}

TEST(View, Splits) {
  auto s = run_op("aten.split_with_sizes.default", {kM, IntList{1, 2}, 1});
  ASSERT_TRUE(s.ok()) << s.error;
  ASSERT_EQ(s.outputs.size(), 2u);
  expect_near(s.out(0), {0, 3});
  expect_near(s.out(1), {1, 2, 4, 5});
  auto chunks = run_op("aten.split.Tensor", {f32({5}, {0, 1, 2, 3, 4}), 2});
  ASSERT_EQ(chunks.outputs.size(), 3u);
  expect_near(chunks.out(2), {4});
  auto bad = run_op("aten.split_with_sizes.default", {kM, IntList{1, 1}, 1});
  EXPECT_NE(bad.error.find("do not sum"), std::string::npos);
  auto ub = run_op("aten.unbind.int", {kM});
  ASSERT_EQ(ub.outputs.size(), 2u);
  expect_near(ub.out(1), {3, 4, 5});
}

}  // namespace
}  // namespace kiln::test
