// KIR's math ops on interpreter values, with the reference's rules: NaN-propagating max and
// min, Python's floor division and remainder, wrapping integer arithmetic. Names are looked up
// once, when a kernel is prepared; an integer op that cannot proceed (division by zero, a
// negative power) reports a kernel error instead of a value.
#pragma once

#include <string>

#include "value.h"

namespace kiln::interp {

enum class MathFn {
  // unary
  Neg,
  Abs,
  Sign,
  Relu,
  Sigmoid,
  Reciprocal,
  Rsqrt,
  Sqrt,
  Exp,
  Expm1,
  Log,
  Log1p,
  Log2,
  Log10,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Ceil,
  Floor,
  Round,
  Trunc,
  IsNan,
  IsInf,
  Not,
  BitwiseNot,
  // binary
  Add,
  Sub,
  Mul,
  Div,
  TrueDiv,
  FloorDiv,
  TruncDiv,
  Mod,
  Fmod,
  Max,
  Min,
  NanMax,
  NanMin,
  Pow,
  Atan2,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  Xor,
  LogicalAnd,
  LogicalOr,
  LogicalXor
};

// A kernel error: what the cpp_openmp and GPU plugins call an error word.
struct KernelFault {
  enum Code { None, IndexOutOfRange, DivisionByZero, NegativePower };
  Code code = None;
  int64_t value = 0;
  int64_t bound = 0;
  void raise(Code c, int64_t v, int64_t b) {
    if (code == None) *this = {c, v, b};
  }
};

// The function of a math op's name; throws std::invalid_argument for an unknown name, or one
// that needs floating operands given integers (`operand`).
MathFn math_fn(const std::string& name, kir::DType operand);
bool is_unary(MathFn fn);

// `fn` on operands of dtype `operand`, its result as dtype `result`.
Value apply_unary(MathFn fn, Value a, kir::DType operand, kir::DType result, KernelFault& fault);
Value apply_binary(MathFn fn, Value a, Value b, kir::DType operand, kir::DType result,
                   KernelFault& fault);

// NaN-propagating max and min on doubles, as reductions and scatters combine too.
double max_propagating(double a, double b);
double min_propagating(double a, double b);

}  // namespace kiln::interp
