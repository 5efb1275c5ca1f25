#include "core/sched/mask_ranges.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kiln {
namespace {

using Defs = std::map<int, const LoopOp*>;

// `var + c` as (var, c), for an index op whose value is exactly that.
bool variable_plus_constant(const Expr& e, std::string& var, int64_t& c) {
  const Expr s = simplify(e);
  if (s.kind() == ExprKind::Var) {
    var = s.name();
    c = 0;
    return true;
  }
  if (s.kind() != ExprKind::Add || s.operands().size() != 2) return false;
  for (int v = 0; v < 2; ++v) {
    const Expr& a = s.operands()[static_cast<size_t>(v)];
    const Expr& b = s.operands()[static_cast<size_t>(1 - v)];
    if (a.kind() == ExprKind::Var && b.is_const()) {
      var = a.name();
      c = b.value();
      return true;
    }
  }
  return false;
}

// An integer constant op's value.
bool integer_constant(const Defs& defs, int id, int64_t& out) {
  const auto it = defs.find(id);
  if (it == defs.end() || it->second->kind != LoopOpKind::Const) return false;
  const double v = it->second->value;
  if (v != std::floor(v) || std::abs(v) > 0x1p62) return false;
  out = static_cast<int64_t>(v);
  return true;
}

void narrow(const Defs& defs, int id, VarRanges& ranges, int depth) {
  const auto it = defs.find(id);
  if (depth > 16 || it == defs.end() || it->second->kind != LoopOpKind::Math) return;
  const LoopOp& op = *it->second;
  if (op.name == "and" && op.args.size() == 2) {
    narrow(defs, op.args[0], ranges, depth + 1);
    narrow(defs, op.args[1], ranges, depth + 1);
    return;
  }
  static const std::map<std::string, std::string> mirrored = {
      {"lt", "gt"}, {"le", "ge"}, {"gt", "lt"}, {"ge", "le"}};
  const auto flip = mirrored.find(op.name);
  if (flip == mirrored.end() || op.args.size() != 2) return;
  // var + c  CMP  k, the variable on either side.
  std::string cmp = op.name;
  int lhs = op.args[0], rhs = op.args[1];
  int64_t k = 0;
  if (!integer_constant(defs, rhs, k)) {
    if (!integer_constant(defs, lhs, k)) return;
    std::swap(lhs, rhs);
    cmp = flip->second;
  }
  const auto def = defs.find(lhs);
  if (def == defs.end() || def->second->kind != LoopOpKind::Index ||
      def->second->dtype != DType::I64)
    return;
  std::string var;
  int64_t c = 0;
  if (!variable_plus_constant(def->second->index, var, c)) return;
  auto range = ranges.find(var);
  if (range == ranges.end()) return;
  Interval& r = range->second;
  const int64_t bound = k - c;  // var CMP bound
  if (cmp == "lt") r.high = std::min(r.high, bound - 1);
  if (cmp == "le") r.high = std::min(r.high, bound);
  if (cmp == "gt") r.low = std::max(r.low, bound + 1);
  if (cmp == "ge") r.low = std::max(r.low, bound);
}

}  // namespace

VarRanges ranges_under_mask(const std::vector<LoopOp>& body, int mask, VarRanges ranges) {
  Defs defs;
  for (const LoopOp& op : body)
    if (op.id >= 0) defs[op.id] = &op;
  narrow(defs, mask, ranges, 0);
  return ranges;
}

void simplify_indices(LoopKernel& k) {
  const VarRanges r = loop_var_ranges(k);
  for (LoopOp& op : k.body) {
    if (!accesses_buffer(op) && op.kind != LoopOpKind::Index) continue;
    const bool masked_load = op.kind == LoopOpKind::Load && op.mask >= 0;
    VarRanges under = masked_load ? ranges_under_mask(k.body, op.mask, r) : r;
    // A mask no lane meets leaves the index as it is (the load never reads).
    const bool empty = std::any_of(under.begin(), under.end(),
                                   [](const auto& v) { return v.second.low > v.second.high; });
    op.index = simplify(op.index, empty ? r : under);
  }
}

}  // namespace kiln
