// rand, randn, randperm and native_dropout as kernels against the reference, drawing from
// the same random state (the test's seed): uniform values and dropout masks equal bit for
// bit; then what users rely on: the values' statistics, a fresh draw per run, and a run
// reproduced from its seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledRandom : public Differential, public ::testing::WithParamInterface<DType> {};

TEST_P(CompiledRandom, DrawsTheReferenceStream) {
  const DType d = GetParam();
  GraphBuilder b = builder();
  output_of(b, "rand", "aten.rand.default", {ints{5, 33}}, {{"dtype", d}});
  output_of(b, "randn", "aten.randn.default", {ints{7, 9}}, {{"dtype", d}});
  const ValueRef x = input(b, "x", TensorType{d, {6, 11}, {1, 6}}, Range{-2, 2});
  for (const auto& [label, p, train] :
       std::vector<std::tuple<std::string, double, ArgValue>>{{"dropout", 0.3, true},
                                                              {"dropout_none", 0.6, None{}},
                                                              {"dropout_all", 1.0, true},
                                                              {"dropout_off", 0.5, false}}) {
    const auto outs = b.ops("aten.native_dropout.default", {x, p, train}, {}, label);
    b.output(outs.at(0));
    b.output(outs.at(1));
  }
  // A consumer fused after the draw.
  output_of(b, "rand_plus_x", "aten.add.Tensor",
            {b.op("aten.rand.default", {ints{6, 11}}, {{"dtype", d}}), x});
  output_of(b, "randperm", "aten.randperm.default", {int64_t{37}}, {{"dtype", DType::I64}});
  output_of(b, "randperm_float", "aten.randperm.default", {int64_t{9}}, {{"dtype", d}});
  const CompileStats st = check(b);
  EXPECT_EQ(st.host_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CompiledRandom,
                         ::testing::Values(DType::F32, DType::F64, DType::F16, DType::BF16),
                         DTypeName());

class CompiledRandomRuns : public Differential {
 protected:
  // A compiled graph of rand [n], randn [n], dropout(ones, p) and randperm(n).
  Result<CompiledGraph> compile_draws(int64_t n, double p) {
    GraphBuilder b = builder();
    b.output(b.op("aten.rand.default", {ints{n}}));
    b.output(b.op("aten.randn.default", {ints{n}}));
    const ValueRef ones = b.op("aten.full.default", {ints{n}, 1.0});
    b.output(b.ops("aten.native_dropout.default", {ones, p, true}).at(0));
    b.output(b.op("aten.randperm.default", {int64_t{n}}));
    auto g = b.finish();
    if (!g) return std::move(g).error();
    return compile(*g);
  }
  std::vector<double> values(const HostTensor& t) {
    std::vector<double> v;
    for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
    return v;
  }
};

TEST_F(CompiledRandomRuns, ValuesHaveTheirDistributions) {
  const int64_t n = 20000;
  const double p = 0.25;
  auto compiled = compile_draws(n, p);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  auto out = compiled->run({});
  ASSERT_TRUE(out) << out.error().to_string();
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  const std::vector<double> u = values((*out)[0]), z = values((*out)[1]);
  EXPECT_NEAR(mean(u), 0.5, 0.01);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
  EXPECT_NEAR(mean(z), 0.0, 0.03);
  double var = 0;
  for (double x : z) var += x * x;
  EXPECT_NEAR(std::sqrt(var / static_cast<double>(n)), 1.0, 0.03);
  // Dropout keeps 1 - p of the ones, scaled by 1 / (1 - p): the mean stays 1.
  const std::vector<double> dropped = values((*out)[2]);
  const auto kept = std::count_if(dropped.begin(), dropped.end(), [](double x) { return x != 0; });
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(n), 1 - p, 0.015);
  EXPECT_NEAR(mean(dropped), 1.0, 0.03);
  std::vector<double> perm = values((*out)[3]);
  std::sort(perm.begin(), perm.end());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(perm[static_cast<size_t>(i)], static_cast<double>(i));
}

TEST_F(CompiledRandomRuns, EachRunDrawsAgainAndASeedReproducesItsRuns) {
  auto compiled = compile_draws(257, 0.5);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  compiled->set_random_seed(42);
  auto first = compiled->run({});
  auto second = compiled->run({});
  ASSERT_TRUE(first && second);
  for (size_t k = 0; k < first->size(); ++k)
    EXPECT_NE(values((*first)[k]), values((*second)[k])) << "output " << k << " repeats";
  // The same seed again: the same runs, in order.
  compiled->set_random_seed(42);
  auto again = compiled->run({});
  ASSERT_TRUE(again);
  for (size_t k = 0; k < first->size(); ++k) EXPECT_EQ(values((*first)[k]), values((*again)[k]));
  // A run named by its state: the second run, and another seed differs.
  RunOptions options;
  options.random = RandomState{42, 1};
  auto named = compiled->run({}, options);
  ASSERT_TRUE(named);
  for (size_t k = 0; k < first->size(); ++k) EXPECT_EQ(values((*second)[k]), values((*named)[k]));
  options.random = RandomState{43, 1};
  auto other = compiled->run({}, options);
  ASSERT_TRUE(other);
  EXPECT_NE(values((*second)[0]), values((*other)[0]));
}

}  // namespace
}  // namespace kiln::test
