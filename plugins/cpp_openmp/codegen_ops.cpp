#include "plugins/cpp_openmp/codegen_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "plugins/kir_support/kir_expr.h"

namespace kiln::cpu {

using kir_support::collect_vars;
using kir_support::integer_literal;

namespace {

using kir::DType;

bool is_float_math(DType d) {
  return d == DType::F32 || d == DType::F64;
}

DType dtype_of(const kir::Kernel& k, int id) {
  const kir::Op* op = k.op(id);
  if (!op) throw std::runtime_error("unknown value %" + std::to_string(id));
  return op->dtype;
}

std::string unary_math(const std::string& name, const std::string& a, DType d) {
  const std::string t = c_type(d);
  const bool fp = is_float_math(d);
  static const std::set<std::string> float_fns = {
      "sin",   "cos",   "tan", "asin",  "acos", "atan",  "sinh", "cosh",  "tanh", "asinh",
      "acosh", "atanh", "exp", "expm1", "log",  "log1p", "log2", "log10", "sqrt", "erf"};
  if (float_fns.contains(name)) {
    if (!fp) throw std::runtime_error(name + " needs a floating dtype");
    return "krt::f_" + name + "<L>(" + a + ")";
  }
  if (name == "ceil" || name == "floor" || name == "round" || name == "trunc")
    return fp ? "krt::f_" + name + "<L>(" + a + ")" : a;
  // Whole-vector compares and selects, never a lane map with a conditional: g++ 13 compiles
  // such a map to a branch per lane (relu over random data ran 10x slower on a Xeon).
  if (name == "isnan") return "krt::to_bool<L>(" + a + " != " + a + ")";
  if (name == "isinf")
    return "krt::to_bool<L>((" + a + " == " + a + ") & (" + a + " - " + a + " != " + a + " - " + a +
           "))";
  // Integer results are cast back to the operand's type: a scalar int8/uint8/int16 operand
  // promotes to int in C++, and a compare of the unwrapped sum would differ from PyTorch's.
  if (name == "neg") return fp ? "(-" + a + ")" : "decltype(" + a + ")(-" + a + ")";
  if (name == "abs") {
    return fp ? "krt::map1<L, " + t + ">(" + a + ", krt::s_fabs<" + t + ">)"
              : "decltype(" + a + ")(" + a + " < 0 ? -" + a + " : " + a + ")";
  }
  if (name == "sign")
    return "krt::map1<L, " + t + ">(" + a + ", [](" + t + " q) { return " + t + "((" + t +
           "(0) < q) - (q < " + t + "(0))); })";
  if (name == "relu") return "krt::f_relu(" + a + ")";
  if (name == "sigmoid") return "(" + t + "(1) / (" + t + "(1) + krt::f_exp<L>(-" + a + ")))";
  if (name == "reciprocal") return "(" + t + "(1) / " + a + ")";
  if (name == "rsqrt") return "(" + t + "(1) / krt::f_sqrt<L>(" + a + "))";
  // A lane map, not `a ^ 1`: g++ 12 -O3 -fopenmp folds the xor of 0/1 byte lanes into a
  // bitwise complement (1 -> 0xFE).
  if (name == "not") return "krt::map1<L, bool>(" + a + ", [](auto q) { return q == 0; })";
  if (name == "bitwise_not") return "(~" + a + ")";
  throw std::runtime_error("unknown unary op '" + name + "'");
}

// An integer floordiv or (floor) mod by a constant power of two 2^s: an arithmetic shift by
// s or a mask of the low s bits, exact for every sign in two's complement; one vector
// instruction where the general case divides lane by lane (Philox's 64-bit emulation of
// 32-bit products is made of these).
std::optional<std::string> power_of_two_division(const kir::Kernel& k, const kir::Op& op,
                                                 const std::string& a) {
  if (op.args.size() != 2 || (op.name != "floordiv" && op.name != "mod")) return std::nullopt;
  const DType operand = dtype_of(k, op.args[0]);
  if (is_float_math(operand) || operand == DType::Bool) return std::nullopt;
  const kir::Op* divisor = k.op(op.args[1]);
  if (!divisor || divisor->kind != kir::OpKind::Const) return std::nullopt;
  const int64_t d = kir_support::integer_literal(divisor->literal);
  if (d <= 1 || (d & (d - 1)) != 0) return std::nullopt;
  int s = 0;
  while ((int64_t{1} << s) != d) ++s;
  if (s >= 8 * static_cast<int>(kir::dtype_size(operand))) return std::nullopt;
  const std::string t = c_type(operand);
  if (op.name == "floordiv") return "decltype(" + a + ")(" + a + " >> " + std::to_string(s) + ")";
  return "decltype(" + a + ")(" + a + " & " + t + "(" + std::to_string(d - 1) + "))";
}

std::string lane_fn2(const std::string& t, const std::string& a, const std::string& b,
                     const std::string& body) {
  return "krt::map2<L, " + t + ">(" + a + ", " + b + ", [&](" + t + " p, " + t + " q) { return " +
         body + "; })";
}

std::string binary_math(const std::string& name, const std::string& a, const std::string& b,
                        DType operand) {
  const std::string t = c_type(operand);
  const bool fp = is_float_math(operand);
  // Integer results are cast back to the operand's type (as in unary_math's neg).
  const auto wrapped = [&](const char* op) {
    const std::string e = "(" + a + " " + op + " " + b + ")";
    return fp ? e : "decltype(" + a + ")" + e;
  };
  if (name == "add") return wrapped("+");
  if (name == "sub") return wrapped("-");
  if (name == "mul") return wrapped("*");
  if (name == "div") {
    if (!fp) throw std::runtime_error("div needs floating operands");
    return "(" + a + " / " + b + ")";
  }
  static const std::map<std::string, std::string> cmp = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                         {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
  if (auto it = cmp.find(name); it != cmp.end())
    return "krt::to_bool<L>(" + a + " " + it->second + " " + b + ")";
  if (name == "and" || name == "or" || name == "xor") {
    const char* op = name == "and" ? "&" : name == "or" ? "|" : "^";
    return "decltype(" + a + ")(" + a + " " + op + " " + b + ")";
  }
  if (name == "max") return "krt::f_max(" + a + ", " + b + ")";
  if (name == "min") return "krt::f_min(" + a + ", " + b + ")";
  if (name == "pow") {
    return fp ? "krt::f_pow<L>(" + a + ", " + b + ")"
              : lane_fn2(t, a, b, "krt::s_pow_int(p, q, st)");
  }
  if (name == "atan2") return "krt::f_atan2<L>(" + a + ", " + b + ")";
  if (name == "fmod")
    return lane_fn2(t, a, b, fp ? "krt::s_fmod(p, q)" : "krt::s_mod_int(p, q, false, st)");
  if (name == "mod")
    return lane_fn2(t, a, b, fp ? "krt::s_mod_float(p, q)" : "krt::s_mod_int(p, q, true, st)");
  if (name == "floordiv") {
    return lane_fn2(t, a, b, fp ? "krt::s_floordiv_float(p, q)" : "krt::s_div_int(p, q, true, st)");
  }
  if (name == "truncdiv") {
    return fp ? "krt::f_trunc<L>(" + a + " / " + b + ")"
              : lane_fn2(t, a, b, "krt::s_div_int(p, q, false, st)");
  }
  throw std::runtime_error("unknown binary op '" + name + "'");
}

const char* reduce_enum(const std::string& kind) {
  static const std::map<std::string, const char*> kinds = {
      {"sum", "krt::kSum"},       {"prod", "krt::kProd"},      {"max", "krt::kMax"},
      {"min", "krt::kMin"},       {"any", "krt::kAny"},        {"argmax", "krt::kArgMax"},
      {"argmin", "krt::kArgMin"}, {"welford", "krt::kWelford"}};
  auto it = kinds.find(kind);
  if (it == kinds.end()) throw std::runtime_error("unknown reduction '" + kind + "'");
  return it->second;
}

}  // namespace

const char* c_type(DType d) {
  static const char* const names[] = {"bool",    "int8_t",   "uint8_t",  "int16_t", "int32_t",
                                      "int64_t", "uint16_t", "uint16_t", "float",   "double"};
  return names[static_cast<int>(d)];
}

const char* c_kind(DType d) {
  switch (d) {
    case DType::Bool:
      return "krt::kBool";
    case DType::F16:
      return "krt::kF16";
    case DType::BF16:
      return "krt::kBF16";
    case DType::F32:
    case DType::F64:
      return "krt::kFloat";
    default:
      return "krt::kInt";
  }
}

namespace {

// A KIR literal (anything strtod reads) as C++ source text with the same double value.
std::string double_c(const std::string& text) {
  const double v = std::strtod(text.c_str(), nullptr);
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string("(") + buf + ")";
}

}  // namespace

std::string literal_c(const std::string& text, DType d) {
  const std::string value = double_c(text);
  if (d == DType::F16 || d == DType::BF16) {
    return std::string("krt::convert1<uint16_t, ") + c_kind(d) + ", double, krt::kFloat>(" + value +
           ")";
  }
  if (d == DType::Bool) return "(" + value + " != 0)";
  if (kir::is_float(d)) return std::string(c_type(d)) + "(" + value + ")";
  // An integer constant is written as its converted value: a float text like 2.5 truncates
  // toward zero, NaN gives 0 and out-of-range values saturate, as the reference converts.
  const int64_t n = integer_literal(text);
  if (n == std::numeric_limits<int64_t>::min()) return "int64_t(-9223372036854775807LL - 1)";
  return std::string(c_type(d)) + "(int64_t(" + std::to_string(n) + "LL))";
}

std::string expr_c(const kir::Expr& e, const ExprContext& ctx) {
  auto join = [&](const char* sep) {
    std::string s = "(";
    for (size_t i = 0; i < e.operands.size(); ++i) s += (i ? sep : "") + expr_c(e.operands[i], ctx);
    return s + ")";
  };
  switch (e.kind) {
    case kir::Expr::Const:
      return "int64_t(" + std::to_string(e.value) + "LL)";
    case kir::Expr::Var:
      if (e.name[0] == 't') {
        if (ctx.row_scalars && ctx.row_scalars->contains(std::stoi(e.name.substr(1))))
          return "s" + e.name.substr(1);
        const std::string val = ctx.prefix + e.name.substr(1);
        if (ctx.first_lane) return "krt::lane(" + val + ", 0)";
        return ctx.per_lane ? "krt::lane(" + val + ", i)" : val;
      }
      if (ctx.per_lane && e.name == ctx.inner) return "(" + e.name + " + i)";
      return e.name;
    case kir::Expr::Add:
      return join(" + ");
    case kir::Expr::Mul:
      return join(" * ");
    case kir::Expr::FloorDiv:
      return "krt::ifloordiv(" + expr_c(e.operands.at(0), ctx) + ", " +
             expr_c(e.operands.at(1), ctx) + ")";
    case kir::Expr::Mod:
      return "krt::imod(" + expr_c(e.operands.at(0), ctx) + ", " + expr_c(e.operands.at(1), ctx) +
             ")";
    case kir::Expr::Min:
    case kir::Expr::Max:
      return std::string(e.kind == kir::Expr::Min ? "krt::imin(" : "krt::imax(") +
             expr_c(e.operands.at(0), ctx) + ", " + expr_c(e.operands.at(1), ctx) + ")";
  }
  return "0";
}

std::optional<int64_t> coefficient(const kir::Expr& e, const std::string& var) {
  std::set<std::string> vars;
  collect_vars(e, vars);
  if (!vars.contains(var)) return 0;
  switch (e.kind) {
    case kir::Expr::Var:
      return 1;
    case kir::Expr::Add: {
      int64_t sum = 0;
      for (const auto& o : e.operands) {
        auto c = coefficient(o, var);
        if (!c) return std::nullopt;
        sum += *c;
      }
      return sum;
    }
    case kir::Expr::Mul: {
      int64_t factor = 1;
      std::optional<int64_t> inner;
      for (const auto& o : e.operands) {
        if (o.kind == kir::Expr::Const) {
          factor *= o.value;
        } else {
          if (inner) return std::nullopt;  // two non-constant factors
          inner = coefficient(o, var);
          if (!inner) return std::nullopt;
        }
      }
      return inner ? std::optional(*inner * factor) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

bool reads_transposed(const kir::Kernel& k) {
  const size_t n = k.ranges.size();
  if (k.kind != "pointwise" || n < 2 || k.ranges[n - 2] <= 1) return false;
  const std::string inner = "x" + std::to_string(n - 1);
  for (const auto& op : k.body) {
    if (op.kind != kir::OpKind::Load) continue;
    const auto c = coefficient(op.index, inner);
    if (c && *c != 0 && *c != 1 && *c != -1) return true;
  }
  return false;
}

std::vector<const kir::Op*> block_transposed_loads(const kir::Kernel& k) {
  std::vector<const kir::Op*> out;
  if (!reads_transposed(k)) return out;
  const size_t n = k.ranges.size();
  const std::string inner = "x" + std::to_string(n - 1), row = "x" + std::to_string(n - 2);
  for (const auto& op : k.body) {
    if (op.kind != kir::OpKind::Load) continue;
    const auto along = coefficient(op.index, inner);
    if (along && (*along == 0 || *along == 1 || *along == -1)) continue;
    const auto down = coefficient(op.index, row);
    const bool plain = op.dtype == kir::DType::F32 || op.dtype == kir::DType::F64 ||
                       op.dtype == kir::DType::I32 || op.dtype == kir::DType::I64;
    if (!along || !down || *down != 1 || op.mask >= 0 || mentions_indirect(op.index) || !plain)
      return {};
    out.push_back(&op);
  }
  return out;
}

bool mentions_indirect(const kir::Expr& e) {
  std::set<std::string> vars;
  collect_vars(e, vars);
  for (const auto& name : vars)
    if (name[0] == 't') return true;
  return false;
}

std::string splat_row_value(const kir::Kernel& k, int id) {
  const kir::Op* def = k.op(id);
  if (!def) throw std::runtime_error("unknown value %" + std::to_string(id));
  return "const auto v" + std::to_string(id) + " = krt::splat<L, " + c_type(def->dtype) + ">(s" +
         std::to_string(id) + ");";
}

std::set<int> invariant_along(const kir::Kernel& k, const std::string& inner) {
  std::set<int> fixed;
  for (const kir::Op& op : k.body) {
    switch (op.kind) {
      case kir::OpKind::Load:
      case kir::OpKind::Index:
      case kir::OpKind::Const:
      case kir::OpKind::Cast:
      case kir::OpKind::Where:
      case kir::OpKind::CheckIndex:
      case kir::OpKind::Math:
        break;
      default:
        continue;
    }
    bool holds = op.mask < 0 || fixed.contains(op.mask);
    for (int a : op.args) holds = holds && fixed.contains(a);
    // A buffer the kernel also writes may change under the row's loop: its loads stay there.
    if (op.kind == kir::OpKind::Load) {
      const kir::Buffer* b = k.buffer(op.name);
      holds = holds && b && b->role == kir::Role::In;
    }
    if (op.kind == kir::OpKind::Load || op.kind == kir::OpKind::Index) {
      std::set<std::string> vars;
      collect_vars(op.index, vars);
      for (const std::string& v : vars)
        holds = holds && v != inner && (v[0] != 't' || fixed.contains(std::stoi(v.substr(1))));
    }
    if (holds) fixed.insert(op.id);
  }
  return fixed;
}

namespace {

// Whether value %id is the same in every lane along `inner` (indirects_uniform).
bool uniform_at(const kir::Kernel& k, int id, const std::string& inner, int depth) {
  const kir::Op* op = k.op(id);
  if (!op || depth > 32) return false;  // deep chains: not worth proving
  const auto args_uniform = [&] {
    return std::all_of(op->args.begin(), op->args.end(),
                       [&](int a) { return uniform_at(k, a, inner, depth + 1); });
  };
  switch (op->kind) {
    case kir::OpKind::Const:
      return true;
    case kir::OpKind::Index:
    case kir::OpKind::Load: {
      if (op->kind == kir::OpKind::Load && op->mask >= 0) return false;
      const auto along = coefficient(op->index, inner);
      return along && *along == 0 && indirects_uniform(k, op->index, inner, depth + 1);
    }
    case kir::OpKind::Cast:
    case kir::OpKind::Math:
    case kir::OpKind::CheckIndex:
    case kir::OpKind::Where:
      return args_uniform();
    default:
      return false;
  }
}

// A compare of the vectorized variable's position (an `index` op with unit stride along it)
// with an integer constant, as one byte compare of the lane numbers (krt::iota_compare):
// cat, pad and mask bodies test positions so; comparing int64 lanes and narrowing them to
// bool bytes costs a dozen scalar instructions per vector.
std::optional<std::string> position_compare(const kir::Kernel& k, const kir::Op& op,
                                            const ExprContext& ctx) {
  static const std::map<std::string, std::pair<std::string, std::string>> kinds = {
      {"lt", {"krt::kCmpLt", "krt::kCmpGt"}},
      {"le", {"krt::kCmpLe", "krt::kCmpGe"}},
      {"gt", {"krt::kCmpGt", "krt::kCmpLt"}},
      {"ge", {"krt::kCmpGe", "krt::kCmpLe"}}};
  const auto kind = kinds.find(op.name);
  if (ctx.inner.empty() || ctx.per_lane || kind == kinds.end() || op.args.size() != 2)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const kir::Op* position = k.op(op.args[static_cast<size_t>(side)]);
    const kir::Op* bound = k.op(op.args[static_cast<size_t>(1 - side)]);
    if (!position || !bound || position->kind != kir::OpKind::Index ||
        position->dtype != DType::I64 || bound->kind != kir::OpKind::Const ||
        bound->dtype != DType::I64 || coefficient(position->index, ctx.inner) != 1 ||
        mentions_indirect(position->index))
      continue;
    // position CMP bound, or bound CMP position read as position CMP' bound.
    const std::string& cmp = side == 0 ? kind->second.first : kind->second.second;
    return "krt::iota_compare<L, " + cmp + ">(int64_t(" + expr_c(position->index, ctx) + "), " +
           literal_c(bound->literal, DType::I64) + ")";
  }
  return std::nullopt;
}

}  // namespace

bool indirects_uniform(const kir::Kernel& k, const kir::Expr& e, const std::string& inner,
                       int depth) {
  std::set<std::string> vars;
  collect_vars(e, vars);
  for (const auto& name : vars)
    if (name[0] == 't' && !uniform_at(k, std::stoi(name.substr(1)), inner, depth)) return false;
  return true;
}

std::string op_c(const kir::Kernel& k, const kir::Op& op, const ExprContext& ctx) {
  const auto v = [&](int id) { return ctx.prefix + std::to_string(id); };
  const std::string t = c_type(op.dtype);
  const std::string decl = "const auto " + v(op.id) + " = ";
  ExprContext lane_ctx = ctx;
  lane_ctx.per_lane = true;
  switch (op.kind) {
    case kir::OpKind::Load: {
      const kir::Buffer* buf = k.buffer(op.name);
      if (!buf || buf->dtype != op.dtype)
        throw std::runtime_error("load of " + op.name + " with a dtype its buffer does not have");
      const auto stride =
          ctx.inner.empty() ? std::optional<int64_t>(0) : coefficient(op.index, ctx.inner);
      if (op.mask >= 0 && stride && !mentions_indirect(op.index) && op.dtype != DType::Bool) {
        return decl + "krt::load_masked<L, " + t + ">(" + op.name + ", " + expr_c(op.index, ctx) +
               ", " + std::to_string(*stride) + ", " + v(op.mask) + ", " +
               literal_c(op.other, op.dtype) + ");";
      }
      if (op.mask >= 0) {
        return decl + "krt::gather_masked<L, " + t + ">(" + op.name + ", " + v(op.mask) + ", " +
               literal_c(op.other, op.dtype) + ", [&](int i) { (void)i; return " +
               expr_c(op.index, lane_ctx) + "; });";
      }
      if (stride && !mentions_indirect(op.index)) {
        return decl + "krt::load<L, " + t + ">(" + op.name + ", " + expr_c(op.index, ctx) + ", " +
               std::to_string(*stride) + ");";
      }
      // Rows picked by a value every lane holds (an embedding's row number): the lanes read
      // along the row as a direct load does, from the row the first lane names.
      if (stride && !ctx.inner.empty() && !ctx.per_lane &&
          indirects_uniform(k, op.index, ctx.inner, 0)) {
        ExprContext first = ctx;
        first.first_lane = true;
        return decl + "krt::load<L, " + t + ">(" + op.name + ", " + expr_c(op.index, first) + ", " +
               std::to_string(*stride) + ");";
      }
      return decl + "krt::gather<L, " + t + ">(" + op.name + ", [&](int i) { (void)i; return " +
             expr_c(op.index, lane_ctx) + "; });";
    }
    case kir::OpKind::Store: {
      const kir::Buffer* buf = k.buffer(op.name);
      const std::string bt = c_type(buf->dtype);
      if (dtype_of(k, op.args.at(0)) != buf->dtype)
        throw std::runtime_error("store into " + op.name + " of a value of another dtype");
      if (op.mask >= 0) {
        return "krt::scatter_masked<L, " + bt + ">(" + op.name + ", " + v(op.mask) + ", " +
               v(op.args[0]) + ", [&](int i) { (void)i; return " + expr_c(op.index, lane_ctx) +
               "; });";
      }
      const auto stride =
          ctx.inner.empty() ? std::optional<int64_t>(0) : coefficient(op.index, ctx.inner);
      if (stride && *stride != 0 && !mentions_indirect(op.index)) {
        return "krt::store<L, " + bt + ">(" + op.name + ", " + expr_c(op.index, ctx) + ", " +
               std::to_string(*stride) + ", " + v(op.args[0]) + ");";
      }
      return "krt::scatter<L, " + bt + ">(" + op.name + ", " + v(op.args[0]) +
             ", [&](int i) { (void)i; return " + expr_c(op.index, lane_ctx) + "; });";
    }
    case kir::OpKind::Scatter: {
      const kir::Buffer* buf = k.buffer(op.name);
      if (dtype_of(k, op.args.at(0)) != buf->dtype)
        throw std::runtime_error("scatter into " + op.name + " of a value of another dtype");
      static const std::map<std::string, std::string> combines = {{"store", "krt::kStore"},
                                                                  {"sum", "krt::kCombineSum"},
                                                                  {"prod", "krt::kCombineProd"},
                                                                  {"max", "krt::kCombineMax"},
                                                                  {"min", "krt::kCombineMin"}};
      const auto combine = combines.find(op.combine);
      if (combine == combines.end())
        throw std::runtime_error("unknown scatter combine '" + op.combine + "'");
      const std::string how = combine->second + ", " + c_kind(buf->dtype);
      const std::string at = "[&](int i) { (void)i; return " + expr_c(op.index, lane_ctx) + "; }";
      if (op.mask >= 0) {
        return "krt::scatter_combine_masked<L, " + how + ">(" + op.name + ", " + v(op.mask) + ", " +
               v(op.args[0]) + ", " + at + ");";
      }
      return "krt::scatter_combine<L, " + how + ">(" + op.name + ", " + v(op.args[0]) + ", " + at +
             ");";
    }
    case kir::OpKind::Const:
      return decl + "krt::splat<L, " + t + ">(" + literal_c(op.literal, op.dtype) + ");";
    case kir::OpKind::Index:
      return decl + "krt::make<L, int64_t>([&](int i) { (void)i; return int64_t(" +
             expr_c(op.index, lane_ctx) + "); });";
    case kir::OpKind::Cast: {
      const DType from = dtype_of(k, op.args.at(0));
      return decl + "krt::convert<L, " + t + ", " + c_kind(op.dtype) + ", " + c_type(from) + ", " +
             c_kind(from) + ">(" + v(op.args[0]) + ");";
    }
    case kir::OpKind::Where:
      return decl + "krt::select<L, " + t + ">(" + v(op.args.at(0)) + ", " + v(op.args.at(1)) +
             ", " + v(op.args.at(2)) + ");";
    case kir::OpKind::CheckIndex:
      return decl + "krt::map1<L, int64_t>(" + v(op.args.at(0)) +
             ", [&](int64_t q) { return krt::s_check_index(q, " + std::to_string(op.number) +
             "LL, st); });";
    case kir::OpKind::Math: {
      const DType operand = dtype_of(k, op.args.at(0));
      if (op.args.size() == 1) return decl + unary_math(op.name, v(op.args[0]), operand) + ";";
      if (const auto compare = position_compare(k, op, ctx)) return decl + *compare + ";";
      if (const auto shift = power_of_two_division(k, op, v(op.args[0])))
        return decl + *shift + ";";
      if (op.args.size() == 2)
        return decl + binary_math(op.name, v(op.args[0]), v(op.args[1]), operand) + ";";
      throw std::runtime_error("math op '" + op.name + "' with " + std::to_string(op.args.size()) +
                               " operands");
    }
    case kir::OpKind::Reduce:  // group_member_0 becomes member j's in grouped loops (loop_text)
      return std::string("krt::accumulate<L>(a") + std::to_string(op.id) + ", " + v(op.args.at(0)) +
             ", rlin, krt::group_member_0);";
    case kir::OpKind::Scan:  // a walk in order: the accumulator so far is the value
      return decl + "krt::scan<L>(a" + std::to_string(op.id) + ", " + v(op.args.at(0)) + ");";
    case kir::OpKind::Extract:
      break;
  }
  throw std::runtime_error("op kind not handled by op_c");
}

std::string accumulator_type(const kir::Kernel& k, const kir::Op& op, bool vectorized) {
  // argmax/argmin compare values of the operand's dtype and produce an int64 position.
  const DType compared = dtype_of(k, op.args.at(0));
  const std::string t = op.name == "any" ? "int8_t" : c_type(compared);
  return std::string(vectorized ? "krt::AccPair<" : "krt::Acc<") + reduce_enum(op.name) + ", " + t +
         ">";
}

}  // namespace kiln::cpu
