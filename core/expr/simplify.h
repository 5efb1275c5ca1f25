// simplify: the canonical form of an index expression.
//   - constants fold; sums and products flatten, like terms combine, terms sort by text;
//   - (d*A + R) floordiv d -> A + R floordiv d, and R floordiv d -> 0 when 0 <= R < d;
//   - (d*A + R) mod d -> R mod d, and R mod d -> R when 0 <= R < d;
//   - (e floordiv a) floordiv b -> e floordiv (a*b) for positive a, b;
//   - min/max decided when the operands' ranges do not overlap.
// Ranges come from `ranges`: each loop variable's inclusive [low, high].
// Postcondition: evaluate(simplify(e)) == evaluate(e) for every assignment inside the ranges.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/expr/expr.h"

namespace kiln {

struct Interval {
  int64_t low = 0;
  int64_t high = 0;  // inclusive
};

using VarRanges = std::map<std::string, Interval>;

Expr simplify(const Expr& e, const VarRanges& ranges = {});

// Bounds of `e` when its variables stay in `ranges` (unbounded variables: the int64 range).
Interval bounds(const Expr& e, const VarRanges& ranges);
// An expression known to stay in `range` (an index a mask compares with constants).
struct KnownBound {
  Expr expr;
  Interval range;
};

// The same, with what `known` says: each known expression wherever it occurs in `e`, and
// in any sum holding a known expression's terms scaled alike (c*G + rest).
Interval bounds(const Expr& e, const VarRanges& ranges, const std::vector<KnownBound>& known);

}  // namespace kiln
