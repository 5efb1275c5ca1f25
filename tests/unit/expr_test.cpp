// Index expressions: the simplifier's rules, and a randomized check that simplification
// never changes a value inside the variables' ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "core/expr/simplify.h"

namespace kiln {
namespace {

const Expr x = Expr::var("x");
const Expr y = Expr::var("y");
const Expr z = Expr::var("z");
Expr c(int64_t v) {
  return Expr::constant(v);
}

std::string simple(const Expr& e, const VarRanges& ranges = {}) {
  return simplify(e, ranges).to_string();
}

TEST(Expr, PrintsWithMinimalParentheses) {
  EXPECT_EQ((x * c(4) + y).to_string(), "x*4 + y");
  EXPECT_EQ(floordiv(x + y, c(4)).to_string(), "(x + y) floordiv 4");
  EXPECT_EQ(mod(x * c(3), c(4)).to_string(), "(x*3) mod 4");
  EXPECT_EQ(min(x, c(7)).to_string(), "min(x, 7)");
}

TEST(Simplify, FoldsConstantsAndCombinesLikeTerms) {
  EXPECT_EQ(simple(c(2) * c(3) + c(4)), "10");
  EXPECT_EQ(simple(x * c(4) + x * c(2) + c(0)), "x*6");
  EXPECT_EQ(simple(x * c(0) + y), "y");
  EXPECT_EQ(simple(y + x), simple(x + y));  // canonical order
  EXPECT_EQ(simple(x + y + x * c(-1)), "y");
  EXPECT_EQ(simple((x + c(1)) * c(3)), "x*3 + 3");
}

TEST(Simplify, FloorDivAndModUseRanges) {
  const VarRanges r{{"x", {0, 9}}, {"y", {0, 3}}};
  // The examples: (x*4 + y) floordiv 4 -> x and (x*4 + y) mod 4 -> y when 0 <= y < 4.
  EXPECT_EQ(simple(floordiv(x * c(4) + y, c(4)), r), "x");
  EXPECT_EQ(simple(mod(x * c(4) + y, c(4)), r), "y");
  // Without the range of y, the remainder part stays.
  EXPECT_EQ(simple(floordiv(x * c(4) + y, c(4))), "x + y floordiv 4");
  EXPECT_EQ(simple(mod(x * c(4) + y, c(4))), "y mod 4");
  EXPECT_EQ(simple(floordiv(x, c(16)), r), "0");
  EXPECT_EQ(simple(mod(x, c(16)), r), "x");
  EXPECT_EQ(simple(floordiv(x, c(1))), "x");
  EXPECT_EQ(simple(mod(x, c(1))), "0");
  EXPECT_EQ(simple(floordiv(floordiv(x, c(2)), c(3))), "x floordiv 6");
  EXPECT_EQ(simple(floordiv(x * c(8) + y * c(2) + c(5), c(2)), r), "x*4 + y + 2");
}

TEST(Simplify, FloorSemanticsForNegatives) {
  EXPECT_EQ(simple(floordiv(c(-7), c(2))), "-4");
  EXPECT_EQ(simple(mod(c(-7), c(2))), "1");
  EXPECT_EQ(simple(mod(c(7), c(-2))), "-1");
  const VarRanges r{{"x", {0, 3}}};
  EXPECT_EQ(simple(floordiv(x + c(-4), c(4)), r), "-1");
  EXPECT_EQ(simple(mod(x + c(-4), c(4)), r), "x");
}

TEST(Simplify, AFlatPositionSplitAndJoinedIsItself) {
  // c*floordiv(a, c) + mod(a, c) == a for every a, negative ones included (floor semantics).
  const Expr a = x * c(4) + z;
  EXPECT_EQ(simple(floordiv(a, c(6)) * c(6) + mod(a, c(6))), "x*4 + z");
  EXPECT_EQ(simple(floordiv(a, c(8)) * c(16) + mod(a, c(8)) * c(2) + y), "x*8 + y + z*2");
  // Coefficients that do not pair stay as written.
  EXPECT_EQ(simple(floordiv(x, c(6)) * c(5) + mod(x, c(6))), "x floordiv 6*5 + x mod 6");
  for (int64_t v = -13; v <= 13; ++v)
    EXPECT_EQ(evaluate(simplify(floordiv(z, c(4)) * c(4) + mod(z, c(4)), {}), {{"z", v}}), v);
}

TEST(Simplify, AFlatPositionDividedByAMultipleOfItsWidthIsItsRowDivided) {
  // (row*width + column) floordiv (width*m) = row floordiv m for column in [0, width): the
  // view of a [2, 1024, V] gradient as [2048, V] read back through its batch.
  const VarRanges ranges{{"x", {0, 49}}, {"y", {0, 9}}};
  EXPECT_EQ(simple(floordiv(x + y * c(50), c(200)), ranges), "y floordiv 4");
  EXPECT_EQ(simple(floordiv(x + y * c(50) + c(100), c(200)), ranges), "(y + 2) floordiv 4");
  EXPECT_EQ(simple(floordiv(x + y * c(50), c(200)) * c(200) + mod(y, c(4)) * c(50) + x, ranges),
            "x + y*50");
  // A column that can reach the width is not a column: nothing to reduce.
  EXPECT_EQ(simple(floordiv(x + y * c(50), c(200)), {{"x", {0, 50}}, {"y", {0, 9}}}),
            "(x + y*50) floordiv 200");
}

TEST(Simplify, MinMaxDecidedByRanges) {
  const VarRanges r{{"x", {0, 7}}};
  EXPECT_EQ(simple(min(x, c(10)), r), "x");
  EXPECT_EQ(simple(max(x, c(10)), r), "10");
  EXPECT_EQ(simple(min(x, c(3)), r), "min(3, x)");
  EXPECT_EQ(simple(max(y, y)), "y");
}

TEST(Simplify, DivisionByZeroIsLeftAlone) {
  EXPECT_EQ(simple(floordiv(x, c(0))), "x floordiv 0");
}

// Random expressions over x, y, z in small ranges: simplified and original agree everywhere.
Expr random_expr(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 7);
  std::uniform_int_distribution<int> small(-6, 9);
  std::uniform_int_distribution<int> divisor(1, 6);
  const Expr vars[] = {x, y, z};
  switch (pick(rng)) {
    case 0:
      return c(small(rng));
    case 1:
      return vars[std::uniform_int_distribution<int>(0, 2)(rng)];
    case 2:
      return random_expr(rng, depth - 1) + random_expr(rng, depth - 1);
    case 3:
      return random_expr(rng, depth - 1) * c(small(rng));
    case 4:
      return floordiv(random_expr(rng, depth - 1), c(divisor(rng)));
    case 5:
      return mod(random_expr(rng, depth - 1), c(divisor(rng)));
    case 6:
      return min(random_expr(rng, depth - 1), random_expr(rng, depth - 1));
    default:
      return max(random_expr(rng, depth - 1), random_expr(rng, depth - 1)) +
             random_expr(rng, depth - 1) * x;
  }
}

TEST(Simplify, NeverChangesAValueInsideTheRanges) {
  std::mt19937 rng(std::random_device{}());
  const VarRanges ranges{{"x", {0, 5}}, {"y", {0, 3}}, {"z", {-2, 2}}};
  for (int trial = 0; trial < 2000; ++trial) {
    const Expr e = random_expr(rng, 4);
    const Expr s = simplify(e, ranges);
    for (int64_t xv = 0; xv <= 5; ++xv) {
      for (int64_t yv = 0; yv <= 3; ++yv) {
        for (int64_t zv = -2; zv <= 2; ++zv) {
          const std::map<std::string, int64_t> values{{"x", xv}, {"y", yv}, {"z", zv}};
          ASSERT_EQ(evaluate(e, values), evaluate(s, values))
              << e.to_string() << "  simplified to  " << s.to_string() << "  at x=" << xv
              << " y=" << yv << " z=" << zv;
        }
      }
    }
    EXPECT_EQ(simplify(s, ranges), s) << "not a fixed point: " << s.to_string();
  }
}

TEST(Bounds, AMaskedRowBoundsTheTermsItScales) {
  // A flat position's row G (what a cat's mask compares) reappears in a load's index scaled
  // by the row stride, spread over its terms: bounds use G's range for them.
  const Expr flat = x + y * c(64);
  const Expr row = floordiv(mod(flat, c(192)), c(64)) + floordiv(flat, c(192)) * c(3);
  const Expr index = mod(floordiv(flat, c(192)), c(32)) +
                     floordiv(mod(flat, c(192)), c(64)) * c(32) + floordiv(flat, c(192)) * c(96);
  const VarRanges ranges{{"x", {0, 63}}, {"y", {0, 191}}};
  const Interval plain = bounds(index, ranges);
  EXPECT_EQ(plain.high, 31 + 2 * 32 + 63 * 96);
  const Interval masked = bounds(index, ranges, {{row, {64, 127}}});
  EXPECT_EQ(masked.low, 2048);
  EXPECT_EQ(masked.high, 4095);
  // Sound: every value the index takes where the mask holds lies inside.
  for (int64_t xv = 0; xv < 64; ++xv)
    for (int64_t yv = 0; yv < 192; ++yv) {
      const std::map<std::string, int64_t> at{{"x", xv}, {"y", yv}};
      const int64_t r = evaluate(row, at);
      if (r < 64 || r > 127) continue;
      const int64_t v = evaluate(index, at);
      ASSERT_TRUE(v >= masked.low && v <= masked.high) << "x=" << xv << " y=" << yv;
    }
  // The guarded expression itself, and a sum that holds its terms with another ratio (not
  // a multiple of it: nothing to use).
  EXPECT_EQ(bounds(row + c(5), ranges, {{row, {64, 127}}}).high, 132);
  const Expr unlike = floordiv(mod(flat, c(192)), c(64)) * c(2) + floordiv(flat, c(192));
  EXPECT_EQ(bounds(unlike, ranges, {{row, {64, 127}}}).high, bounds(unlike, ranges).high);
}

TEST(Bounds, ValuesThatWrapAreNotNarrowedByALaterDivision) {
  // x*4 leaves int64 for large x and wraps negative at run time: the bounds of a division of
  // it must keep those values, not a clamped end divided down to [0, 1].
  const VarRanges ranges{{"x", {0, int64_t{1} << 62}}};
  const Interval b = bounds(floordiv(x * c(4), c(int64_t{1} << 62)), ranges);
  EXPECT_LE(b.low, -2);
  // A one-sided guard bounds one side only (what an unbounded side reaches wraps too).
  const Interval one_sided = bounds(floordiv(x * c(4), c(int64_t{1} << 62)), ranges,
                                    {{x * c(4), {std::numeric_limits<int64_t>::min(), 0}}});
  EXPECT_LE(one_sided.low, -2);
}

TEST(Bounds, DeepSumsHoldingAKnownExpressionTakeLittleWork) {
  // Each level holds the known sum again: bounds must not re-walk every level for each
  // (2^64 walks would never end; this test would time out).
  Expr e = x + y;
  for (int level = 0; level < 64; ++level) e = x + y + floordiv(e, c(2));
  const Interval b = bounds(e, {{"x", {0, 3}}, {"y", {0, 3}}}, {{x + y, {0, 2}}});
  EXPECT_GE(b.high, 2);
}

TEST(Simplify, NestedDivisionsWhoseDivisorsOverflowStayAsTheyAre) {
  const Expr e = floordiv(floordiv(x, c(int64_t{1} << 32)), c(int64_t{1} << 32));
  const Expr s = simplify(e, {{"x", {0, int64_t{1} << 62}}});
  for (const int64_t v : {int64_t{0}, int64_t{1} << 40, int64_t{1} << 62})
    EXPECT_EQ(evaluate(s, {{"x", v}}), evaluate(e, {{"x", v}})) << s.to_string();
}

TEST(Bounds, KnownRangesNeverMakeBoundsUnsound) {
  // Random expressions with a random sub-sum known to stay in the range it takes where a
  // random condition holds: every value inside that condition is inside the bounds.
  std::mt19937 rng(std::random_device{}());
  const VarRanges ranges{{"x", {0, 5}}, {"y", {0, 3}}, {"z", {-2, 2}}};
  for (int trial = 0; trial < 500; ++trial) {
    const Expr g = random_expr(rng, 2);
    const int64_t scale = std::uniform_int_distribution<int>(-3, 4)(rng);
    const Expr e = g * c(scale) + random_expr(rng, 3);
    std::vector<int64_t> seen;
    for (int64_t xv = 0; xv <= 5; ++xv)
      for (int64_t yv = 0; yv <= 3; ++yv)
        for (int64_t zv = -2; zv <= 2; ++zv)
          seen.push_back(evaluate(g, {{"x", xv}, {"y", yv}, {"z", zv}}));
    std::sort(seen.begin(), seen.end());
    const Interval range{seen[seen.size() / 3], seen[2 * seen.size() / 3]};
    const Expr gs = simplify(g, ranges), es = simplify(e, ranges);
    const Interval b = bounds(es, ranges, {{gs, range}});
    for (int64_t xv = 0; xv <= 5; ++xv)
      for (int64_t yv = 0; yv <= 3; ++yv)
        for (int64_t zv = -2; zv <= 2; ++zv) {
          const std::map<std::string, int64_t> at{{"x", xv}, {"y", yv}, {"z", zv}};
          const int64_t gv = evaluate(g, at);
          if (gv < range.low || gv > range.high) continue;
          const int64_t v = evaluate(e, at);
          ASSERT_TRUE(v >= b.low && v <= b.high)
              << es.to_string() << " with " << gs.to_string() << " in [" << range.low << ", "
              << range.high << "]: " << v << " outside [" << b.low << ", " << b.high << "]";
        }
  }
}

}  // namespace
}  // namespace kiln
