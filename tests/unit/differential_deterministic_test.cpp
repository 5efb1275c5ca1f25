// Deterministic mode (schedule.deterministic): float sums through scatter in fixed point.
// Every op that sums through scatter against the reference (repeated places, strided
// operands, infinities and NaNs), the same bits whichever order the values come in (which a
// float atomic sum does not give), and float scatter products refused with a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

using ::testing::HasSubstr;

ScheduleOptions deterministic_schedule() {
  ScheduleOptions s;
  s.deterministic = true;
  return s;
}

class DeterministicScatter : public Differential, public ::testing::WithParamInterface<DType> {
 protected:
  void SetUp() override { set_schedule(deterministic_schedule()); }
};

TEST_P(DeterministicScatter, SumsMatchTheReference) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  const Range values{-2, 2};
  const auto c = [&](Shape s) { return TensorType::contiguous(d, std::move(s)); };
  const ValueRef self = input(b, "self", c({5, 7}), values);
  const ValueRef self_t = input(b, "self_t", TensorType{d, {5, 7}, {1, 5}}, values);
  const ValueRef src = input(b, "src", c({6, 9}), values);
  const ValueRef src_t = input(b, "src_t", TensorType{d, {4, 6}, {1, 4}}, values);
  const ValueRef cols = input(b, "cols", TensorType::contiguous(DType::I64, {4, 6}), Range{-7, 7});
  const ValueRef rows = input(b, "rows", TensorType::contiguous(DType::I64, {4, 6}), Range{0, 5});
  output_of(b, "scatter_add", "aten.scatter_add.default", {self, int64_t{1}, cols, src});
  output_of(b, "scatter_add_t", "aten.scatter_add.default", {self_t, int64_t{0}, rows, src_t});
  for (const char* reduce : {"sum", "mean", "amax"}) {
    for (bool include_self : {true, false}) {
      output_of(b, std::string(reduce) + (include_self ? "_self" : "_alone"),
                "aten.scatter_reduce.two", {self_t, int64_t{-1}, cols, src, std::string(reduce)},
                {{"include_self", include_self}});
    }
  }
  const ValueRef picks = input(b, "picks", TensorType::contiguous(DType::I64, {9}), Range{-5, 5});
  output_of(b, "index_put_acc", "aten.index_put.default",
            {self, TensorList{{picks}}, input(b, "row_values", c({1, 7}), values), true});
  output_of(b, "index_put_cols_acc", "aten.index_put.default",
            {self_t, TensorList{{std::nullopt, cols}}, input(b, "v2", c({5, 4, 6}), values), true});
  if (is_floating(d)) {
    // +inf where src is in (0, 1), -inf where in (-1, 0): places get inf, -inf, NaN or finite.
    const auto reciprocal_of = [&](const char* rounding) {
      return b.op("aten.reciprocal.default", {b.op(rounding, {src})});
    };
    const ValueRef specials = b.op(
        "aten.where.self", {b.op("aten.gt.Scalar", {src, 0.0}), reciprocal_of("aten.floor.default"),
                            reciprocal_of("aten.ceil.default")});
    output_of(b, "scatter_add_specials", "aten.scatter_add.default",
              {self, int64_t{1}, cols, specials});
    const ValueRef grad = input(b, "grad", c({3, 8, 6}), values);
    const ValueRef tokens =
        input(b, "tokens", TensorType::contiguous(DType::I64, {3, 8}), Range{0, 11});
    output_of(b, "embedding_backward", "aten.embedding_dense_backward.default",
              {grad, tokens, int64_t{11}, int64_t{2}, false});
    output_of(b, "embedding_backward_by_frequency", "aten.embedding_dense_backward.default",
              {grad, tokens, int64_t{11}, int64_t{-1}, true});
    const ValueRef table = input(b, "table", c({9, 6}), values);
    const ValueRef flat = input(b, "flat", TensorType::contiguous(DType::I64, {13}), Range{0, 9});
    const ValueRef weights = input(b, "weights", c({13}), values);
    const ValueRef offsets = b.op("aten.arange.start_step", {int64_t{0}, int64_t{13}, int64_t{4}},
                                  {{"dtype", DType::I64}});
    const auto bag = [&](const std::string& label, std::vector<ArgValue> args) {
      for (ValueRef r : b.ops("aten._embedding_bag.default", std::move(args), {}, label))
        b.output(r);
    };
    bag("bag_sum", {table, flat, offsets, false, int64_t{0}, false, None{}, false, int64_t{-1}});
    bag("bag_mean", {table, flat, offsets, false, int64_t{1}, false, None{}, true, int64_t{3}});
    bag("bag_weighted",
        {table, flat, offsets, false, int64_t{0}, false, weights, false, int64_t{-1}});
    // Bags of 17, 17 and 6 positions: the long ones summed per chunk, then scattered.
    const ValueRef ids = input(b, "ids", TensorType::contiguous(DType::I64, {40}), Range{0, 9});
    const ValueRef spans = b.op("aten.arange.start_step", {int64_t{0}, int64_t{40}, int64_t{17}},
                                {{"dtype", DType::I64}});
    bag("bag_long_mean", {table, ids, spans, false, int64_t{1}, false, None{}, false, int64_t{-1}});
    // Bags of 70, 70 and 10: long in chunks of 64 (the CPU's) too; 37 columns (column form).
    const ValueRef more = input(b, "more", TensorType::contiguous(DType::I64, {150}), Range{0, 9});
    const ValueRef wide_spans = b.op(
        "aten.arange.start_step", {int64_t{0}, int64_t{150}, int64_t{70}}, {{"dtype", DType::I64}});
    const ValueRef table_wide = input(b, "table_wide", c({9, 37}), values);
    bag("bag_longer_sum",
        {table_wide, more, wide_spans, false, int64_t{0}, false, None{}, false, int64_t{-1}});
  }
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DeterministicScatter,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16,
                                           DType::I32),
                         DTypeName());

bool same_bits(const HostTensor& a, const HostTensor& b) {
  return std::ranges::equal(a.bytes(), b.bytes());
}

class CompiledDeterministicOrder : public Differential {
 protected:
  // 3000 values summed into 16 rows, as given and reversed, by index_put, scatter_add and the
  // embedding gradient: outputs k and k + 3 hold the same sums taken in opposite orders.
  Graph reversed_sums() {
    GraphBuilder b = builder();
    const auto f32 = [](Shape s) { return TensorType::contiguous(DType::F32, std::move(s)); };
    const ValueRef self = input(b, "self", f32({16, 3}), Range{-1, 1});
    const ValueRef src = input(b, "src", f32({3000, 3}), Range{-100, 100});
    const ValueRef rows =
        input(b, "rows", TensorType::contiguous(DType::I64, {3000}), Range{0, 16});
    const ValueRef places =
        input(b, "places", TensorType::contiguous(DType::I64, {3000, 3}), Range{0, 16});
    for (bool reverse : {false, true}) {
      const auto order = [&](ValueRef v) {
        return reverse ? b.op("aten.flip.default", {v, ints{0}}) : v;
      };
      const std::string tag = reverse ? "_reversed" : "";
      output_of(b, "index_put" + tag, "aten.index_put.default",
                {self, TensorList{{order(rows)}}, order(src), true});
      output_of(b, "scatter_add" + tag, "aten.scatter_add.default",
                {self, int64_t{0}, order(places), order(src)});
      output_of(b, "embedding_backward" + tag, "aten.embedding_dense_backward.default",
                {order(src), order(rows), int64_t{16}, int64_t{-1}, false});
    }
    auto graph = b.finish();
    EXPECT_TRUE(graph) << graph.error().to_string();
    return graph ? std::move(*graph) : Graph{};
  }
};

TEST_F(CompiledDeterministicOrder, SameBitsInEitherOrder) {
  const Graph graph = reversed_sums();
  set_schedule(deterministic_schedule());
  check(graph);
  const std::vector<HostTensor> exact = run(graph, deterministic_schedule());
  ASSERT_EQ(exact.size(), 6u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(same_bits(exact[k], exact[k + 3]))
        << graph.value(graph.outputs[k]).name << ": the sums differ with the order";
  }
  // The check can fail: float atomic sums (the default) round differently in the two orders.
  const std::vector<HostTensor> atomic = run(graph, ScheduleOptions{});
  ASSERT_EQ(atomic.size(), 6u);
  bool any_differs = false;
  for (size_t k = 0; k < 3; ++k) any_differs |= !same_bits(atomic[k], atomic[k + 3]);
  EXPECT_TRUE(any_differs) << "float atomic sums gave the same bits in both orders";
}

TEST_F(CompiledDeterministicOrder, FloatProductsAreRefused) {
  for (const DType d : {DType::F32, DType::I64}) {
    GraphBuilder b = builder();
    const ValueRef x = input(b, "x", TensorType::contiguous(d, {5, 6}), Range{1, 3});
    const ValueRef i = input(b, "i", TensorType::contiguous(DType::I64, {5, 3}), Range{0, 6});
    output_of(b, "prod", "aten.scatter_reduce.two", {x, int64_t{1}, i, x, std::string("prod")});
    auto graph = b.finish();
    ASSERT_TRUE(graph) << graph.error().to_string();
    auto compiled = compile(*graph, deterministic_schedule());
    if (d == DType::I64) {
      EXPECT_TRUE(compiled) << "integer products are deterministic: "
                            << (compiled ? "" : compiled.error().to_string());
    } else {
      ASSERT_FALSE(compiled);
      EXPECT_THAT(compiled.error().to_string(), HasSubstr("no deterministic kernel"));
      EXPECT_EQ(compiled.error().kind(), ErrorKind::User);
    }
  }
}

}  // namespace
}  // namespace kiln::test
