// erf to the ulp, through the plugin under test: the suite's tolerance (1.3e-6 relative, 1e-5
// absolute) would let an erf a hundred ulps off pass, and the cpp_openmp plugin computes f32
// erf with its own polynomials (kiln_cpu_runtime.h), not a library. Every input class: tiny and
// denormal values (erf(x) ~ 1.128 x), the polynomial's range, the switch at 1.25 and the
// exp-based range to where erf rounds to 1, infinities, signed zeros and NaN.
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledErf : public Differential {};

std::vector<float> erf_inputs() {
  std::vector<float> xs;
  for (int i = -200000; i <= 200000; ++i) xs.push_back(static_cast<float>(i) * 3e-5f);  // +-6
  for (float x = 1e-38f; x < 1; x *= 1.01f) xs.insert(xs.end(), {x, -x});
  for (float edge : {1.25f, 3.93f}) {  // both sides of each switch, ulp by ulp
    float x = edge;
    for (int i = 0; i < 64; ++i) x = std::nextafter(x, 0.0f);
    for (int i = 0; i < 128; ++i, x = std::nextafter(x, 10.0f)) xs.insert(xs.end(), {x, -x});
  }
  const float inf = std::numeric_limits<float>::infinity();
  xs.insert(xs.end(), {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::denorm_min(), 20.0f, -1e30f});
  while (xs.size() % 7 != 3) xs.push_back(0.5f);  // an odd length: the vector loop's tail too
  return xs;
}

// |got - want| in units of the f32 spacing at erf(x) (exact double erf rounded to f32).
double ulps_off(float x, float got) {
  const float want = static_cast<float>(std::erf(static_cast<double>(x)));
  if (std::isnan(x)) return std::isnan(got) ? 0 : INFINITY;
  if (want == 0) return got == 0 && std::signbit(got) == std::signbit(x) ? 0 : INFINITY;
  const double spacing = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
  return std::fabs(static_cast<double>(got) - std::erf(static_cast<double>(x))) / spacing;
}

TEST_F(CompiledErf, F32ErfIsWithinTwoUlpsEverywhere) {
  const std::vector<float> xs = erf_inputs();
  const int64_t n = static_cast<int64_t>(xs.size());
  GraphBuilder b = builder();
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {n}));
  output_of(b, "erf", "aten.erf.default", {x});
  const Graph graph = finish(b);
  auto compiled = compile(graph);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  HostTensor in = HostTensor::zeros(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) in.set(i, xs[static_cast<size_t>(i)]);
  auto out = compiled->run({in});
  ASSERT_TRUE(out) << out.error().to_string();
  double worst = 0;
  float worst_x = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double off = ulps_off(xs[static_cast<size_t>(i)], static_cast<float>((*out)[0].get(i)));
    if (!(off <= worst)) worst = off, worst_x = xs[static_cast<size_t>(i)];
  }
  EXPECT_LE(worst, 2.0) << "erf(" << std::hexfloat << worst_x << ") is " << std::defaultfloat
                        << worst << " ulps off";
}

}  // namespace
}  // namespace kiln::test
