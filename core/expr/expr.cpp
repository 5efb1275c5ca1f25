#include "core/expr/expr.h"

#include <stdexcept>

namespace kiln {

struct ExprNode {
  ExprKind kind;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> operands;
};

Expr Expr::constant(int64_t value) {
  return Expr(std::make_shared<const ExprNode>(ExprNode{ExprKind::Const, value, {}, {}}));
}

Expr Expr::var(std::string name) {
  return Expr(std::make_shared<const ExprNode>(ExprNode{ExprKind::Var, 0, std::move(name), {}}));
}

Expr make_expr(ExprKind kind, std::vector<Expr> operands) {
  return Expr(std::make_shared<const ExprNode>(ExprNode{kind, 0, {}, std::move(operands)}));
}

ExprKind Expr::kind() const {
  return node_->kind;
}
int64_t Expr::value() const {
  return node_->value;
}
const std::string& Expr::name() const {
  return node_->name;
}
const std::vector<Expr>& Expr::operands() const {
  return node_->operands;
}

namespace {

// Binding strength, for parentheses: sums bind loosest, atoms tightest.
int precedence(ExprKind kind) {
  switch (kind) {
    case ExprKind::Add:
      return 1;
    case ExprKind::Mul:
      return 2;
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
      return 3;
    default:
      return 4;
  }
}

std::string operand_text(const Expr& operand, int parent) {
  const bool negative_const = operand.is_const() && operand.value() < 0;
  std::string text = operand.to_string();
  return precedence(operand.kind()) <= parent || (negative_const && parent > 1) ? "(" + text + ")"
                                                                                : text;
}

}  // namespace

std::string Expr::to_string() const {
  switch (kind()) {
    case ExprKind::Const:
      return std::to_string(value());
    case ExprKind::Var:
      return name();
    case ExprKind::Min:
    case ExprKind::Max:
      return std::string(kind() == ExprKind::Min ? "min(" : "max(") + operands()[0].to_string() +
             ", " + operands()[1].to_string() + ")";
    default:
      break;
  }
  const int p = precedence(kind());
  std::string text;
  for (size_t i = 0; i < operands().size(); ++i) {
    if (i > 0) {
      switch (kind()) {
        case ExprKind::Add:
          text += " + ";
          break;
        case ExprKind::Mul:
          text += "*";
          break;
        case ExprKind::FloorDiv:
          text += " floordiv ";
          break;
        default:
          text += " mod ";
          break;
      }
    }
    // Sums read left to right without parentheses; everything else parenthesizes its kind.
    text += kind() == ExprKind::Add && operands()[i].kind() != ExprKind::Add
                ? operands()[i].to_string()
                : operand_text(operands()[i], p);
  }
  return text;
}

bool Expr::operator==(const Expr& other) const {
  if (node_ == other.node_) return true;
  if (kind() != other.kind() || value() != other.value() || name() != other.name() ||
      operands().size() != other.operands().size()) {
    return false;
  }
  for (size_t i = 0; i < operands().size(); ++i) {
    if (!(operands()[i] == other.operands()[i])) return false;
  }
  return true;
}

Expr operator+(const Expr& a, const Expr& b) {
  return make_expr(ExprKind::Add, {a, b});
}
Expr operator*(const Expr& a, const Expr& b) {
  return make_expr(ExprKind::Mul, {a, b});
}
Expr floordiv(const Expr& a, const Expr& b) {
  return make_expr(ExprKind::FloorDiv, {a, b});
}
Expr mod(const Expr& a, const Expr& b) {
  return make_expr(ExprKind::Mod, {a, b});
}
Expr min(const Expr& a, const Expr& b) {
  return make_expr(ExprKind::Min, {a, b});
}
Expr max(const Expr& a, const Expr& b) {
  return make_expr(ExprKind::Max, {a, b});
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}

int64_t evaluate(const Expr& e, const std::map<std::string, int64_t>& values) {
  switch (e.kind()) {
    case ExprKind::Const:
      return e.value();
    case ExprKind::Var: {
      auto it = values.find(e.name());
      if (it == values.end()) throw std::invalid_argument("unbound variable " + e.name());
      return it->second;
    }
    default:
      break;
  }
  int64_t acc = evaluate(e.operands()[0], values);
  for (size_t i = 1; i < e.operands().size(); ++i) {
    const int64_t v = evaluate(e.operands()[i], values);
    switch (e.kind()) {
      case ExprKind::Add:
        acc += v;
        break;
      case ExprKind::Mul:
        acc *= v;
        break;
      case ExprKind::FloorDiv:
        if (v == 0) throw std::invalid_argument("floordiv by zero");
        acc = floor_div(acc, v);
        break;
      case ExprKind::Mod:
        if (v == 0) throw std::invalid_argument("mod by zero");
        acc = floor_mod(acc, v);
        break;
      case ExprKind::Min:
        acc = std::min(acc, v);
        break;
      case ExprKind::Max:
        acc = std::max(acc, v);
        break;
      default:
        break;
    }
  }
  return acc;
}

}  // namespace kiln

namespace kiln {

bool mentions(const Expr& e, const std::set<std::string>& vars) {
  if (e.kind() == ExprKind::Var) return vars.contains(e.name());
  for (const Expr& o : e.operands())
    if (mentions(o, vars)) return true;
  return false;
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& bindings) {
  if (e.kind() == ExprKind::Var) {
    auto it = bindings.find(e.name());
    return it == bindings.end() ? e : it->second;
  }
  if (e.is_const()) return e;
  std::vector<Expr> operands;
  operands.reserve(e.operands().size());
  for (const Expr& o : e.operands()) operands.push_back(substitute(o, bindings));
  return make_expr(e.kind(), std::move(operands));
}

}  // namespace kiln
