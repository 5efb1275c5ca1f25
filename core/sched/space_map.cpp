#include "core/sched/space_map.h"

#include "core/expr/simplify.h"
#include "core/graph/tensor_type.h"

namespace kiln {
namespace {

struct Dim {
  std::string name;
  int64_t size = 1;
};

std::vector<Dim> dims(const Shape& sizes, char prefix) {
  std::vector<Dim> out;
  for (size_t i = 0; i < sizes.size(); ++i)
    out.push_back({std::string(1, prefix) + std::to_string(i), sizes[i]});
  return out;
}

SpaceMapping failed(FusionCategory why, std::string detail) {
  SpaceMapping m;
  m.why = why;
  m.detail = std::move(detail);
  return m;
}

}  // namespace

LoopSpace space_of(const LoopKernel& k) {
  return {k.ranges, k.reduction_ranges};
}

std::optional<std::map<std::string, int64_t>> linear_terms(const Expr& e) {
  std::map<std::string, int64_t> terms;
  auto add_term = [&](const Expr& t) {
    if (t.is_const()) {
      terms[""] += t.value();
      return true;
    }
    if (t.kind() == ExprKind::Var) {
      terms[t.name()] += 1;
      return true;
    }
    if (t.kind() != ExprKind::Mul || t.operands().size() != 2) return false;
    const Expr& a = t.operands()[0];
    const Expr& b = t.operands()[1];
    if (a.is_const() && b.kind() == ExprKind::Var)
      terms[b.name()] += a.value();
    else if (b.is_const() && a.kind() == ExprKind::Var)
      terms[a.name()] += b.value();
    else
      return false;
    return true;
  };
  const Expr s = simplify(e);
  if (s.kind() == ExprKind::Add) {
    for (const Expr& t : s.operands())
      if (!add_term(t)) return std::nullopt;
  } else if (!add_term(s)) {
    return std::nullopt;
  }
  return terms;
}

SpaceMapping map_space(const LoopKernel& from, const LoopSpace& to, bool rows_only,
                       const std::vector<IndexHint>& hints) {
  const int64_t from_n = shape_numel(from.ranges) * shape_numel(from.reduction_ranges);
  const int64_t to_n = shape_numel(to.ranges) * (rows_only ? 1 : shape_numel(to.reduction));
  const std::string sizes = shape_text(from.ranges) + " vs " + shape_text(to.ranges) +
                            (rows_only ? "" : " x " + shape_text(to.reduction));
  if (from_n != to_n) {
    const bool multiple = from_n > 0 && to_n > 0 && (from_n % to_n == 0 || to_n % from_n == 0);
    return failed(multiple ? FusionCategory::Broadcast : FusionCategory::DifferentNumel,
                  "iteration spaces " + sizes);
  }
  if (from_n == 0) return failed(FusionCategory::DifferentNumel, "an empty iteration space");
  SpaceMapping m;
  if (from.kind == LoopKernelKind::Reduction) {
    if (rows_only || from.ranges != to.ranges || from.reduction_ranges != to.reduction)
      return failed(FusionCategory::DifferentOrder, "reductions over " + shape_text(from.ranges) +
                                                        " x " + shape_text(from.reduction_ranges) +
                                                        " and " + shape_text(to.ranges) + " x " +
                                                        shape_text(to.reduction));
    for (const Dim& d : dims(from.ranges, 'x')) m.bind[d.name] = Expr::var(d.name);
    for (const Dim& d : dims(from.reduction_ranges, 'r')) m.bind[d.name] = Expr::var(d.name);
    m.ok = true;
    return m;
  }
  std::vector<Dim> source, target;
  for (const Dim& d : dims(from.ranges, 'x')) {
    if (d.size == 1)
      m.bind[d.name] = Expr::constant(0);
    else
      source.push_back(d);
  }
  std::vector<Dim> all = dims(to.ranges, 'x');
  if (!rows_only)
    for (const Dim& d : dims(to.reduction, 'r')) all.push_back(d);
  for (const Dim& d : all)
    if (d.size != 1) target.push_back(d);
  std::vector<bool> taken(target.size(), false);
  // A shared buffer's two indices pair dims with the same stride: that is the reordering.
  for (const auto& [from_index, to_index] : hints) {
    const auto f = linear_terms(from_index), t = linear_terms(to_index);
    if (!f || !t) continue;
    for (const Dim& s : source) {
      if (m.bind.contains(s.name)) continue;
      auto fc = f->find(s.name);
      if (fc == f->end() || fc->second == 0) continue;
      for (size_t j = 0; j < target.size(); ++j) {
        auto tc = t->find(target[j].name);
        if (taken[j] || tc == t->end() || tc->second != fc->second || target[j].size != s.size)
          continue;
        m.bind[s.name] = Expr::var(target[j].name);
        taken[j] = true;
        break;
      }
    }
  }
  // The rest pair up in order; a dim may also match a run of dims whose sizes multiply to
  // its size (a reshape between the kernels: [32] against [2, 16]).
  std::vector<Dim> rest_source, rest_target;
  for (const Dim& s : source)
    if (!m.bind.contains(s.name)) rest_source.push_back(s);
  for (size_t t = 0; t < target.size(); ++t)
    if (!taken[t]) rest_target.push_back(target[t]);
  size_t i = 0, j = 0;
  while (i < rest_source.size() && j < rest_target.size()) {
    size_t i_end = i + 1, j_end = j + 1;
    int64_t ps = rest_source[i].size, pt = rest_target[j].size;
    while (ps != pt) {
      if (ps < pt && i_end < rest_source.size())
        ps *= rest_source[i_end++].size;
      else if (pt < ps && j_end < rest_target.size())
        pt *= rest_target[j_end++].size;
      else
        return failed(FusionCategory::DifferentOrder, "dims do not pair up: " + sizes);
    }
    // The run of target dims as one row-major value, then each source dim cut out of it.
    Expr flat = Expr::constant(0);
    for (size_t t = j; t < j_end; ++t)
      flat = flat * Expr::constant(rest_target[t].size) + Expr::var(rest_target[t].name);
    int64_t inner = ps;
    for (size_t q = i; q < i_end; ++q) {
      inner /= rest_source[q].size;
      Expr e = inner == 1 ? flat : floordiv(flat, Expr::constant(inner));
      if (q > i) e = mod(e, Expr::constant(rest_source[q].size));
      m.bind[rest_source[q].name] = simplify(e);
    }
    i = i_end;
    j = j_end;
  }
  if (i != rest_source.size() || j != rest_target.size())
    return failed(FusionCategory::DifferentOrder, "dims do not pair up: " + sizes);
  m.ok = true;
  return m;
}

}  // namespace kiln
