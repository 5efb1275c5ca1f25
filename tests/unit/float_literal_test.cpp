// Float literals survive every text form exactly: KIR constants and masked-load `other`
// values (as the core prints them), and graph JSON numbers and the "inf"/"-inf"/"nan"
// strings JSON needs for what it cannot spell. Compiled, they reach the kernels unchanged.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/graph/graph_json.h"
#include "core/kir/kir_emit.h"
#include "kiln/kir.hpp"
#include "op_test_util.h"
#include "tests/unit/differential.h"

namespace kiln::test {
namespace {

const std::vector<double>& awkward_values() {
  static const std::vector<double> values = {
      0.0,
      -0.0,
      std::numeric_limits<double>::denorm_min(),
      -std::numeric_limits<float>::denorm_min(),
      FLT_MIN,
      FLT_MAX,
      -FLT_MAX,
      -3.4028234663852886e+38,  // torch.finfo(torch.float32).min, as Python prints it
      DBL_MAX,
      -DBL_MAX,
      1e+300,
      -1e-300,
      0.1,
      1.0 / 3.0,
      123456789012345678.0,
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN(),
  };
  return values;
}

// Same bits, except that every NaN equals every NaN.
bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

TEST(FloatLiterals, RoundTripThroughKirText) {
  for (const double v : awkward_values()) {
    for (const DType d : {DType::F32, DType::F64}) {
      const std::string text = number_text(v, d);
      SCOPED_TRACE(text);
      const std::string kir =
          "kir/1\nkernel k0 pointwise\n  buffer in0 f64 4 in\n"
          "  buffer out0 f64 4 out\n  ranges 4\n"
          "  %0 = const f64 " +
          text +
          "\n"
          "  %1 = const bool 1\n"
          "  %2 = load f64 in0[x0] mask %1 other " +
          text +
          "\n"
          "  %3 = add f64 %0, %2\n"
          "  store out0[x0] %3\nend\n";
      const kir::ParseResult parsed = kir::parse(kir);
      ASSERT_TRUE(parsed.ok()) << parsed.error;
      const kir::Kernel& k = parsed.kernels.at(0);
      EXPECT_TRUE(same_double(std::strtod(k.body.at(0).literal.c_str(), nullptr), v));
      EXPECT_TRUE(same_double(std::strtod(k.body.at(2).other.c_str(), nullptr), v));
      EXPECT_EQ(kir::print(parsed.kernels), kir);
    }
  }
}

TEST(FloatLiterals, RoundTripThroughGraphJson) {
  for (const double v : awkward_values()) {
    const std::string number = json_number(v);
    SCOPED_TRACE(number);
    auto g = parse_graph(R"({"format": "kiln.graph/1",
        "inputs": [{"name": "x", "dtype": "f64", "shape": [3]},
                   {"name": "m", "dtype": "bool", "shape": [3]}],
        "nodes": [{"name": "a", "op": "aten.add.Tensor", "args": ["%x", )" +
                             number + R"(]},
                  {"name": "f", "op": "aten.where.self", "args": ["%m", "%a", )" +
                             number + R"(]},
                  {"name": "c", "op": "aten.clamp.default", "args": ["%f"],
                   "kwargs": {"min": )" +
                             number + R"(}}],
        "outputs": ["%c"]})",
                         "g.json", registry());
    ASSERT_TRUE(g) << g.error().to_string();
    for (const Node& node : g->nodes) {
      SCOPED_TRACE(node.name);
      bool found = false;
      for (const ArgValue& a : node.args) {
        if (const double* d = std::get_if<double>(&a)) {
          found = true;
          EXPECT_TRUE(same_double(*d, v)) << *d;
        }
      }
      // Integral values may be read as ints; they are exact either way.
      if (!found) {
        EXPECT_EQ(v, std::trunc(v));
      }
    }
  }
}

TEST(FloatLiterals, OtherStringsWhereANumberStandsAreRefusedByPath) {
  auto g = parse_graph(R"({"format": "kiln.graph/1",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
      "nodes": [{"name": "a", "op": "aten.add.Tensor", "args": ["%x", "Infinity"]}],
      "outputs": ["%a"]})",
                       "g.json", registry());
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().to_string().find("nodes[0].args[1]"), std::string::npos)
      << g.error().to_string();
  EXPECT_NE(g.error().to_string().find("\"inf\", \"-inf\", \"nan\""), std::string::npos)
      << g.error().to_string();
}

// What exported attention masks and clamps carry, compiled: the extreme constants reach the
// kernels as the same values the oracle uses.
class CompiledLiterals : public Differential {};

TEST_F(CompiledLiterals, ExtremeConstantsCompileAndMatch) {
  GraphBuilder b = builder();
  const Shape s = {5, 7};
  const ValueRef x = input(b, "x", TensorType::contiguous(DType::F32, s), Range{-4, 4});
  const ValueRef xd = input(b, "xd", TensorType::contiguous(DType::F64, s), Range{-4, 4});
  const ValueRef mask = b.op("aten.gt.Scalar", {x, 0.5});
  output_of(b, "finfo_min", "aten.where.self", {mask, x, -3.4028234663852886e+38});
  output_of(b, "neg_inf_fill", "aten.where.self",
            {mask, x, -std::numeric_limits<double>::infinity()});
  output_of(b, "clamp_inf", "aten.clamp.default",
            {x, -std::numeric_limits<double>::infinity(), 1.0});
  output_of(b, "nan_fill", "aten.where.self", {mask, x, std::numeric_limits<double>::quiet_NaN()});
  output_of(b, "nan_full", "aten.full.default",
            {ints{3, 4}, std::numeric_limits<double>::quiet_NaN()}, {{"dtype", DType::F32}});
  output_of(b, "huge_f64", "aten.mul.Tensor", {xd, 1e+300});
  output_of(b, "tiny_f64", "aten.add.Tensor", {xd, 4.9406564584124654e-324});
  output_of(b, "softmax_masked", "aten._softmax.default",
            {b.op("aten.where.self", {mask, x, -3.4028234663852886e+38}), int64_t{-1}, false});
  check(b);
}

}  // namespace
}  // namespace kiln::test
