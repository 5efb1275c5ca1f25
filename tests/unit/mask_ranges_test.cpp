// ranges_under_mask: what a load's mask says about the loop variables (core/sched/mask_ranges.h).
#include "core/sched/mask_ranges.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

int add(std::vector<LoopOp>& body, LoopOp op) {
  op.id = static_cast<int>(body.size());
  body.push_back(std::move(op));
  return body.back().id;
}

int position(std::vector<LoopOp>& body, const Expr& e) {
  LoopOp op;
  op.kind = LoopOpKind::Index;
  op.dtype = DType::I64;
  op.index = e;
  return add(body, op);
}

int constant(std::vector<LoopOp>& body, double v, DType d = DType::I64) {
  LoopOp op;
  op.kind = LoopOpKind::Const;
  op.dtype = d;
  op.value = v;
  return add(body, op);
}

int math(std::vector<LoopOp>& body, const std::string& name, int a, int b) {
  LoopOp op;
  op.kind = LoopOpKind::Math;
  op.dtype = DType::Bool;
  op.name = name;
  op.args = {a, b};
  return add(body, op);
}

TEST(MaskRanges, ConjunctionsOfCompares) {
  std::vector<LoopOp> body;
  const Expr x2 = Expr::var("x2");
  // 64 <= x2 + 1 and x2 < 100, the second written 100 > x2.
  const int low = math(body, "ge", position(body, x2 + Expr::constant(1)), constant(body, 64));
  const int high = math(body, "gt", constant(body, 100), position(body, x2));
  const int both = math(body, "and", low, high);
  const VarRanges r = ranges_under_mask(body, both, {{"x2", {0, 127}}, {"x1", {0, 9}}});
  EXPECT_EQ(r.at("x2").low, 63);
  EXPECT_EQ(r.at("x2").high, 99);
  EXPECT_EQ(r.at("x1").low, 0);
  EXPECT_EQ(r.at("x1").high, 9);
}

TEST(MaskRanges, OtherMasksNarrowNothing) {
  std::vector<LoopOp> body;
  const Expr x2 = Expr::var("x2");
  // or, a non-integer constant, a position of two variables, a float compare.
  const int a = math(body, "lt", position(body, x2), constant(body, 8));
  const int b = math(body, "lt", position(body, x2), constant(body, 4));
  const int either = math(body, "or", a, b);
  const int fractional = math(body, "lt", position(body, x2), constant(body, 8.5));
  const int two = math(body, "lt", position(body, x2 + Expr::var("x1")), constant(body, 8));
  const int floats = math(body, "lt", constant(body, 1, DType::F32), constant(body, 8));
  for (int mask : {either, fractional, two, floats}) {
    const VarRanges r = ranges_under_mask(body, mask, {{"x2", {0, 127}}, {"x1", {0, 9}}});
    EXPECT_EQ(r.at("x2").low, 0) << mask;
    EXPECT_EQ(r.at("x2").high, 127) << mask;
  }
}

TEST(MaskRanges, MaskedLoadIndexSimplifiesUnderItsMask) {
  LoopKernel k;
  k.ranges = {2, 128};
  const Expr x1 = Expr::var("x1");
  const int mask = math(k.body, "lt", position(k.body, x1), constant(k.body, 64));
  LoopOp load;
  load.kind = LoopOpKind::Load;
  load.buffer = 0;
  load.mask = mask;
  // A flat position split again: with x1 < 64 the floordiv is 0 and the mod is x1.
  load.index =
      floordiv(x1, Expr::constant(64)) * Expr::constant(1000) + mod(x1, Expr::constant(64));
  const int at = add(k.body, load);
  LoopOp plain = load;
  plain.mask = -1;
  const int unmasked = add(k.body, plain);
  simplify_indices(k);
  EXPECT_EQ(k.body[static_cast<size_t>(at)].index.to_string(), "x1");
  EXPECT_NE(k.body[static_cast<size_t>(unmasked)].index.to_string(), "x1");
}

// A padded window's tap: x3 + x5 - 1 clamped into [0, 55] under a mask 0 <= x3 + x5 - 1 < 56
// (its bound an index op of a constant, as between() writes it)
// reads x3 + x5 - 1 itself (linear in x5: a vector load); a clamp the mask does not cover
// (the row's, guarded on one side only) stays.
TEST(MaskRanges, ClampsTheMaskCoversAreDropped) {
  LoopKernel k;
  k.ranges = {3, 3, 56, 56};
  const Expr col = Expr::var("x1") + Expr::var("x3") + Expr::constant(-1);
  const Expr row = Expr::var("x0") + Expr::var("x2") + Expr::constant(-1);
  const int at = position(k.body, col);
  const int inside = math(k.body, "and", math(k.body, "ge", at, constant(k.body, 0)),
                          math(k.body, "lt", at, position(k.body, Expr::constant(56))));
  const int row_at = position(k.body, row);
  const int mask = math(k.body, "and", inside, math(k.body, "ge", row_at, constant(k.body, 0)));
  const auto clamp = [](const Expr& e) {
    return min(max(e, Expr::constant(0)), Expr::constant(55));
  };
  LoopOp load;
  load.kind = LoopOpKind::Load;
  load.buffer = 0;
  load.mask = mask;
  load.index = clamp(row) * Expr::constant(56) + clamp(col);
  const int loaded = add(k.body, load);
  simplify_indices(k);
  const std::string index = k.body[static_cast<size_t>(loaded)].index.to_string();
  EXPECT_EQ(index.find("min(55, max(0, x1 + x3 + -1))"), std::string::npos) << index;
  EXPECT_NE(index.find("min(55, max(0, x0 + x2 + -1))"), std::string::npos) << index;
}

// Clamps a mask does not keep idle stay: an `or` of the guards, a guard wider than the clamp,
// and a mask no iteration meets (its load never reads). A guard written constant-first
// counts like any other.
TEST(MaskRanges, ClampsTheMaskDoesNotCoverStay) {
  const Expr col = Expr::var("x1") + Expr::var("x3") + Expr::constant(-1);
  const auto clamp = [](const Expr& e) {
    return min(max(e, Expr::constant(0)), Expr::constant(55));
  };
  const auto simplified = [&](auto make_mask) {
    LoopKernel k;
    k.ranges = {3, 3, 56, 56};
    const int at = position(k.body, col);
    LoopOp load;
    load.kind = LoopOpKind::Load;
    load.buffer = 0;
    load.mask = make_mask(k.body, at);
    load.index = clamp(col);
    const int loaded = add(k.body, load);
    simplify_indices(k);
    return k.body[static_cast<size_t>(loaded)].index.to_string();
  };
  const std::string clamped = simplify(clamp(col)).to_string();
  EXPECT_EQ(simplified([](std::vector<LoopOp>& body, int at) {
              return math(body, "or", math(body, "ge", at, constant(body, 0)),
                          math(body, "lt", at, constant(body, 56)));
            }),
            clamped);
  EXPECT_EQ(simplified([](std::vector<LoopOp>& body, int at) {
              return math(body, "and", math(body, "ge", at, constant(body, 0)),
                          math(body, "lt", at, constant(body, 57)));
            }),
            clamped);
  EXPECT_EQ(simplified([](std::vector<LoopOp>& body, int at) {
              return math(body, "and", math(body, "ge", at, constant(body, 0)),
                          math(body, "lt", at, constant(body, -5)));
            }),
            clamped);
  EXPECT_EQ(simplified([](std::vector<LoopOp>& body, int at) {
              return math(body, "and", math(body, "le", constant(body, 0), at),
                          math(body, "gt", constant(body, 56), at));
            }),
            simplify(col).to_string());
}

}  // namespace
}  // namespace kiln
