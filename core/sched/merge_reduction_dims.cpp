#include "core/sched/merge_reduction_dims.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/expr/simplify.h"

namespace kiln {
namespace {

// The factors of `vars` in `e` when `e` is a sum of constant multiples of them and of terms
// free of them; nullopt when one of them sits inside anything else (a floordiv, a product
// with another variable).
std::optional<std::map<std::string, int64_t>> factors(const Expr& e,
                                                      const std::set<std::string>& vars) {
  std::map<std::string, int64_t> out;
  if (!mentions(e, vars)) return out;
  switch (e.kind()) {
    case ExprKind::Var:
      out[e.name()] = 1;
      return out;
    case ExprKind::Add:
      for (const Expr& o : e.operands()) {
        auto f = factors(o, vars);
        if (!f) return std::nullopt;
        for (const auto& [v, c] : *f) out[v] += c;
      }
      return out;
    case ExprKind::Mul: {
      int64_t scale = 1;
      std::optional<std::map<std::string, int64_t>> inner;
      for (const Expr& o : e.operands()) {
        if (o.is_const()) {
          scale *= o.value();
        } else if (mentions(o, vars) && !inner) {
          inner = factors(o, vars);
          if (!inner) return std::nullopt;
        } else {
          return std::nullopt;  // a product with a variable factor, or of two such terms
        }
      }
      for (const auto& [v, c] : *inner) out[v] = c * scale;
      return out;
    }
    default:
      return std::nullopt;
  }
}

std::string r(size_t i) {
  return "r" + std::to_string(i);
}

bool mergeable(const LoopKernel& k, size_t i) {
  const std::string outer = r(i), inner = r(i + 1);
  const int64_t inner_size = k.reduction_ranges[i + 1];
  for (const LoopOp& op : k.body) {
    if (!has_index(op)) continue;
    const auto f = factors(op.index, {outer, inner});
    if (!f) return false;
    const int64_t a = f->contains(outer) ? f->at(outer) : 0;
    const int64_t b = f->contains(inner) ? f->at(inner) : 0;
    if (a != b * inner_size) return false;
  }
  return true;
}

// r_i and r_{i+1} become one dim r_i of their product; later dims move down by one.
void merge(LoopKernel& k, size_t i) {
  std::map<std::string, Expr> to;
  to[r(i)] = Expr::constant(0);
  to[r(i + 1)] = Expr::var(r(i));
  for (size_t j = i + 2; j < k.reduction_ranges.size(); ++j) to[r(j)] = Expr::var(r(j - 1));
  VarRanges ranges;
  k.reduction_ranges[i] *= k.reduction_ranges[i + 1];
  k.reduction_ranges.erase(k.reduction_ranges.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  for (size_t j = 0; j < k.ranges.size(); ++j)
    ranges["x" + std::to_string(j)] = Interval{0, std::max<int64_t>(k.ranges[j] - 1, 0)};
  for (size_t j = 0; j < k.reduction_ranges.size(); ++j)
    ranges[r(j)] = Interval{0, std::max<int64_t>(k.reduction_ranges[j] - 1, 0)};
  for (LoopOp& op : k.body)
    if (has_index(op)) op.index = simplify(substitute(op.index, to), ranges);
}

}  // namespace

int merge_reduction_dims(LoopProgram& program) {
  int merged = 0;
  for (LoopKernel& k : program.kernels) {
    if (k.kind != LoopKernelKind::Reduction) continue;
    // Innermost pairs first, so three contiguous dims end as one.
    for (size_t i = k.reduction_ranges.size(); i-- > 1;) {
      if (!mergeable(k, i - 1)) continue;
      merge(k, i - 1);
      ++merged;
    }
  }
  return merged;
}

}  // namespace kiln
