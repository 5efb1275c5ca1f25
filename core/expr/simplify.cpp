#include "core/expr/simplify.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

namespace kiln {
namespace {

// 128-bit intermediates for interval products (a GCC/Clang extension).
__extension__ using Wide = __int128;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Coefficient arithmetic wraps instead of overflowing (index sizes are far from the limit;
// this only keeps a hostile expression from being undefined behaviour).
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// An interval of int64 values from exact 128-bit bounds. Where a bound leaves the int64
// range the value wraps at run time, and anything can come of it: the whole range, never
// a clamped end that a later floordiv or min would turn into a narrow, wrong interval.
Interval wide_interval(Wide low, Wide high) {
  if (low < kMin || high > kMax) return {kMin, kMax};
  return {static_cast<int64_t>(low), static_cast<int64_t>(high)};
}

// A sum of atoms times coefficients, plus a constant. Atoms are anything that is not a
// sum, a constant, or a product with a constant.
struct Linear {
  int64_t constant = 0;
  std::map<std::string, std::pair<Expr, int64_t>> terms;  // by atom text: sorted, deduplicated

  void add(const Expr& atom, int64_t coeff) {
    auto [it, inserted] = terms.emplace(atom.to_string(), std::pair{atom, coeff});
    if (!inserted) it->second.second = wrap_add(it->second.second, coeff);
    if (it->second.second == 0) terms.erase(it);
  }
};

Linear linear_of(const Expr& e);

void accumulate(Linear& out, const Expr& e, int64_t scale) {
  if (scale == 0) return;
  switch (e.kind()) {
    case ExprKind::Const:
      out.constant = wrap_add(out.constant, wrap_mul(scale, e.value()));
      return;
    case ExprKind::Add:
      for (const auto& o : e.operands()) accumulate(out, o, scale);
      return;
    case ExprKind::Mul: {
      // Constant factors scale; the rest stays one atom.
      int64_t factor = scale;
      std::vector<Expr> rest;
      for (const auto& o : e.operands()) {
        if (o.is_const())
          factor = wrap_mul(factor, o.value());
        else
          rest.push_back(o);
      }
      if (rest.empty()) {
        out.constant = wrap_add(out.constant, factor);
      } else if (rest.size() == 1) {
        accumulate(out, rest[0], factor);
      } else {
        std::sort(rest.begin(), rest.end(),
                  [](const Expr& a, const Expr& b) { return a.to_string() < b.to_string(); });
        out.add(make_expr(ExprKind::Mul, rest), factor);
      }
      return;
    }
    default:
      out.add(e, scale);
      return;
  }
}

Linear linear_of(const Expr& e) {
  Linear out;
  accumulate(out, e, 1);
  return out;
}

// k*c*floordiv(a, c) + k*mod(a, c) is k*a (floor division's identity): the pairs a flat
// position leaves when it is split into coordinates and joined again.
void fold_division_pairs(Linear& form) {
  for (bool folded = true; folded;) {
    folded = false;
    for (const auto& [key, entry] : form.terms) {
      const Expr& rem = entry.first;
      if (rem.kind() != ExprKind::Mod || !rem.operands()[1].is_const()) continue;
      const int64_t c = rem.operands()[1].value(), k = entry.second;
      if (c <= 0) continue;
      const Expr quotient = make_expr(ExprKind::FloorDiv, rem.operands());
      auto q = form.terms.find(quotient.to_string());
      if (q == form.terms.end() || q->second.second != wrap_mul(k, c)) continue;
      const Expr a = rem.operands()[0];
      const std::string rem_key = key;  // erased below with its entry
      form.terms.erase(q);
      form.terms.erase(rem_key);
      accumulate(form, a, k);
      folded = true;
      break;
    }
  }
}

Expr term(const Expr& atom, int64_t coeff) {
  if (coeff == 1) return atom;
  return make_expr(ExprKind::Mul, {atom, Expr::constant(coeff)});
}

Expr rebuild(const Linear& form) {
  std::vector<Expr> parts;
  for (const auto& [key, entry] : form.terms) parts.push_back(term(entry.first, entry.second));
  if (form.constant != 0 || parts.empty()) parts.push_back(Expr::constant(form.constant));
  if (parts.size() == 1) return parts[0];
  return make_expr(ExprKind::Add, parts);
}

// Expressions a mask bounds (KnownBound), each with its linear form, for interval_of.
struct Known {
  std::string text;
  Linear form;
  Interval range;
};
using KnownList = std::vector<Known>;

// `factor`: whether sums are also bounded through factored() (not inside factored()'s own
// atoms, which keeps the work quadratic in the expression's depth, not exponential).
Interval interval_of(const Expr& e, const VarRanges& ranges, const KnownList* known = nullptr,
                     bool factor = true);

Interval mul_interval(Interval a, Interval b) {
  const Wide c[] = {static_cast<Wide>(a.low) * b.low, static_cast<Wide>(a.low) * b.high,
                    static_cast<Wide>(a.high) * b.low, static_cast<Wide>(a.high) * b.high};
  return wide_interval(*std::min_element(std::begin(c), std::end(c)),
                       *std::max_element(std::begin(c), std::end(c)));
}

Interval add_interval(Interval a, Interval b) {
  return wide_interval(static_cast<Wide>(a.low) + b.low, static_cast<Wide>(a.high) + b.high);
}

// The overlap of two sound bounds of one value; where they do not meet (the value is never
// taken: a mask that is never on) the first, wider one stays.
Interval overlap(Interval wide, Interval other) {
  const Interval both{std::max(wide.low, other.low), std::min(wide.high, other.high)};
  return both.low <= both.high ? both : wide;
}

// A sum holding a known expression G scaled, c*G's terms plus the rest, is bounded through
// G's range: c*(G - g0) + rest, where g0 is G's constant. (An index a mask guards, such as a
// row computed from a flat position, reappears multiplied by the row stride in a load.)
// The int64 range when no known expression is found in it.
Interval factored(const Expr& e, const VarRanges& ranges, const KnownList& known) {
  Linear rest = linear_of(e);
  Interval acc{rest.constant, rest.constant};
  bool found = false;
  for (const Known& k : known) {
    if (k.form.terms.empty()) continue;
    const auto& [first_key, first] = *k.form.terms.begin();
    const auto hit = rest.terms.find(first_key);
    if (hit == rest.terms.end() || (first.second == -1 && hit->second.second == kMin) ||
        hit->second.second % first.second != 0)
      continue;
    const int64_t c = hit->second.second / first.second;
    bool all = true;
    for (const auto& [key, entry] : k.form.terms) {
      const auto t = rest.terms.find(key);
      all = all && t != rest.terms.end() && t->second.second == wrap_mul(c, entry.second);
    }
    if (!all) continue;
    for (const auto& [key, entry] : k.form.terms) rest.terms.erase(key);
    const Interval shifted = wide_interval(static_cast<Wide>(k.range.low) - k.form.constant,
                                           static_cast<Wide>(k.range.high) - k.form.constant);
    acc = add_interval(acc, mul_interval(shifted, {c, c}));
    found = true;
  }
  if (!found) return {kMin, kMax};
  for (const auto& [key, entry] : rest.terms)
    acc = add_interval(acc, mul_interval(interval_of(entry.first, ranges, &known, false),
                                         {entry.second, entry.second}));
  return acc;
}

// `i` narrowed by what `known` says of `e`: its own range where a mask guards `e` itself,
// and through factored() where `e` is a sum holding a guarded expression.
Interval narrowed(const Expr& e, Interval i, const VarRanges& ranges, const KnownList* known,
                  bool factor) {
  if (known == nullptr || known->empty()) return i;
  const std::string text = e.to_string();
  for (const Known& k : *known)
    if (k.text == text) i = overlap(i, k.range);
  if (factor && e.kind() == ExprKind::Add) i = overlap(i, factored(e, ranges, *known));
  return i;
}

Interval interval_of(const Expr& e, const VarRanges& ranges, const KnownList* known, bool factor) {
  switch (e.kind()) {
    case ExprKind::Const:
      return {e.value(), e.value()};
    case ExprKind::Var: {
      auto it = ranges.find(e.name());
      return it == ranges.end() ? Interval{kMin, kMax} : it->second;
    }
    default:
      break;
  }
  Interval acc = interval_of(e.operands()[0], ranges, known, factor);
  for (size_t i = 1; i < e.operands().size(); ++i) {
    const Interval v = interval_of(e.operands()[i], ranges, known, factor);
    switch (e.kind()) {
      case ExprKind::Add:
        acc = add_interval(acc, v);
        break;
      case ExprKind::Mul:
        acc = mul_interval(acc, v);
        break;
      case ExprKind::FloorDiv:
        if (v.low == v.high && v.low > 0) {
          acc = {floor_div(acc.low, v.low), floor_div(acc.high, v.low)};
        } else {
          acc = {kMin, kMax};
        }
        break;
      case ExprKind::Mod:
        if (v.low == v.high && v.low > 0) {
          // Within one period the value is exact; otherwise anything in [0, d).
          const bool same_period = acc.low != kMin && acc.high != kMax &&
                                   floor_div(acc.low, v.low) == floor_div(acc.high, v.low);
          acc = same_period ? Interval{floor_mod(acc.low, v.low), floor_mod(acc.high, v.low)}
                            : Interval{0, v.low - 1};
        } else {
          acc = {kMin, kMax};
        }
        break;
      case ExprKind::Min:
        acc = {std::min(acc.low, v.low), std::min(acc.high, v.high)};
        break;
      case ExprKind::Max:
        acc = {std::max(acc.low, v.low), std::max(acc.high, v.high)};
        break;
      default:
        break;
    }
  }
  return narrowed(e, acc, ranges, known, factor);
}

Expr simplify_node(const Expr& e, const VarRanges& ranges);

// (d*A + R) floordiv d = A + R floordiv d; R floordiv d = 0 when R lies in [0, d).
Expr simplify_floordiv(const Expr& a, int64_t d, const VarRanges& ranges);

// `form` as d*scaled + rest: scaled takes the terms whose coefficient d divides (divided by
// it) and the constant's floor quotient, rest the other terms and the constant's remainder.
std::pair<Linear, Linear> split_by(const Linear& form, int64_t d) {
  Linear scaled, rest;
  scaled.constant = floor_div(form.constant, d);
  rest.constant = floor_mod(form.constant, d);
  for (const auto& [key, entry] : form.terms) {
    if (entry.second % d == 0)
      scaled.add(entry.first, entry.second / d);
    else
      rest.add(entry.first, entry.second);
  }
  return {scaled, rest};
}

// (c*A + S) floordiv (c*m) = A floordiv m when S lies in [0, c): a flat position over a
// reshape (row*width + column, column < width) divided by a multiple of the width. Tries
// each factor c that a term's coefficient shares with d, largest first; nothing when none
// leaves a small enough rest.
std::optional<Expr> floordiv_by_common_factor(const Linear& form, int64_t d,
                                              const VarRanges& ranges) {
  std::vector<int64_t> factors;
  for (const auto& [key, entry] : form.terms) {
    if (entry.second == kMin) continue;
    const int64_t c = std::gcd(entry.second < 0 ? -entry.second : entry.second, d);
    if (c > 1 && c < d) factors.push_back(c);
  }
  std::sort(factors.rbegin(), factors.rend());
  for (const int64_t c : factors) {
    const auto [scaled, small] = split_by(form, c);
    const Interval si = interval_of(rebuild(small), ranges);
    if (si.low >= 0 && si.high < c) return simplify_floordiv(rebuild(scaled), d / c, ranges);
  }
  return std::nullopt;
}

Expr simplify_floordiv(const Expr& a, int64_t d, const VarRanges& ranges) {
  if (d == 1) return a;
  if (a.kind() == ExprKind::FloorDiv && a.operands()[1].is_const() && a.operands()[1].value() > 0) {
    int64_t both = 0;  // (x floordiv a) floordiv d = x floordiv (a*d), unless a*d overflows
    if (!__builtin_mul_overflow(a.operands()[1].value(), d, &both))
      return simplify_floordiv(a.operands()[0], both, ranges);
  }
  auto [quotient, rest] = split_by(linear_of(a), d);
  const Expr r = rebuild(rest);
  const Interval ri = interval_of(r, ranges);
  if (!(ri.low >= 0 && ri.high < d)) {
    if (ri.low != kMin && ri.high != kMax && floor_div(ri.low, d) == floor_div(ri.high, d)) {
      quotient.constant += floor_div(ri.low, d);  // the remainder part always divides to one value
    } else if (auto reduced = floordiv_by_common_factor(rest, d, ranges)) {
      accumulate(quotient, *reduced, 1);
    } else {
      quotient.add(make_expr(ExprKind::FloorDiv, {r, Expr::constant(d)}), 1);
    }
  }
  return rebuild(quotient);
}

// (d*A + R) mod d = R mod d; R mod d = R when R lies in [0, d). Coefficients are reduced
// keeping their sign first (a reversed dim, 32 - x, stays 32 - x and needs no mod); only
// when that remainder spans several periods are they made positive.
Expr simplify_mod(const Expr& a, int64_t d, const VarRanges& ranges) {
  if (d == 1) return Expr::constant(0);
  const Linear form = linear_of(a);
  Linear signed_rest;
  signed_rest.constant = floor_mod(form.constant, d);
  for (const auto& [key, entry] : form.terms) {
    const int64_t c = entry.second % d;
    if (c != 0) signed_rest.add(entry.first, c);
  }
  const Interval si = interval_of(rebuild(signed_rest), ranges);
  if (si.low != kMin && si.high != kMax && floor_div(si.low, d) == floor_div(si.high, d)) {
    signed_rest.constant -= floor_div(si.low, d) * d;
    return rebuild(signed_rest);
  }
  Linear rest;
  rest.constant = floor_mod(form.constant, d);
  for (const auto& [key, entry] : form.terms) {
    const int64_t c = floor_mod(entry.second, d);
    if (c != 0) rest.add(entry.first, c);
  }
  const Expr r = rebuild(rest);
  const Interval ri = interval_of(r, ranges);
  if (ri.low >= 0 && ri.high < d) return r;
  if (ri.low != kMin && ri.high != kMax && floor_div(ri.low, d) == floor_div(ri.high, d)) {
    return rebuild([&] {
      Linear shifted = rest;
      shifted.constant -= floor_div(ri.low, d) * d;
      return shifted;
    }());
  }
  return make_expr(ExprKind::Mod, {r, Expr::constant(d)});
}

Expr simplify_node(const Expr& e, const VarRanges& ranges) {
  if (e.is_const() || e.kind() == ExprKind::Var) return e;
  std::vector<Expr> ops;
  for (const auto& o : e.operands()) ops.push_back(simplify_node(o, ranges));
  const bool all_const =
      std::all_of(ops.begin(), ops.end(), [](const Expr& o) { return o.is_const(); });
  switch (e.kind()) {
    case ExprKind::Add:
    case ExprKind::Mul: {
      Linear form = linear_of(make_expr(e.kind(), ops));
      fold_division_pairs(form);
      return rebuild(form);
    }
    case ExprKind::FloorDiv:
    case ExprKind::Mod: {
      const Expr& a = ops[0];
      const Expr& b = ops[1];
      if (b.is_const(0)) return make_expr(e.kind(), ops);  // left as written: never evaluated
      if (all_const) {
        return Expr::constant(e.kind() == ExprKind::FloorDiv ? floor_div(a.value(), b.value())
                                                             : floor_mod(a.value(), b.value()));
      }
      if (b.is_const() && b.value() > 0) {
        return e.kind() == ExprKind::FloorDiv ? simplify_floordiv(a, b.value(), ranges)
                                              : simplify_mod(a, b.value(), ranges);
      }
      return make_expr(e.kind(), ops);
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      const Interval x = interval_of(ops[0], ranges), y = interval_of(ops[1], ranges);
      const bool is_min = e.kind() == ExprKind::Min;
      if (x.high <= y.low) return is_min ? ops[0] : ops[1];
      if (y.high <= x.low) return is_min ? ops[1] : ops[0];
      if (ops[0] == ops[1]) return ops[0];
      // Canonical operand order.
      if (ops[1].to_string() < ops[0].to_string()) std::swap(ops[0], ops[1]);
      return make_expr(e.kind(), ops);
    }
    default:
      return e;
  }
}

}  // namespace

Interval bounds(const Expr& e, const VarRanges& ranges) {
  return interval_of(e, ranges);
}

Interval bounds(const Expr& e, const VarRanges& ranges, const std::vector<KnownBound>& known) {
  KnownList list;
  for (const KnownBound& k : known)
    list.push_back({k.expr.to_string(), linear_of(k.expr), k.range});
  return interval_of(e, ranges, &list);
}

Expr simplify(const Expr& e, const VarRanges& ranges) {
  // A second pass catches what the first exposed (a floordiv that became a sum term).
  Expr once = simplify_node(e, ranges);
  Expr twice = simplify_node(once, ranges);
  return twice;
}

}  // namespace kiln
