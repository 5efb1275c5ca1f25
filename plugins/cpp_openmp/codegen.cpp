#include "plugins/cpp_openmp/codegen.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "plugins/cpp_openmp/codegen_ops.h"

namespace kiln::cpu {
namespace {

using kir::OpKind;

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

std::string num(int64_t v) {
  return std::to_string(v) + "LL";
}

// `const int64_t <prefix>i = (flat / div) % size;` for dims [0, count) of `sizes`, whose
// row-major flattening over dims [0, count) is `flat`.
std::string unflatten(const std::vector<int64_t>& sizes, size_t count, const std::string& prefix,
                      const std::string& flat) {
  std::string s;
  for (size_t i = 0; i < count; ++i) {
    s += "    const int64_t " + prefix + std::to_string(i) + " = (" + flat + " / " +
         num(product(sizes, i + 1, count)) + ") % " + num(sizes[i]) + ";\n";
  }
  return s;
}

std::string buffer_params(const kir::Kernel& k) {
  std::string s;
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const kir::Buffer& b = k.buffers[i];
    const std::string t = c_type(b.dtype);
    const bool read_only = b.role == kir::Role::In;
    s += "  " + std::string(read_only ? "const " : "") + t + "* __restrict " + b.name +
         " = static_cast<" + (read_only ? "const " : "") + t + "*>(buffers[" + std::to_string(i) +
         "]);\n";
  }
  return s;
}

std::string body_lines(const kir::Kernel& k, const std::vector<const kir::Op*>& ops,
                       const ExprContext& ctx, const std::string& indent) {
  std::string s;
  for (const kir::Op* op : ops) s += indent + op_c(k, *op, ctx) + "\n";
  return s;
}

// `line` for copy `j` of a group: every SSA name vN becomes vN_j and the inner variable
// moves j vectors along.
std::string group_copy(const std::string& line, int j, const std::string& inner) {
  std::string out;
  size_t i = 0;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < line.size()) {
    if (!ident(line[i])) {
      out += line[i++];
      continue;
    }
    size_t e = i;
    while (e < line.size() && ident(line[e])) ++e;
    const std::string tok = line.substr(i, e - i);
    const bool ssa = tok.size() > 1 && tok[0] == 'v' &&
                     tok.find_first_not_of("0123456789", 1) == std::string::npos;
    if (ssa) {
      out += tok + "_" + std::to_string(j);
    } else if (tok == inner) {
      out += "(" + inner + " + " + std::to_string(j) + " * krt::kLanes)";
    } else {
      out += tok;
    }
    i = e;
  }
  return out;
}

// The body over kGroup consecutive vectors, op by op across them: independent work sits
// side by side, so a chain of opaque calls (Sleef) does not serialize one vector at a time.
constexpr int kGroup = 4;
constexpr size_t kMaxGroupedOps = 32;

std::string grouped_body(const kir::Kernel& k, const std::vector<const kir::Op*>& ops,
                         const std::string& inner) {
  std::string s = "    auto group = [&](int64_t " + inner +
                  ") __attribute__((always_inline)) {\n      using L = krt::L8;\n";
  for (const kir::Op* op : ops) {
    const std::string line = op_c(k, *op, {inner, false});
    for (int j = 0; j < kGroup; ++j) s += "      " + group_copy(line, j, inner) + "\n";
  }
  return s + "    };\n";
}

constexpr int64_t kTileRows = 32;
constexpr int64_t kTileCols = 64;

bool strided_inner_load(const kir::Kernel& k, const std::string& inner) {
  for (const auto& op : k.body) {
    if (op.kind != OpKind::Load) continue;
    const auto c = coefficient(op.index, inner);
    if (c && *c != 0 && *c != 1 && *c != -1) return true;
  }
  return false;
}

std::string pointwise(const kir::Kernel& k, const CodegenOptions& o) {
  std::vector<const kir::Op*> ops;
  for (const auto& op : k.body) ops.push_back(&op);
  const size_t n = k.ranges.size();
  if (n == 0) {
    return "  {\n    using L = krt::L1;\n" + body_lines(k, ops, {}, "    ") + "  }\n";
  }
  const std::string inner = "x" + std::to_string(n - 1);
  const int64_t outer = product(k.ranges, 0, n - 1), size = k.ranges[n - 1];
  // Too few rows to keep every thread busy (a 1-D tensor has one): the inner dim is cut
  // into chunks of whole vectors, and the parallel loop runs over rows x chunks.
  const int64_t want = 4 * static_cast<int64_t>(std::max(o.threads, 1));
  int64_t chunks = 1, chunk = size;
  if (outer > 0 && outer < want && size >= 2 * o.min_inner_chunk) {
    chunks = std::min((want + outer - 1) / outer, size / o.min_inner_chunk);
    chunk = ((size + chunks - 1) / chunks + 7) / 8 * 8;
    chunks = (size + chunk - 1) / chunk;
  }
  std::string s = "#pragma omp parallel for schedule(static) num_threads(" +
                  std::to_string(std::max(o.threads, 1)) + ") if(" + num(outer * size) +
                  " >= " + num(o.parallel_threshold) + ")\n";
  std::string lo = "0", hi = num(size);
  // A load that walks memory with a stride along the inner dim (a transpose) touches a new
  // cache line and page per lane: walk rows x cols in tiles instead, so a tile's lines and
  // pages are reused across its rows.
  const bool tiled = chunks == 1 && n >= 2 && k.ranges[n - 2] > 1 && strided_inner_load(k, inner);
  const std::string row = n >= 2 ? "x" + std::to_string(n - 2) : "";
  if (tiled) {
    const int64_t rows = k.ranges[n - 2], rest = product(k.ranges, 0, n - 2);
    const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
    const int64_t col_tiles = (size + kTileCols - 1) / kTileCols;
    s += "  for (int64_t t = 0; t < " + num(rest * row_tiles * col_tiles) + "; ++t) {\n";
    s += "    const int64_t o = t / " + num(row_tiles * col_tiles) + ";\n";
    s += "    const int64_t rb = (t / " + num(col_tiles) + ") % " + num(row_tiles) + ", cb = t % " +
         num(col_tiles) + ";\n";
    s += unflatten(k.ranges, n - 2, "x", "o");
    s += "    const int64_t lo = cb * " + num(kTileCols) + ", hi = krt::imin(lo + " +
         num(kTileCols) + ", " + num(size) + ");\n";
    s += "    int64_t " + row + " = 0;\n";
    lo = "lo";
    hi = "hi";
  } else if (chunks == 1) {
    s += "  for (int64_t o = 0; o < " + num(outer) + "; ++o) {\n";
    s += unflatten(k.ranges, n - 1, "x", "o");
  } else {
    s += "  for (int64_t oc = 0; oc < " + num(outer * chunks) + "; ++oc) {\n";
    s += "    const int64_t o = oc / " + num(chunks) + ";\n";
    s += "    const int64_t lo = (oc % " + num(chunks) + ") * " + num(chunk) +
         ", hi = krt::imin(lo + " + num(chunk) + ", " + num(size) + ");\n";
    s += unflatten(k.ranges, n - 1, "x", "o");
    lo = "lo";
    hi = "hi";
  }
  s += "    auto body = [&](auto lanes, int64_t " + inner +
       ") __attribute__((always_inline)) {\n      using L = decltype(lanes);\n";
  s += body_lines(k, ops, {inner, false}, "      ");
  s += "    };\n";
  const bool grouped = ops.size() <= kMaxGroupedOps && size >= kGroup * 8;
  if (grouped) s += grouped_body(k, ops, inner);
  if (tiled) {
    s += "    for (" + row + " = rb * " + num(kTileRows) + "; " + row + " < krt::imin(rb * " +
         num(kTileRows) + " + " + num(kTileRows) + ", " + num(k.ranges[n - 2]) + "); ++" + row +
         ") {\n";
  }
  s += "    int64_t " + inner + " = " + lo + ";\n";
  if (grouped) {
    s += "    for (; " + inner + " + " + std::to_string(kGroup) + " * krt::kLanes <= " + hi + "; " +
         inner + " += " + std::to_string(kGroup) + " * krt::kLanes) group(" + inner + ");\n";
  }
  s += "    for (; " + inner + " + krt::kLanes <= " + hi + "; " + inner +
       " += krt::kLanes) body(krt::L8{}, " + inner + ");\n";
  s += "    for (; " + inner + " < " + hi + "; ++" + inner + ") body(krt::L1{}, " + inner + ");\n";
  if (tiled) s += "    }\n";
  return s + "  }\n";
}

// Which ops of a reduction kernel run in the reduction loop (pre) and which once per row
// after it (post: everything that depends on a reduce).
struct ReductionPlan {
  std::vector<const kir::Op*> pre, post, reduces, hoisted;
  bool vectorized = true;
};

ReductionPlan plan_reduction(const kir::Kernel& k) {
  ReductionPlan p;
  std::set<int> after, uses_r;
  auto depends = [](const std::set<int>& set, const kir::Op& op) {
    for (int a : op.args)
      if (set.contains(a)) return true;
    return op.mask >= 0 && set.contains(op.mask);
  };
  for (const auto& op : k.body) {
    std::set<std::string> vars;
    collect_vars(op.index, vars);
    bool r = depends(uses_r, op);
    for (const auto& v : vars)
      r = r || v[0] == 'r' || (v[0] == 't' && uses_r.contains(std::stoi(v.substr(1))));
    if (r && op.id >= 0) uses_r.insert(op.id);
    if (op.kind == OpKind::Reduce) {
      if (depends(after, op)) throw std::runtime_error("a reduce reads another reduce's result");
      p.reduces.push_back(&op);
      p.pre.push_back(&op);
      after.insert(op.id);
      static const std::set<std::string> lanewise = {"sum", "prod", "max", "min", "any", "welford"};
      p.vectorized = p.vectorized && lanewise.contains(op.name);
    } else if (depends(after, op)) {
      if (op.id >= 0) after.insert(op.id);
      p.post.push_back(&op);
    } else if (op.kind == OpKind::Store) {
      throw std::runtime_error("a reduction kernel stores a value that is not reduced");
    } else {
      p.pre.push_back(&op);
    }
  }
  // Pre values the post part needs are recomputed there; they must not vary along r.
  std::set<int> needed;
  for (auto it = p.post.rbegin(); it != p.post.rend(); ++it) {
    for (int a : (*it)->args) needed.insert(a);
    if ((*it)->mask >= 0) needed.insert((*it)->mask);
  }
  for (auto it = p.pre.rbegin(); it != p.pre.rend(); ++it) {
    const kir::Op& op = **it;
    if (op.kind == OpKind::Reduce || !needed.contains(op.id)) continue;
    if (uses_r.contains(op.id))
      throw std::runtime_error("a value computed after a reduce varies along the reduction");
    for (int a : op.args) needed.insert(a);
    if (op.mask >= 0) needed.insert(op.mask);
  }
  for (const kir::Op* op : p.pre)
    if (op->kind != OpKind::Reduce && needed.contains(op->id)) p.hoisted.push_back(op);
  return p;
}

// Accumulator declarations, the body lambda and the loops over [ro_lo, ro_hi) x [ri_lo, ri_hi).
std::string reduction_loops(const kir::Kernel& k, const ReductionPlan& p, const std::string& ro_lo,
                            const std::string& ro_hi, const std::string& ri_lo,
                            const std::string& ri_hi, const std::string& indent) {
  const size_t m = k.reduction_ranges.size();
  const std::string inner = m ? "r" + std::to_string(m - 1) : "r_inner";
  const int64_t rinner = m ? k.reduction_ranges[m - 1] : 1;
  const bool vec = p.vectorized && m > 0;
  std::string s;
  for (const kir::Op* r : p.reduces)
    s += indent + accumulator_type(k, *r, vec) + " a" + std::to_string(r->id) + ";\n";
  s += indent + "auto body = [&](auto lanes, int64_t ro, int64_t " + inner +
       ") __attribute__((always_inline)) {\n";
  s += indent + "  using L = decltype(lanes);\n";
  s += indent + "  (void)ro;\n";
  std::string rvars = unflatten(k.reduction_ranges, m ? m - 1 : 0, "r", "ro");
  s += rvars;
  s += indent + "  const int64_t rlin = ro * " + num(rinner) + " + " + inner + ";\n";
  s += indent + "  (void)rlin;\n";
  s += body_lines(k, p.pre, {vec ? inner : "", false}, indent + "  ");
  s += indent + "};\n";
  s += indent + "for (int64_t ro = " + ro_lo + "; ro < " + ro_hi + "; ++ro) {\n";
  s += indent + "  int64_t " + inner + " = " + ri_lo + ";\n";
  if (vec) {
    s += indent + "  for (; " + inner + " + krt::kLanes <= " + ri_hi + "; " + inner +
         " += krt::kLanes) body(krt::L8{}, ro, " + inner + ");\n";
  }
  s += indent + "  for (; " + inner + " < " + ri_hi + "; ++" + inner + ") body(krt::L1{}, ro, " +
       inner + ");\n";
  s += indent + "}\n";
  for (const kir::Op* r : p.reduces) {
    const std::string a = "a" + std::to_string(r->id);
    s += vec ? indent + a + ".w.fold_into(" + a + ".s);\n" : "";
  }
  return s;
}

std::string scalar_acc(const kir::Kernel& k, const kir::Op& r) {
  return accumulator_type(k, r, false);
}

// After the loops: each reduce's value from its final accumulator f<id>, then the post ops.
std::string row_epilogue(const kir::Kernel& k, const ReductionPlan& p, const std::string& indent) {
  std::string s = indent + "{\n" + indent + "  using L = krt::L1;\n";
  s += body_lines(k, p.hoisted, {}, indent + "  ");
  for (const kir::Op* r : p.reduces) {
    const std::string f = "f" + std::to_string(r->id);
    const bool arg = r->name == "argmax" || r->name == "argmin";
    const std::string value = r->name == "any" ? "(" + f + ".result() != 0)"
                              : arg            ? f + ".index"
                                               : f + ".result()";
    s += indent + "  const " + c_type(r->dtype) + " v" + std::to_string(r->id) + " = " + value +
         ";\n";
  }
  for (const kir::Op* op : p.post) {
    if (op->kind == OpKind::Extract) {
      static const char* const fields[] = {"mean", "m2", "count"};
      const kir::Op* w = k.op(op->args.at(0));
      if (!w || w->name != "welford" || op->number < 0 || op->number > 2)
        throw std::runtime_error("extract reads a welford reduce's component 0, 1 or 2");
      s += indent + "  const " + c_type(op->dtype) + " v" + std::to_string(op->id) + " = f" +
           std::to_string(w->id) + "." + fields[op->number] + ";\n";
    } else {
      s += indent + "  " + op_c(k, *op, {}) + "\n";
    }
  }
  return s + indent + "}\n";
}

std::string reduction(const kir::Kernel& k, const CodegenOptions& o) {
  const ReductionPlan p = plan_reduction(k);
  const size_t n = k.ranges.size(), m = k.reduction_ranges.size();
  const int64_t rows = product(k.ranges, 0, n);
  const int64_t router = m ? product(k.reduction_ranges, 0, m - 1) : 1;
  const int64_t rinner = m ? k.reduction_ranges[m - 1] : 1;
  const int64_t rsize = router * rinner;
  const bool split = o.threads > 1 && rows < o.threads && rsize >= o.split_threshold;
  std::string s;
  if (!split) {
    s += "#pragma omp parallel for schedule(static) num_threads(" +
         std::to_string(std::max(o.threads, 1)) + ") if(" + num(rows * rsize) +
         " >= " + num(o.parallel_threshold) + ")\n";
    s += "  for (int64_t o = 0; o < " + num(rows) + "; ++o) {\n";
    s += unflatten(k.ranges, n, "x", "o");
    s += reduction_loops(k, p, "0", num(router), "0", num(rinner), "    ");
    for (const kir::Op* r : p.reduces) {
      const std::string id = std::to_string(r->id);
      s += "    auto& f" + id + " = a" + id + (p.vectorized && m > 0 ? ".s" : "") + ";\n";
    }
    s += row_epilogue(k, p, "    ");
    return s + "  }\n";
  }
  const std::string t = std::to_string(o.threads);
  s += "  for (int64_t o = 0; o < " + num(rows) + "; ++o) {\n";
  s += unflatten(k.ranges, n, "x", "o");
  for (const kir::Op* r : p.reduces)
    s += "    " + scalar_acc(k, *r) + " p" + std::to_string(r->id) + "[" + t + "];\n";
  s += "#pragma omp parallel for schedule(static, 1) num_threads(" + t + ")\n";
  s += "    for (int tid = 0; tid < " + t + "; ++tid) {\n";
  if (router >= o.threads) {
    s += "      const int64_t lo = " + num(router) + " * tid / " + t + ", hi = " + num(router) +
         " * (tid + 1) / " + t + ";\n";
    s += reduction_loops(k, p, "lo", "hi", "0", num(rinner), "      ");
  } else {
    s += "      const int64_t chunk = ((" + num(rinner) + " + " + t + " - 1) / " + t +
         " + 7) / 8 * 8;\n";
    s += "      const int64_t lo = krt::imin(tid * chunk, " + num(rinner) +
         "), hi = krt::imin(lo + chunk, " + num(rinner) + ");\n";
    s += reduction_loops(k, p, "0", num(router), "lo", "hi", "      ");
  }
  for (const kir::Op* r : p.reduces) {
    const std::string id = std::to_string(r->id);
    s += "      p" + id + "[tid] = a" + id + (p.vectorized && m > 0 ? ".s" : "") + ";\n";
  }
  s += "    }\n";
  for (const kir::Op* r : p.reduces) {
    const std::string id = std::to_string(r->id);
    s += "    " + scalar_acc(k, *r) + " f" + id + ";\n";
    s += "    for (int tid = 0; tid < " + t + "; ++tid) f" + id + ".merge(p" + id + "[tid]);\n";
  }
  s += row_epilogue(k, p, "    ");
  return s + "  }\n";
}

}  // namespace

std::string kernel_symbol(const std::string& kernel_name) {
  return "kiln_kernel_" + kernel_name;
}

std::string generate_source(const std::vector<kir::Kernel>& kernels, const CodegenOptions& o) {
  std::string s = "#include \"kiln_cpu_runtime.h\"\n";
  for (const kir::Kernel& k : kernels) {
    if (k.kind == "extern") continue;
    try {
      s += "\n// " + k.name + " (" + k.kind + ")\n";
      for (char c : k.name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
          throw std::runtime_error("a kernel name may hold only letters, digits and '_'");
      }
      // The bytes each buffer parameter spans, so launch can check what it is given.
      s += "extern \"C\" __attribute__((visibility(\"default\"))) const int64_t kiln_bytes_" +
           k.name + "[] = {";
      for (const auto& b : k.buffers)
        s += std::to_string(b.elements * kir::dtype_size(b.dtype)) + "LL, ";
      s += "-1};\n";
      s += "extern \"C\" __attribute__((visibility(\"default\"))) void " + kernel_symbol(k.name) +
           "(void* const* buffers, krt::Status* st) {\n";
      s += buffer_params(k);
      s += "  (void)st;\n";
      s += k.kind == "reduction" ? reduction(k, o) : pointwise(k, o);
      s += "}\n";
    } catch (const std::exception& e) {
      throw std::runtime_error("kernel " + k.name + ": " + e.what());
    }
  }
  return s;
}

}  // namespace kiln::cpu
