// Index expressions: integer expression trees over loop variables and constants, with
// + * floordiv mod min max. Views, broadcasts and strides become these; the simplifier
// (simplify.h) puts them in a canonical form so equal indices print equally.
//
// floordiv rounds toward negative infinity and mod takes the divisor's sign (Python's //
// and %), so (a floordiv d) * d + (a mod d) == a for every a.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace kiln {

enum class ExprKind { Const, Var, Add, Mul, FloorDiv, Mod, Min, Max };

struct ExprNode;

class Expr {
 public:
  Expr() : Expr(constant(0)) {}
  static Expr constant(int64_t value);
  static Expr var(std::string name);

  ExprKind kind() const;
  int64_t value() const;            // Const only
  const std::string& name() const;  // Var only
  const std::vector<Expr>& operands() const;
  bool is_const() const { return kind() == ExprKind::Const; }
  bool is_const(int64_t v) const { return is_const() && value() == v; }

  // "x0*4 + x1", "(x0 + 3) floordiv 4", "min(x0, 7)": the canonical text of KIR.
  std::string to_string() const;
  // Structural equality (after simplification, equal indices compare equal).
  bool operator==(const Expr& other) const;

 private:
  friend Expr make_expr(ExprKind kind, std::vector<Expr> operands);
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const ExprNode> node_;
};

// Builds a node as given, without simplifying.
Expr make_expr(ExprKind kind, std::vector<Expr> operands);

Expr operator+(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr floordiv(const Expr& a, const Expr& b);
Expr mod(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);

// Python-style integer floor division and modulo (divisor != 0).
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// Evaluates with the given variable values; every variable must be bound and no divisor 0.
int64_t evaluate(const Expr& e, const std::map<std::string, int64_t>& values);

}  // namespace kiln

namespace kiln {

// `e` with every variable named in `bindings` replaced by its expression (not simplified).
Expr substitute(const Expr& e, const std::map<std::string, Expr>& bindings);

// Whether `e` names one of `vars`.
bool mentions(const Expr& e, const std::set<std::string>& vars);

}  // namespace kiln
