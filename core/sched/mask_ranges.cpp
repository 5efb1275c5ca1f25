#include "core/sched/mask_ranges.h"

#include <algorithm>
#include <optional>

namespace kiln {
namespace {

const LoopOp* definition(const std::vector<LoopOp>& body, int id) {
  for (const LoopOp& op : body)
    if (op.id == id) return &op;
  return nullptr;
}

// The integer an int64 const op holds, or an index op of a constant expression.
std::optional<int64_t> constant_of(const LoopOp& op) {
  if (op.dtype != DType::I64) return std::nullopt;
  double c = op.value;
  if (op.kind == LoopOpKind::Index && op.index.is_const())
    c = static_cast<double>(op.index.value());
  else if (op.kind != LoopOpKind::Const)
    return std::nullopt;
  if (!(c > -1e15 && c < 1e15) || c != static_cast<double>(int64_t(c))) return std::nullopt;
  return static_cast<int64_t>(c);
}

// Narrows an interval by `value CMP c`.
void narrow(Interval& r, const std::string& cmp, int64_t c) {
  if (cmp == "ge") r.low = std::max(r.low, c);
  if (cmp == "gt") r.low = std::max(r.low, c + 1);
  if (cmp == "lt") r.high = std::min(r.high, c - 1);
  if (cmp == "le") r.high = std::min(r.high, c);
}

// `var + shift`, or `var` alone, exactly (another term would move the bound).
bool variable_plus_constant(const Expr& e, std::string& var, int64_t& shift) {
  const Expr s = simplify(e);
  shift = 0;
  if (s.kind() == ExprKind::Var) {
    var = s.name();
    return true;
  }
  if (s.kind() != ExprKind::Add || s.operands().size() != 2) return false;
  for (size_t v = 0; v < 2; ++v) {
    const Expr& a = s.operands()[v];
    const Expr& b = s.operands()[1 - v];
    if (a.kind() == ExprKind::Var && b.is_const()) {
      var = a.name();
      shift = b.value();
      return true;
    }
  }
  return false;
}

void narrow_from(const std::vector<LoopOp>& body, int id, VarRanges& ranges,
                 std::map<std::string, Interval>* guarded, int depth) {
  const LoopOp* op = depth > 64 ? nullptr : definition(body, id);
  if (!op || op->kind != LoopOpKind::Math || op->args.size() != 2) return;
  if (op->name == "and") {
    for (int a : op->args) narrow_from(body, a, ranges, guarded, depth + 1);
    return;
  }
  static const std::map<std::string, std::string> mirrored = {
      {"lt", "gt"}, {"le", "ge"}, {"gt", "lt"}, {"ge", "le"}};
  const auto mirror = mirrored.find(op->name);
  if (mirror == mirrored.end()) return;
  // index CMP constant, or constant CMP index read as index CMP' constant. Only an int64
  // index against an integer constant (a const op, or an index op of a constant, as
  // between() makes its bound): narrower or float compares see wrapped or rounded values.
  const LoopOp* index = definition(body, op->args[0]);
  const LoopOp* constant = definition(body, op->args[1]);
  std::string cmp = op->name;
  if (index && constant_of(*index) && constant && !constant_of(*constant)) {
    std::swap(index, constant);
    cmp = mirror->second;
  }
  if (!index || !constant || index->kind != LoopOpKind::Index || index->dtype != DType::I64) return;
  const std::optional<int64_t> bound = constant_of(*constant);
  if (!bound) return;
  const int64_t c = *bound;
  if (guarded) {
    const std::string text = index->index.to_string();
    // Unbounded until a compare says otherwise: a one-sided guard bounds one side only.
    if (!guarded->contains(text)) (*guarded)[text] = {INT64_MIN, INT64_MAX};
    narrow((*guarded)[text], cmp, c);
  }
  std::string var;
  int64_t shift = 0;
  if (!variable_plus_constant(index->index, var, shift)) return;
  const auto it = ranges.find(var);
  if (it == ranges.end() || shift < -(int64_t{1} << 50) || shift > (int64_t{1} << 50)) return;
  narrow(it->second, cmp, c - shift);
}

}  // namespace

void narrow_by_mask(const std::vector<LoopOp>& body, int mask, VarRanges& ranges,
                    std::map<std::string, Interval>* guarded) {
  if (mask >= 0) narrow_from(body, mask, ranges, guarded, 0);
}

VarRanges ranges_under_mask(const std::vector<LoopOp>& body, int mask, VarRanges ranges) {
  narrow_by_mask(body, mask, ranges);
  return ranges;
}

Expr drop_guarded_clamps(const Expr& e, const std::map<std::string, Interval>& guarded) {
  if (e.kind() == ExprKind::Const || e.kind() == ExprKind::Var) return e;
  // min(max(E, lo), hi) in either operand order, E kept inside [lo, hi] by the mask.
  if (e.kind() == ExprKind::Min && e.operands().size() == 2) {
    for (size_t h = 0; h < 2; ++h) {
      const Expr& hi = e.operands()[h];
      const Expr& inner = e.operands()[1 - h];
      if (!hi.is_const() || inner.kind() != ExprKind::Max || inner.operands().size() != 2) continue;
      for (size_t l = 0; l < 2; ++l) {
        const Expr& lo = inner.operands()[l];
        const Expr& arg = inner.operands()[1 - l];
        const auto g = guarded.find(arg.to_string());
        // An empty guard (a mask never on) proves nothing worth rewriting for.
        if (lo.is_const() && g != guarded.end() && g->second.low <= g->second.high &&
            g->second.low >= lo.value() && g->second.high <= hi.value())
          return drop_guarded_clamps(arg, guarded);
      }
    }
  }
  std::vector<Expr> operands;
  for (const Expr& o : e.operands()) operands.push_back(drop_guarded_clamps(o, guarded));
  return make_expr(e.kind(), std::move(operands));
}

void simplify_indices(LoopKernel& k) {
  const VarRanges r = loop_var_ranges(k);
  for (LoopOp& op : k.body) {
    if (!accesses_buffer(op) && op.kind != LoopOpKind::Index) continue;
    if (op.kind != LoopOpKind::Load || op.mask < 0) {
      op.index = simplify(op.index, r);
      continue;
    }
    VarRanges under = r;
    std::map<std::string, Interval> guarded;
    narrow_by_mask(k.body, op.mask, under, &guarded);
    // A mask no lane meets leaves the index as it is (the load never reads).
    const bool never = std::any_of(under.begin(), under.end(),
                                   [](const auto& v) { return v.second.low > v.second.high; });
    op.index = simplify(op.index, never ? r : under);
    if (!never) op.index = simplify(drop_guarded_clamps(op.index, guarded), under);
  }
}

}  // namespace kiln
