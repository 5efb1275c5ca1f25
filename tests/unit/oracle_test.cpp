// The oracle's perturbed run: a device whose math functions are a few ulps off (as CUDA's are)
// passes where a chain of ops amplifies that error (log near 1, then a reciprocal: a fuzz graph
// the ptx plugin failed), and the bound stays tight where nothing amplifies it.
#include "core/interp/oracle.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/graph/graph_json.h"
#include "core/ops/op_registry.h"

namespace kiln {
namespace {

constexpr const char* kChain = R"({"format": "kiln.graph/1", "name": "chain",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],
    "nodes": [{"name": "a", "op": "aten.atan.default", "args": ["%x"]},
              {"name": "l", "op": "aten.log2.default", "args": ["%a"]},
              {"name": "r", "op": "aten.reciprocal.default", "args": ["%l"]}],
    "outputs": ["%r"]})";

// 1 / log2(atan(x)) in f32 with atan `ulps` ulps high, as a device's atanf may be.
float device_chain(float x, int ulps) {
  float a = std::atan(x);
  for (int i = 0; i < ulps; ++i) a = std::nextafter(a, 2.0f);
  return 1.0f / std::log2(a);
}

TEST(Oracle, PerturbedRunBoundsErrorsThatIllConditionedOpsAmplify) {
  auto g = parse_graph(kChain, "chain", OpRegistry::create().value());
  ASSERT_TRUE(g) << g.error().to_string();
  // Element 0: atan(x) is 0.978, where log2 multiplies relative errors by 45; element 1: 0.29,
  // where it does not.
  const float xs[2] = {1.4834f, 0.3f};
  HostTensor x = HostTensor::zeros(DType::F32, {2});
  for (int i = 0; i < 2; ++i) x.set(i, xs[i]);
  auto oracle = run_oracle(*g, {x});
  ASSERT_TRUE(oracle) << oracle.error().to_string();
  ASSERT_EQ(oracle->perturbed.size(), 1u);

  HostTensor device = HostTensor::zeros(DType::F32, {2});
  for (int i = 0; i < 2; ++i) device.set(i, device_chain(xs[i], 2));
  const HostTensor& want = oracle->expected[0];
  const Tolerance tol = tolerance_for(DType::F32);
  EXPECT_EQ(compare(device, want, tol).first_mismatch, 0)
      << "2 ulps of atan's error, amplified, are beyond the per-element rule";
  EXPECT_TRUE(oracle->compare(0, device).ok()) << "and within the perturbed run's bound";

  // Where nothing amplifies, twice the per-element rule's error still fails.
  HostTensor wrong = device;
  wrong.set(1, want.get(1) + 2 * (tol.atol + tol.rtol * std::fabs(want.get(1))));
  const Comparison c = oracle->compare(0, wrong);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_mismatch, 1);
}

TEST(Oracle, PerturbedRunIsReproducibleAndLeavesInputsAlone) {
  // A view's output shares its operand's storage: perturbing it must not touch the input.
  auto g = parse_graph(R"({"format": "kiln.graph/1", "name": "view",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
      "nodes": [{"name": "t", "op": "aten.t.default", "args": ["%x"]},
                {"name": "y", "op": "aten.mul.Tensor", "args": ["%t", "%t"]}],
      "outputs": ["%y"]})",
                       "view", OpRegistry::create().value());
  ASSERT_TRUE(g) << g.error().to_string();
  HostTensor x = HostTensor::zeros(DType::F32, {2, 3});
  for (int64_t i = 0; i < 6; ++i) x.set(i, 1.5 + static_cast<double>(i));
  const HostTensor before = x.to(DType::F32);
  auto first = run_oracle(*g, {x});
  auto second = run_oracle(*g, {x});
  ASSERT_TRUE(first && second);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(x.get(i), before.get(i));
    EXPECT_EQ(first->perturbed[0].get(i), second->perturbed[0].get(i));
  }
  // The perturbation is a few units of roundoff, not nothing.
  double largest = 0;
  for (int64_t i = 0; i < 6; ++i)
    largest =
        std::max(largest, std::fabs(first->perturbed[0].get(i) / first->expected[0].get(i) - 1));
  EXPECT_GT(largest, std::ldexp(1.0, -24));
  EXPECT_LT(largest, 4 * kOpErrorUlps * std::ldexp(1.0, -24));
}

}  // namespace
}  // namespace kiln
