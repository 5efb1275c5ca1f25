#include "math_ops.h"

#include <cmath>
#include <stdexcept>

namespace kiln::interp {

using kir::DType;

namespace {

struct NamedFn {
  const char* name;
  MathFn fn;
  bool needs_float;
};

constexpr NamedFn kFunctions[] = {{"neg", MathFn::Neg, false},
                                  {"abs", MathFn::Abs, false},
                                  {"sign", MathFn::Sign, false},
                                  {"relu", MathFn::Relu, false},
                                  {"sigmoid", MathFn::Sigmoid, true},
                                  {"reciprocal", MathFn::Reciprocal, true},
                                  {"rsqrt", MathFn::Rsqrt, true},
                                  {"sqrt", MathFn::Sqrt, true},
                                  {"exp", MathFn::Exp, true},
                                  {"expm1", MathFn::Expm1, true},
                                  {"log", MathFn::Log, true},
                                  {"log1p", MathFn::Log1p, true},
                                  {"log2", MathFn::Log2, true},
                                  {"log10", MathFn::Log10, true},
                                  {"sin", MathFn::Sin, true},
                                  {"cos", MathFn::Cos, true},
                                  {"tan", MathFn::Tan, true},
                                  {"asin", MathFn::Asin, true},
                                  {"acos", MathFn::Acos, true},
                                  {"atan", MathFn::Atan, true},
                                  {"sinh", MathFn::Sinh, true},
                                  {"cosh", MathFn::Cosh, true},
                                  {"tanh", MathFn::Tanh, true},
                                  {"asinh", MathFn::Asinh, true},
                                  {"acosh", MathFn::Acosh, true},
                                  {"atanh", MathFn::Atanh, true},
                                  {"erf", MathFn::Erf, true},
                                  {"ceil", MathFn::Ceil, false},
                                  {"floor", MathFn::Floor, false},
                                  {"round", MathFn::Round, false},
                                  {"trunc", MathFn::Trunc, false},
                                  {"isnan", MathFn::IsNan, false},
                                  {"isinf", MathFn::IsInf, false},
                                  {"not", MathFn::Not, false},
                                  {"bitwise_not", MathFn::BitwiseNot, false},
                                  {"add", MathFn::Add, false},
                                  {"sub", MathFn::Sub, false},
                                  {"mul", MathFn::Mul, false},
                                  {"div", MathFn::Div, true},
                                  {"truediv", MathFn::TrueDiv, false},
                                  {"floordiv", MathFn::FloorDiv, false},
                                  {"truncdiv", MathFn::TruncDiv, false},
                                  {"mod", MathFn::Mod, false},
                                  {"fmod", MathFn::Fmod, false},
                                  {"max", MathFn::Max, false},
                                  {"min", MathFn::Min, false},
                                  {"nanmax", MathFn::NanMax, false},
                                  {"nanmin", MathFn::NanMin, false},
                                  {"pow", MathFn::Pow, false},
                                  {"atan2", MathFn::Atan2, true},
                                  {"eq", MathFn::Eq, false},
                                  {"ne", MathFn::Ne, false},
                                  {"lt", MathFn::Lt, false},
                                  {"le", MathFn::Le, false},
                                  {"gt", MathFn::Gt, false},
                                  {"ge", MathFn::Ge, false},
                                  {"and", MathFn::And, false},
                                  {"or", MathFn::Or, false},
                                  {"xor", MathFn::Xor, false},
                                  {"logical_and", MathFn::LogicalAnd, false},
                                  {"logical_or", MathFn::LogicalOr, false},
                                  {"logical_xor", MathFn::LogicalXor, false}};

double unary_float(MathFn fn, double a) {
  switch (fn) {
    case MathFn::Neg:
      return -a;
    case MathFn::Abs:
      return std::fabs(a);
    case MathFn::Sign:
      return (0 < a) - (a < 0);  // NaN: 0, as the reference
    case MathFn::Relu:
      return a < 0 ? 0.0 : a;  // NaN and -0.0 stay, as PyTorch's
    case MathFn::Sigmoid:
      return 1 / (1 + std::exp(-a));
    case MathFn::Reciprocal:
      return 1 / a;
    case MathFn::Rsqrt:
      return 1 / std::sqrt(a);
    case MathFn::Sqrt:
      return std::sqrt(a);
    case MathFn::Exp:
      return std::exp(a);
    case MathFn::Expm1:
      return std::expm1(a);
    case MathFn::Log:
      return std::log(a);
    case MathFn::Log1p:
      return std::log1p(a);
    case MathFn::Log2:
      return std::log2(a);
    case MathFn::Log10:
      return std::log10(a);
    case MathFn::Sin:
      return std::sin(a);
    case MathFn::Cos:
      return std::cos(a);
    case MathFn::Tan:
      return std::tan(a);
    case MathFn::Asin:
      return std::asin(a);
    case MathFn::Acos:
      return std::acos(a);
    case MathFn::Atan:
      return std::atan(a);
    case MathFn::Sinh:
      return std::sinh(a);
    case MathFn::Cosh:
      return std::cosh(a);
    case MathFn::Tanh:
      return std::tanh(a);
    case MathFn::Asinh:
      return std::asinh(a);
    case MathFn::Acosh:
      return std::acosh(a);
    case MathFn::Atanh:
      return std::atanh(a);
    case MathFn::Erf:
      return std::erf(a);
    case MathFn::Ceil:
      return std::ceil(a);
    case MathFn::Floor:
      return std::floor(a);
    case MathFn::Round:
      return std::nearbyint(a);  // halves to even, as torch.round
    case MathFn::Trunc:
      return std::trunc(a);
    default:
      throw std::logic_error("not a unary float function");
  }
}

int64_t unary_integer(MathFn fn, int64_t a, DType d) {
  const auto u = static_cast<uint64_t>(a);
  switch (fn) {
    case MathFn::Neg:
      return static_cast<int64_t>(0 - u);
    case MathFn::Abs:
      return a < 0 ? static_cast<int64_t>(0 - u) : a;
    case MathFn::Sign:
      return (0 < a) - (a < 0);
    case MathFn::Relu:
      return a > 0 ? a : 0;
    case MathFn::Ceil:
    case MathFn::Floor:
    case MathFn::Round:
    case MathFn::Trunc:
      return a;
    case MathFn::BitwiseNot:
      return d == DType::Bool ? !a : static_cast<int64_t>(~u);
    default:
      throw std::logic_error("not a unary integer function");
  }
}

// PyTorch's float floor division: through fmod, so 1.0 // 0.1 == 9.
double floor_divide(double a, double b) {
  if (b == 0) return a / b;
  const double m = std::fmod(a, b);
  double q = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) q -= 1;
  if (q == 0) return std::copysign(0.0, a / b);
  double floored = std::floor(q);
  if (q - floored > 0.5) floored += 1;
  return floored;
}

// Python's remainder: the sign of the divisor.
double python_remainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

double binary_float(MathFn fn, double a, double b) {
  switch (fn) {
    case MathFn::Add:
      return a + b;
    case MathFn::Sub:
      return a - b;
    case MathFn::Mul:
      return a * b;
    case MathFn::Div:
    case MathFn::TrueDiv:
      return a / b;
    case MathFn::FloorDiv:
      return floor_divide(a, b);
    case MathFn::TruncDiv:
      return std::trunc(a / b);
    case MathFn::Mod:
      return python_remainder(a, b);
    case MathFn::Fmod:
      return std::fmod(a, b);
    case MathFn::Max:
      return max_propagating(a, b);
    case MathFn::Min:
      return min_propagating(a, b);
    case MathFn::NanMax:
      return std::fmax(a, b);
    case MathFn::NanMin:
      return std::fmin(a, b);
    case MathFn::Pow:
      return std::pow(a, b);
    case MathFn::Atan2:
      return std::atan2(a, b);
    default:
      throw std::logic_error("not a binary float function");
  }
}

int64_t binary_integer(MathFn fn, int64_t a, int64_t b, KernelFault& fault) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const bool divides =
      fn == MathFn::FloorDiv || fn == MathFn::TruncDiv || fn == MathFn::Mod || fn == MathFn::Fmod;
  if (divides && b == 0) {
    fault.raise(KernelFault::DivisionByZero, a, 0);
    return 0;
  }
  switch (fn) {
    case MathFn::Add:
      return static_cast<int64_t>(ua + ub);
    case MathFn::Sub:
      return static_cast<int64_t>(ua - ub);
    case MathFn::Mul:
      return static_cast<int64_t>(ua * ub);
    case MathFn::FloorDiv:
    case MathFn::TruncDiv: {
      if (b == -1) return static_cast<int64_t>(0 - ua);
      int64_t q = a / b;
      if (fn == MathFn::FloorDiv && a % b != 0 && ((a < 0) != (b < 0))) --q;
      return q;
    }
    case MathFn::Mod:
    case MathFn::Fmod: {
      if (b == -1) return 0;
      int64_t r = a % b;
      if (fn == MathFn::Mod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case MathFn::Max:
    case MathFn::NanMax:
      return a > b ? a : b;
    case MathFn::Min:
    case MathFn::NanMin:
      return a < b ? a : b;
    case MathFn::Pow: {
      if (b < 0) {
        fault.raise(KernelFault::NegativePower, b, 0);
        return 0;
      }
      uint64_t result = 1, base = ua;
      for (int64_t e = b; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<int64_t>(result);
    }
    case MathFn::And:
      return a & b;
    case MathFn::Or:
      return a | b;
    case MathFn::Xor:
      return a ^ b;
    default:
      throw std::logic_error("not a binary integer function");
  }
}

bool compare(MathFn fn, Value a, Value b, DType d) {
  const bool fp = kir::is_float(d);
  switch (fn) {
    case MathFn::Eq:
      return fp ? a.f == b.f : a.i == b.i;
    case MathFn::Ne:
      return fp ? a.f != b.f : a.i != b.i;
    case MathFn::Lt:
      return fp ? a.f < b.f : a.i < b.i;
    case MathFn::Le:
      return fp ? a.f <= b.f : a.i <= b.i;
    case MathFn::Gt:
      return fp ? a.f > b.f : a.i > b.i;
    case MathFn::Ge:
      return fp ? a.f >= b.f : a.i >= b.i;
    case MathFn::LogicalAnd:
      return as_bool(a, d) && as_bool(b, d);
    case MathFn::LogicalOr:
      return as_bool(a, d) || as_bool(b, d);
    default:
      return as_bool(a, d) != as_bool(b, d);  // LogicalXor
  }
}

}  // namespace

double max_propagating(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a > b ? a : b;
}

double min_propagating(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? a : b;
}

MathFn math_fn(const std::string& name, DType operand) {
  for (const NamedFn& f : kFunctions) {
    if (name != f.name) continue;
    if (f.needs_float && !kir::is_float(operand))
      throw std::invalid_argument(name + " needs floating operands, not " +
                                  kir::dtype_name(operand));
    const bool bitwise = f.fn == MathFn::And || f.fn == MathFn::Or || f.fn == MathFn::Xor ||
                         f.fn == MathFn::BitwiseNot;
    if (bitwise && kir::is_float(operand))
      throw std::invalid_argument(name + " needs integer operands, not " +
                                  kir::dtype_name(operand));
    return f.fn;
  }
  throw std::invalid_argument("unknown math op '" + name + "'");
}

bool is_unary(MathFn fn) {
  return fn <= MathFn::BitwiseNot;
}

Value apply_unary(MathFn fn, Value a, DType operand, DType result, KernelFault&) {
  if (fn == MathFn::IsNan) return from_integer(kir::is_float(operand) && std::isnan(a.f), result);
  if (fn == MathFn::IsInf) return from_integer(kir::is_float(operand) && std::isinf(a.f), result);
  if (fn == MathFn::Not) return from_integer(!as_bool(a, operand), result);
  if (kir::is_float(operand)) return from_double(unary_float(fn, a.f), result);
  return from_integer(unary_integer(fn, a.i, operand), result);
}

Value apply_binary(MathFn fn, Value a, Value b, DType operand, DType result, KernelFault& fault) {
  if (fn >= MathFn::Eq && fn <= MathFn::Ge) return from_integer(compare(fn, a, b, operand), result);
  if (fn >= MathFn::LogicalAnd) return from_integer(compare(fn, a, b, operand), result);
  if (fn == MathFn::TrueDiv && !kir::is_float(operand))
    return from_double(static_cast<double>(a.i) / static_cast<double>(b.i), result);
  // A truncated quotient truncates the quotient the operand dtype holds (1 / 0.33333334f is
  // 3 in f32, 2.9999999 in double).
  if (fn == MathFn::TruncDiv && kir::is_float(operand))
    return from_double(std::trunc(round_to(operand, {a.f / b.f, 0}).f), result);
  if (kir::is_float(operand)) return from_double(binary_float(fn, a.f, b.f), result);
  return from_integer(binary_integer(fn, a.i, b.i, fault), result);
}

}  // namespace kiln::interp
