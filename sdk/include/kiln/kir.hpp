// Kernel IR for plugin authors: the structs of a `kir/1` kernel, a parser for its canonical
// text, the printer that produced it, and a visitor over body ops. Header-only, C++17, no
// dependencies beyond the standard library, so a C++ plugin needs no parser of its own.
//
// Text form (one kernel; a batch is several `kernel ... end` blocks after one header):
//
//   kir/1
//   kernel k0_sin pointwise
//     buffer in0 f32 1024 in
//     buffer out0 f32 1024 out
//     ranges 32 32
//     %0 = load f32 in0[x0*32 + x1]
//     %1 = sin f32 %0
//     store out0[x0*32 + x1] %1
//   end
//
// Loop variables are x0.. (pointwise dims, outermost first) and r0.. (reduction dims). An
// index may also name `t<N>`, the int64 value of op %N (an indirect, checked index).
// Ops: load, store, const, index, cast, where, reduce <kind>, extract <k>, check_index
// <size>, scatter <combine>, scan <kind>, and math by name with %operands. `scatter` writes into an
// inout buffer that already holds values, at an address that may repeat across iterations:
// `store` (any one writer wins), `sum`, `prod`, `max` or `min` (atomic read-modify-write;
// max/min propagate NaN); only pointwise kernels scatter. A reduce produces one value per pointwise
// point (row); ops that use it and vary along the reduced dims run per element again, so a body may
// nest reductions (softmax: a sum over exp(x - max)) and store per element; see docs/kir.md
// ("levels"). `scan` (sum, prod, max, min) is the running combination of its operand over the
// reduction dims in row-major order, up to and including this element; ops and stores that use
// it run per element in the same walk, in order. A kernel with a scan is a reduction kernel
// without reduces. Every masked load carries an explicit `other`.
#ifndef KILN_KIR_HPP
#define KILN_KIR_HPP

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::kir {

inline constexpr const char* kVersion = "kir/1";

enum class DType { Bool, I8, U8, I16, I32, I64, F16, BF16, F32, F64 };

inline const char* dtype_name(DType d) {
  static const char* const names[] = {"bool", "i8",  "u8",   "i16", "i32",
                                      "i64",  "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(d)];
}
inline bool parse_dtype(std::string_view s, DType& out) {
  for (int i = 0; i <= static_cast<int>(DType::F64); ++i) {
    if (s == dtype_name(static_cast<DType>(i))) {
      out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}
// A library call's dtype parameter (plugin-abi.md, "Externs") is a DType code, or this one:
// f32 tensors whose products may be rounded to TF32 on tensor cores (what PyTorch's
// allow_tf32 flags permit). The core sends it only to a plugin listing `tf32` for the call.
inline constexpr int64_t kExternTf32 = 0x100 | static_cast<int64_t>(DType::F32);
inline const char* extern_dtype_name(int64_t code) {
  if (code == kExternTf32) return "tf32";
  if (code < 0 || code > static_cast<int64_t>(DType::F64)) return "unknown";
  return dtype_name(static_cast<DType>(code));
}
inline int dtype_size(DType d) {
  static const int sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(d)];
}
inline bool is_float(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64;
}

// An index expression: a tree over constants and variables (x0, r0, t5).
struct Expr {
  enum Kind { Const, Var, Add, Mul, FloorDiv, Mod, Min, Max };
  Kind kind = Const;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> operands;

  static Expr constant(int64_t v) {
    Expr e;
    e.value = v;
    return e;
  }
  static Expr var(std::string n) {
    Expr e;
    e.kind = Var;
    e.name = std::move(n);
    return e;
  }
  static Expr node(Kind k, std::vector<Expr> ops) {
    Expr e;
    e.kind = k;
    e.operands = std::move(ops);
    return e;
  }
  bool is_atom() const { return kind == Const || kind == Var || kind == Min || kind == Max; }
};

// Append-only: a kind's number never changes (Scatter and Scan came after kir/1's first ten).
enum class OpKind {
  Load,
  Store,
  Const,
  Index,
  Cast,
  Where,
  Reduce,
  Extract,
  CheckIndex,
  Math,
  Scatter,
  Scan
};

// How a scatter combines its value with what the buffer holds.
inline constexpr const char* kScatterCombines[] = {"store", "sum", "prod", "max", "min"};
// What a scan combines along the row.
inline constexpr const char* kScanKinds[] = {"sum", "prod", "max", "min"};

struct Op {
  OpKind kind = OpKind::Math;
  int id = -1;               // the %N this op defines; -1 for store
  DType dtype = DType::F32;  // result dtype (store: unused)
  std::string name;          // math op name, reduce kind, or the buffer of a load/store/scatter
  std::vector<int> args;     // %operands (store, scatter: value; where: cond, a, b)
  Expr index;                // load/store/scatter address, or the value of `index`
  int mask = -1;             // load/store/scatter: a bool %value, or -1
  std::string combine;       // scatter: one of kScatterCombines
  std::string other;         // load with mask: the value masked lanes read, as text
  std::string literal;       // const: the value as text (e.g. "0.5", "-inf", "3")
  int64_t number = 0;        // extract: component; check_index: the dim size
};

enum class Role { In, Out, InOut };
inline const char* role_name(Role r) {
  return r == Role::In ? "in" : r == Role::Out ? "out" : "inout";
}

struct Buffer {
  std::string name;
  DType dtype = DType::F32;
  int64_t elements = 0;
  Role role = Role::In;
};

struct Kernel {
  std::string name;
  std::string kind = "pointwise";  // pointwise | reduction | extern
  std::string extern_name;         // extern kernels: the library call ("mm", "bmm")
  std::vector<Buffer> buffers;
  std::vector<int64_t> ranges;            // pointwise dims, outermost first
  std::vector<int64_t> reduction_ranges;  // reduction dims, outermost first
  std::vector<Op> body;
  std::vector<std::pair<std::string, int64_t>> attrs;  // extern parameters, in order

  const Buffer* buffer(const std::string& n) const {
    for (const Buffer& b : buffers)
      if (b.name == n) return &b;
    return nullptr;
  }
  const Op* op(int id) const {
    for (const Op& o : body)
      if (o.id == id) return &o;
    return nullptr;
  }
};

// ---- printing -------------------------------------------------------------------------

inline std::string print_expr(const Expr& e);

namespace detail {
inline std::string operand_text(const Expr& e, bool allow_mul) {
  if (e.is_atom() || (allow_mul && e.kind == Expr::Mul)) return print_expr(e);
  return "(" + print_expr(e) + ")";
}
inline std::string join_ops(const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", %" : "%") + std::to_string(ids[i]);
  return s;
}
}  // namespace detail

inline std::string print_expr(const Expr& e) {
  switch (e.kind) {
    case Expr::Const:
      return std::to_string(e.value);
    case Expr::Var:
      return e.name;
    case Expr::Add: {
      std::string s;
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? " + " : "") + detail::operand_text(e.operands[i], true);
      return s;
    }
    case Expr::Mul: {
      std::string s;
      for (size_t i = 0; i < e.operands.size(); ++i)
        s += (i ? "*" : "") + detail::operand_text(e.operands[i], false);
      return s;
    }
    case Expr::FloorDiv:
    case Expr::Mod:
      return detail::operand_text(e.operands.at(0), false) +
             (e.kind == Expr::FloorDiv ? " floordiv " : " mod ") +
             detail::operand_text(e.operands.at(1), false);
    case Expr::Min:
    case Expr::Max:
      return std::string(e.kind == Expr::Min ? "min(" : "max(") + print_expr(e.operands.at(0)) +
             ", " + print_expr(e.operands.at(1)) + ")";
  }
  return "?";
}

inline std::string print_op(const Op& op) {
  const std::string def = "%" + std::to_string(op.id) + " = ";
  const std::string dt = dtype_name(op.dtype);
  std::string mask;
  if (op.mask >= 0) mask = " mask %" + std::to_string(op.mask);
  switch (op.kind) {
    case OpKind::Load:
      return def + "load " + dt + " " + op.name + "[" + print_expr(op.index) + "]" + mask +
             (op.mask >= 0 ? " other " + op.other : "");
    case OpKind::Store:
      return "store " + op.name + "[" + print_expr(op.index) + "] " + detail::join_ops(op.args) +
             mask;
    case OpKind::Scatter:
      return "scatter " + op.combine + " " + op.name + "[" + print_expr(op.index) + "] " +
             detail::join_ops(op.args) + mask;
    case OpKind::Const:
      return def + "const " + dt + " " + op.literal;
    case OpKind::Index:
      return def + "index " + dt + " " + print_expr(op.index);
    case OpKind::Cast:
      return def + "cast " + dt + " " + detail::join_ops(op.args);
    case OpKind::Where:
      return def + "where " + dt + " " + detail::join_ops(op.args);
    case OpKind::Reduce:
      return def + "reduce " + op.name + " " + dt + " " + detail::join_ops(op.args);
    case OpKind::Scan:
      return def + "scan " + op.name + " " + dt + " " + detail::join_ops(op.args);
    case OpKind::Extract:
      return def + "extract " + dt + " " + detail::join_ops(op.args) + " " +
             std::to_string(op.number);
    case OpKind::CheckIndex:
      return def + "check_index " + dt + " " + detail::join_ops(op.args) + " " +
             std::to_string(op.number);
    case OpKind::Math:
      return def + op.name + " " + dt + " " + detail::join_ops(op.args);
  }
  return "?";
}

inline std::string print_kernel(const Kernel& k) {
  std::string s = "kernel " + k.name + " " + k.kind;
  if (k.kind == "extern") s += " " + k.extern_name;
  s += "\n";
  for (const Buffer& b : k.buffers) {
    s += "  buffer " + b.name + " " + dtype_name(b.dtype) + " " + std::to_string(b.elements) + " " +
         role_name(b.role) + "\n";
  }
  auto list = [&](const char* key, const std::vector<int64_t>& v) {
    if (v.empty()) return;
    s += std::string("  ") + key;
    for (int64_t x : v) s += " " + std::to_string(x);
    s += "\n";
  };
  list("ranges", k.ranges);
  list("reduce", k.reduction_ranges);
  for (const auto& [key, value] : k.attrs)
    s += "  attr " + key + " " + std::to_string(value) + "\n";
  for (const Op& op : k.body) s += "  " + print_op(op) + "\n";
  return s + "end\n";
}

inline std::string print(const std::vector<Kernel>& kernels) {
  std::string s = std::string(kVersion) + "\n";
  for (const Kernel& k : kernels) s += print_kernel(k);
  return s;
}

// ---- parsing ---------------------------------------------------------------------------

struct ParseResult {
  std::vector<Kernel> kernels;
  std::string error;  // empty on success; otherwise "line N: why"
  bool ok() const { return error.empty(); }
};

namespace detail {

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void skip() {
    while (p_ < s_.size() && s_[p_] == ' ') ++p_;
  }
  bool done() {
    skip();
    return p_ >= s_.size();
  }
  bool eat(std::string_view t) {
    skip();
    if (s_.substr(p_, t.size()) != t) return false;
    p_ += t.size();
    return true;
  }
  bool word(std::string& out) { return take_until(" [],()*+", out); }
  // A number as printed: unlike a word it keeps the '+' of an exponent ("1e+300").
  bool number_word(std::string& out) { return take_until(" ],)", out); }
  bool integer(int64_t& out) {
    skip();
    const size_t b = p_;
    if (p_ < s_.size() && s_[p_] == '-') ++p_;
    while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
    if (p_ == b || (p_ == b + 1 && s_[b] == '-')) {
      p_ = b;
      return false;
    }
    const std::string t(s_.substr(b, p_ - b));
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (errno != 0) {  // out of range: leave the text unread so the caller reports it
      p_ = b;
      return false;
    }
    out = v;
    return true;
  }
  bool ref(int& out) {
    int64_t v = 0;
    if (!eat("%") || !integer(v) || v < 0 || v > 1000000000) return false;
    out = static_cast<int>(v);
    return true;
  }
  bool peek(char c) {
    skip();
    return p_ < s_.size() && s_[p_] == c;
  }
  bool peek_word(std::string_view w) {
    skip();
    return s_.substr(p_, w.size()) == w && (p_ + w.size() == s_.size() || s_[p_ + w.size()] == ' ');
  }

 private:
  // The text up to the next character of `stops` (or the end); false when that is empty.
  bool take_until(std::string_view stops, std::string& out) {
    skip();
    const size_t b = p_;
    while (p_ < s_.size() && stops.find(s_[p_]) == std::string_view::npos) ++p_;
    out = std::string(s_.substr(b, p_ - b));
    return !out.empty();
  }

  std::string_view s_;
  size_t p_ = 0;
};

inline bool parse_expr(Cursor& c, Expr& out, int depth = 0);

inline bool parse_atom(Cursor& c, Expr& out, int depth) {
  if (depth > 200) return false;
  if (c.eat("(")) return parse_expr(c, out, depth + 1) && c.eat(")");
  for (const auto kind : {Expr::Min, Expr::Max}) {
    if (c.eat(kind == Expr::Min ? "min(" : "max(")) {
      Expr a, b;
      if (!parse_expr(c, a, depth + 1) || !c.eat(",") || !parse_expr(c, b, depth + 1) ||
          !c.eat(")"))
        return false;
      out = Expr::node(kind, {a, b});
      return true;
    }
  }
  int64_t v = 0;
  if (c.integer(v)) {
    out = Expr::constant(v);
    return true;
  }
  std::string name;
  if (!c.word(name)) return false;
  if (name[0] != 'x' && name[0] != 'r' && name[0] != 't') return false;
  for (size_t i = 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  if (name.size() < 2) return false;
  out = Expr::var(name);
  return true;
}

inline bool parse_term(Cursor& c, Expr& out, int depth) {
  if (!parse_atom(c, out, depth)) return false;
  for (;;) {
    if (c.eat("*")) {
      Expr rhs;
      if (!parse_atom(c, rhs, depth)) return false;
      if (out.kind == Expr::Mul) {
        out.operands.push_back(rhs);
      } else {
        out = Expr::node(Expr::Mul, {out, rhs});
      }
    } else if (c.peek_word("floordiv") || c.peek_word("mod")) {
      const bool div = c.eat("floordiv");
      if (!div) c.eat("mod");
      Expr rhs;
      if (!parse_atom(c, rhs, depth)) return false;
      out = Expr::node(div ? Expr::FloorDiv : Expr::Mod, {out, rhs});
    } else {
      return true;
    }
  }
}

inline bool parse_expr(Cursor& c, Expr& out, int depth) {
  if (!parse_term(c, out, depth)) return false;
  while (c.eat("+")) {
    Expr rhs;
    if (!parse_term(c, rhs, depth)) return false;
    if (out.kind == Expr::Add) {
      out.operands.push_back(rhs);
    } else {
      out = Expr::node(Expr::Add, {out, rhs});
    }
  }
  return true;
}

inline bool parse_refs(Cursor& c, std::vector<int>& out, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    int r = 0;
    if ((i > 0 && !c.eat(",")) || !c.ref(r)) return false;
    out.push_back(r);
  }
  return true;
}

inline bool parse_access(Cursor& c, Op& op) {
  return c.word(op.name) && c.eat("[") && parse_expr(c, op.index) && c.eat("]");
}

// Literal numbers: what strtod accepts (inf, nan, decimals, exponents), as one word.
inline bool parse_literal(Cursor& c, std::string& out) {
  if (!c.number_word(out)) return false;
  char* end = nullptr;
  std::strtod(out.c_str(), &end);
  return end == out.c_str() + out.size();
}

inline int arity_of_math(const std::string& name) {
  static const char* const binary[] = {
      "add", "sub", "mul", "div",   "truediv",     "floordiv",   "truncdiv",    "mod",    "fmod",
      "max", "min", "pow", "atan2", "eq",          "ne",         "lt",          "le",     "gt",
      "ge",  "and", "or",  "xor",   "logical_and", "logical_or", "logical_xor", "nanmax", "nanmin"};
  for (const char* b : binary)
    if (name == b) return 2;
  return 1;
}

inline bool parse_body_op(Cursor& c, Op& op, std::string& why) {
  if (c.eat("store")) {
    op.kind = OpKind::Store;
    if (!parse_access(c, op) || !parse_refs(c, op.args, 1)) return (why = "bad store"), false;
    if (c.eat("mask") && !c.ref(op.mask)) return (why = "bad store mask"), false;
    return true;
  }
  if (c.eat("scatter")) {
    op.kind = OpKind::Scatter;
    if (!c.word(op.combine) || !parse_access(c, op) || !parse_refs(c, op.args, 1))
      return (why = "bad scatter"), false;
    if (c.eat("mask") && !c.ref(op.mask)) return (why = "bad scatter mask"), false;
    return true;
  }
  if (!c.ref(op.id) || !c.eat("=")) return (why = "expected '%N =', 'store' or 'scatter'"), false;
  std::string opname, dt;
  if (!c.word(opname)) return (why = "expected an op name"), false;
  if ((opname == "reduce" || opname == "scan") && !c.word(op.name))
    return (why = opname + " needs a kind"), false;
  if (!c.word(dt) || !parse_dtype(dt, op.dtype)) return (why = "bad dtype '" + dt + "'"), false;
  if (opname == "load") {
    op.kind = OpKind::Load;
    if (!parse_access(c, op)) return (why = "bad load"), false;
    if (c.eat("mask")) {
      if (!c.ref(op.mask) || !c.eat("other") || !parse_literal(c, op.other))
        return (why = "a masked load needs 'mask %N other VALUE'"), false;
    }
    return true;
  }
  if (opname == "const") {
    op.kind = OpKind::Const;
    return parse_literal(c, op.literal) || ((why = "bad constant"), false);
  }
  if (opname == "index") {
    op.kind = OpKind::Index;
    return parse_expr(c, op.index) || ((why = "bad index expression"), false);
  }
  if (opname == "extract" || opname == "check_index") {
    op.kind = opname == "extract" ? OpKind::Extract : OpKind::CheckIndex;
    return (parse_refs(c, op.args, 1) && c.integer(op.number)) || ((why = "bad " + opname), false);
  }
  size_t arity = 1;
  if (opname == "cast") {
    op.kind = OpKind::Cast;
  } else if (opname == "where") {
    op.kind = OpKind::Where;
    arity = 3;
  } else if (opname == "reduce") {
    op.kind = OpKind::Reduce;
  } else if (opname == "scan") {
    op.kind = OpKind::Scan;
  } else {
    op.kind = OpKind::Math;
    op.name = opname;
    arity = static_cast<size_t>(arity_of_math(opname));
  }
  return parse_refs(c, op.args, arity) || ((why = "bad operands of " + opname), false);
}

inline bool check_kernel(const Kernel& k, std::string& why) {
  std::vector<int> defined;
  auto known = [&](int id) {
    for (int d : defined)
      if (d == id) return true;
    return false;
  };
  auto var_ok = [&](const Expr& e, auto&& self) -> bool {
    if (e.kind == Expr::Var) {
      const size_t n = std::strtoull(e.name.c_str() + 1, nullptr, 10);
      if (e.name[0] == 'x') return n < k.ranges.size();
      if (e.name[0] == 'r') return n < k.reduction_ranges.size();
      return known(static_cast<int>(n));
    }
    for (const Expr& o : e.operands)
      if (!self(o, self)) return false;
    return true;
  };
  bool has_reduce = false, has_scan = false;
  for (const Op& op : k.body) {
    has_reduce = has_reduce || op.kind == OpKind::Reduce;
    has_scan = has_scan || op.kind == OpKind::Scan;
    if (op.kind == OpKind::Scan) {
      bool kind_ok = false;
      for (const char* s : kScanKinds) kind_ok = kind_ok || op.name == s;
      if (!kind_ok) return (why = "unknown scan kind '" + op.name + "'"), false;
      if (k.kind != "reduction") return (why = "only reduction kernels scan"), false;
    }
    for (int a : op.args)
      if (!known(a))
        return (why = "%" + std::to_string(a) + " is used before it is defined"), false;
    if (op.mask >= 0 && !known(op.mask))
      return (why = "mask %" + std::to_string(op.mask) + " is not defined"), false;
    if ((op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::Scatter) &&
        !k.buffer(op.name))
      return (why = "unknown buffer '" + op.name + "'"), false;
    if (op.kind == OpKind::Scatter) {
      bool combine_ok = false;
      for (const char* c : kScatterCombines) combine_ok = combine_ok || op.combine == c;
      if (!combine_ok) return (why = "unknown scatter combine '" + op.combine + "'"), false;
      if (k.kind != "pointwise") return (why = "only pointwise kernels scatter"), false;
      if (k.buffer(op.name)->role != Role::InOut)
        return (why = "scatter into '" + op.name + "', which is not inout"), false;
    }
    if (!var_ok(op.index, var_ok)) return (why = "index names an unknown variable"), false;
    if (op.id >= 0) {
      if (known(op.id)) return (why = "%" + std::to_string(op.id) + " is defined twice"), false;
      defined.push_back(op.id);
    }
  }
  if (has_reduce && has_scan) return (why = "a kernel that scans has no reduce"), false;
  return true;
}

}  // namespace detail

inline ParseResult parse(std::string_view text) {
  ParseResult result;
  size_t line_no = 0;
  Kernel* k = nullptr;
  bool header = false;
  auto fail = [&](const std::string& why) {
    result.kernels.clear();
    result.error = "line " + std::to_string(line_no) + ": " + why;
    return result;
  };
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    detail::Cursor c(line);
    if (c.done()) continue;
    if (!header) {
      if (!c.eat(kVersion) || !c.done()) return fail("expected the header 'kir/1'");
      header = true;
      continue;
    }
    std::string key;
    if (!k) {
      Kernel nk;
      if (!c.eat("kernel") || !c.word(nk.name) || !c.word(nk.kind))
        return fail("expected 'kernel NAME KIND'");
      if (nk.kind == "extern" && !c.word(nk.extern_name))
        return fail("an extern kernel names its call");
      if (nk.kind != "pointwise" && nk.kind != "reduction" && nk.kind != "extern")
        return fail("unknown kernel kind '" + nk.kind + "'");
      if (!c.done()) return fail("unexpected text after the kernel header");
      result.kernels.push_back(std::move(nk));
      k = &result.kernels.back();
      continue;
    }
    if (c.eat("end")) {
      std::string why;
      if (!c.done()) return fail("unexpected text after 'end'");
      if (!detail::check_kernel(*k, why)) return fail("kernel " + k->name + ": " + why);
      k = nullptr;
      continue;
    }
    if (c.peek_word("buffer")) {
      c.eat("buffer");
      Buffer b;
      std::string dt, role;
      if (!c.word(b.name) || !c.word(dt) || !parse_dtype(dt, b.dtype) || !c.integer(b.elements) ||
          b.elements < 0 || !c.word(role))
        return fail("expected 'buffer NAME DTYPE ELEMENTS ROLE'");
      if (role == "in") {
        b.role = Role::In;
      } else if (role == "out") {
        b.role = Role::Out;
      } else if (role == "inout") {
        b.role = Role::InOut;
      } else {
        return fail("unknown buffer role '" + role + "'");
      }
      k->buffers.push_back(b);
    } else if (c.peek_word("ranges") || c.peek_word("reduce")) {
      auto& list = c.eat("ranges") ? k->ranges : k->reduction_ranges;
      if (&list == &k->reduction_ranges) c.eat("reduce");
      int64_t v = 0;
      while (c.integer(v)) {
        if (v < 0) return fail("a range is negative");
        list.push_back(v);
      }
    } else if (c.peek_word("attr")) {
      c.eat("attr");
      std::pair<std::string, int64_t> a;
      if (!c.word(a.first) || !c.integer(a.second)) return fail("expected 'attr NAME INTEGER'");
      k->attrs.push_back(a);
    } else {
      Op op;
      std::string why;
      if (!detail::parse_body_op(c, op, why)) return fail(why);
      k->body.push_back(std::move(op));
    }
    if (!c.done()) return fail("unexpected text at the end of the line");
  }
  if (!header) return fail("empty text; expected the header 'kir/1'");
  if (k) return fail("kernel " + k->name + " has no 'end'");
  return result;
}

// Calls visitor(op) for every op in order; a convenience for codegen written as a switch.
template <class Visitor>
void visit(const Kernel& kernel, Visitor&& visitor) {
  for (const Op& op : kernel.body) visitor(op);
}

}  // namespace kiln::kir

#endif  // KILN_KIR_HPP
