// Matching two kernels' loops: the variables of one kernel written as expressions over the
// loops of another, so their bodies can share one loop nest. This is where loop reordering
// happens: the dims are paired by size, guided by the indices both kernels use for a shared
// buffer, so `x[i, j]` and `x^T[j, i]` walks end up in one order.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/lower/loop_ir.h"
#include "core/sched/fusion_failure.h"

namespace kiln {

struct LoopSpace {
  Shape ranges;     // x0..
  Shape reduction;  // r0..
};

LoopSpace space_of(const LoopKernel& k);

// A pair of indices of one buffer that should come out equal: (over `from`'s variables,
// over the target's variables).
using IndexHint = std::pair<Expr, Expr>;

struct SpaceMapping {
  std::map<std::string, Expr> bind;  // from's variables -> expressions over the target's
  FusionCategory why = FusionCategory::Unknown;  // when bind is empty and failed
  std::string detail;
  bool ok = false;
};

// Maps `from` onto `to`. A pointwise `from` covers either every point of `to` (rows and
// reduction dims) or, with `rows_only`, its rows; a reduction `from` needs the same space.
SpaceMapping map_space(const LoopKernel& from, const LoopSpace& to, bool rows_only,
                       const std::vector<IndexHint>& hints);

// Coefficients of a linear index (var -> factor, "" -> constant), or nullopt.
std::optional<std::map<std::string, int64_t>> linear_terms(const Expr& e);

}  // namespace kiln
