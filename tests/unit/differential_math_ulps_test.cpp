// Transcendentals to the ulp, through the plugin under test: the suite's tolerance (1.3e-6
// relative, 1e-5 absolute) would let a function a hundred ulps off pass, and the cpp_openmp
// plugin computes f32 exp, erf and tanh with its own polynomials (kiln_cpu_runtime.h), not a
// library. Each function's every input class: tiny and subnormal values, both sides of each
// switch of method, the edges of overflow and underflow, infinities, signed zeros and NaN.
#include <cmath>
#include <limits>

#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

class CompiledMathUlps : public Differential {
 protected:
  // The largest error of `op` over `xs`, in units of the f32 spacing at the exact result.
  double worst_ulps(const std::string& op, std::vector<float> xs, double (*exact)(double)) {
    while (xs.size() % 7 != 3) xs.push_back(0.5f);  // an odd length: the vector loop's tail too
    const int64_t n = static_cast<int64_t>(xs.size());
    GraphBuilder b = builder();
    const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, {n}));
    output_of(b, op, op, {x});
    auto compiled = compile(finish(b));
    if (!compiled) ADD_FAILURE() << compiled.error().to_string();
    HostTensor in = HostTensor::zeros(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i) in.set(i, xs[static_cast<size_t>(i)]);
    auto out = compiled ? compiled->run({in}) : Result<std::vector<HostTensor>>(Error::user(""));
    if (!out) {
      ADD_FAILURE() << out.error().to_string();
      return INFINITY;
    }
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float xi = xs[static_cast<size_t>(i)];
      const double off = ulps_off(exact(xi), static_cast<float>((*out)[0].get(i)));
      if (!(off <= worst)) {
        worst = off;
        worst_x_ = xi;
      }
    }
    return worst;
  }
  float worst_x_ = 0;

 private:
  static double ulps_off(double want, float got) {
    const float rounded = static_cast<float>(want);
    if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
    if (rounded == 0 || std::isinf(rounded))  // signed zeros and infinities exactly
      return got == rounded && std::signbit(got) == std::signbit(rounded) ? 0 : INFINITY;
    const double spacing = std::fabs(rounded) < std::numeric_limits<float>::min()
                               ? std::numeric_limits<float>::denorm_min()
                               : std::nextafter(std::fabs(rounded), INFINITY) - std::fabs(rounded);
    return std::fabs(static_cast<double>(got) - want) / spacing;
  }
};

// Both signs of `x` and its 64 neighbours on each side.
void add_around(std::vector<float>& xs, float x) {
  for (int i = 0; i < 64; ++i) x = std::nextafter(x, 0.0f);
  for (int i = 0; i < 128; ++i, x = std::nextafter(x, 1e30f)) xs.insert(xs.end(), {x, -x});
}

void add_specials(std::vector<float>& xs) {
  const float inf = std::numeric_limits<float>::infinity();
  xs.insert(xs.end(), {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::denorm_min(), 1e30f, -1e30f});
}

// sin and cos: Sleef's 3.5-ulp vector forms on cpp_openmp (libdevice's on ptx), over every
// octant up to 1e4, the neighbourhoods of zeros and extrema, and the specials (infinities
// give NaN).
TEST_F(CompiledMathUlps, SinAndCosAreWithinFourUlps) {
  std::vector<float> xs;
  add_specials(xs);
  for (float x : {1e-30f, 1e-6f, 0.5f, 0.7853982f, 1.5707964f, 3.1415927f, 4.712389f, 6.2831855f,
                  100.0f, 1000.5f, 9999.0f})
    add_around(xs, x);
  for (int i = 0; i < 4000; ++i) xs.push_back(static_cast<float>(i) * 2.5f - 5000.0f);
  std::erase_if(xs, [](float x) { return std::fabs(x) > 1e4f && std::isfinite(x); });
  EXPECT_LE(worst_ulps("aten.sin.default", xs, [](double x) { return std::sin(x); }), 4.0)
      << "at " << worst_x_;
  EXPECT_LE(worst_ulps("aten.cos.default", xs, [](double x) { return std::cos(x); }), 4.0)
      << "at " << worst_x_;
}

TEST_F(CompiledMathUlps, ErfIsWithinTwoUlps) {
  std::vector<float> xs;
  for (int i = -200000; i <= 200000; ++i) xs.push_back(static_cast<float>(i) * 3e-5f);  // +-6
  for (float x = 1e-38f; x < 1; x *= 1.01f) xs.insert(xs.end(), {x, -x});
  add_around(xs, 1.25f);  // where the polynomial hands over to 1 - exp(...)
  add_around(xs, 3.93f);  // where erf reaches 1
  add_specials(xs);
  EXPECT_LE(worst_ulps("aten.erf.default", xs, [](double x) { return std::erf(x); }), 2.0)
      << "at " << std::hexfloat << worst_x_;
}

TEST_F(CompiledMathUlps, ExpIsWithinTwoUlps) {
  std::vector<float> xs;
  for (int i = -300000; i <= 300000; ++i) xs.push_back(static_cast<float>(i) * 3.5e-4f);  // +-105
  for (float x = 1e-38f; x < 1; x *= 1.01f) xs.insert(xs.end(), {x, -x});
  add_around(xs, 88.72283f);    // overflow
  add_around(xs, 87.33655f);    // the smallest normal result
  add_around(xs, 103.27893f);   // the smallest subnormal result
  add_around(xs, 0.34657359f);  // half of ln 2: the range reduction's step
  add_specials(xs);
  EXPECT_LE(worst_ulps("aten.exp.default", xs, [](double x) { return std::exp(x); }), 2.0)
      << "at " << std::hexfloat << worst_x_;
}

TEST_F(CompiledMathUlps, TanhIsWithinTwoUlps) {
  std::vector<float> xs;
  for (int i = -200000; i <= 200000; ++i) xs.push_back(static_cast<float>(i) * 6e-5f);  // +-12
  for (float x = 1e-38f; x < 1; x *= 1.01f) xs.insert(xs.end(), {x, -x});
  add_around(xs, 0.875f);  // where the polynomial hands over to 1 - 2 / (exp(2x) + 1)
  add_around(xs, 9.01f);   // where tanh reaches 1
  add_around(xs, 44.4f);   // where exp(2x) overflows
  add_specials(xs);
  EXPECT_LE(worst_ulps("aten.tanh.default", xs, [](double x) { return std::tanh(x); }), 2.0)
      << "at " << std::hexfloat << worst_x_;
}

}  // namespace
}  // namespace kiln::test
