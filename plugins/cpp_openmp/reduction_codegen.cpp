#include "plugins/cpp_openmp/reduction_codegen.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "plugins/cpp_openmp/column_reduction_codegen.h"
#include "plugins/cpp_openmp/loop_text.h"
#include "plugins/kir_support/row_plan.h"

namespace kiln::cpu {
namespace {

using kir::OpKind;
using kir_support::RowPass;
using kir_support::RowPlan;

std::string id(const kir::Op* op) {
  return std::to_string(op->id);
}

// The statements of a pass body: row scalars splat into lanes, values kept by an earlier
// pass read back, the ops, and the values kept for later passes.
std::vector<std::string> pass_statements(const kir::Kernel& k, const RowPass& pass,
                                         const std::string& inner) {
  auto type_of = [&](int v) {
    const kir::Op* def = k.op(v);
    if (!def) throw std::runtime_error("unknown value %" + std::to_string(v));
    return std::string(c_type(def->dtype));
  };
  std::vector<std::string> lines;
  for (int v : pass.row_values) lines.push_back(splat_row_value(k, v));
  for (int v : pass.cache_reads) {
    lines.push_back("const auto v" + std::to_string(v) + " = krt::load<L, " + type_of(v) + ">(c" +
                    std::to_string(v) + ", rlin, 1);");
  }
  for (const kir::Op* op : pass.ops) lines.push_back(op_c(k, *op, {inner, false, "v"}));
  for (int v : pass.cache_writes) {
    lines.push_back("krt::store<L, " + type_of(v) + ">(c" + std::to_string(v) + ", rlin, 1, v" +
                    std::to_string(v) + ");");
  }
  return lines;
}

// A pass walked in order (a scan) runs on vectors where every scan in it is a sum or product
// of numbers, nothing in it reduces, and nothing it loads is a buffer it writes (a vector's
// lanes would read before the vector's stores): krt::scan combines a vector's lanes in order.
bool scans_on_vectors(const RowPass& pass) {
  if (!pass.in_order || !pass.reduces.empty()) return false;
  std::set<std::string> written;
  for (const kir::Op* op : pass.ops)
    if (op->kind == OpKind::Store || op->kind == OpKind::Scatter) written.insert(op->name);
  return std::all_of(pass.ops.begin(), pass.ops.end(), [&](const kir::Op* op) {
    if (op->kind == OpKind::Load) return !written.contains(op->name);
    return op->kind != OpKind::Scan ||
           ((op->name == "sum" || op->name == "prod") && op->dtype != kir::DType::Bool);
  });
}

// Accumulators, the pass body and its loops over [ro_lo, ro_hi) x [ri_lo, ri_hi).
std::string pass_loops(const kir::Kernel& k, const RowPass& pass, size_t index,
                       const std::string& ro_lo, const std::string& ro_hi, const std::string& ri_lo,
                       const std::string& ri_hi, const std::string& indent,
                       const CodegenOptions& o) {
  const size_t m = k.reduction_ranges.size();
  const std::string inner = m ? "r" + std::to_string(m - 1) : "r_inner";
  const int64_t rinner = m ? k.reduction_ranges[m - 1] : 1;
  const bool vec = pass.vectorized && m > 0;
  const std::string body = "pass" + std::to_string(index);
  const std::vector<std::string> lines = pass_statements(k, pass, vec ? inner : "");
  const std::string prologue = unflatten(k.reduction_ranges, m ? m - 1 : 0, "r", "ro") + indent +
                               "  const int64_t rlin = ro * " + num(rinner) + " + " + inner +
                               ";\n" + indent + "  (void)rlin;\n";
  std::string s;
  for (const kir::Op* r : pass.reduces)
    s += indent + accumulator_type(k, *r, vec) + " a" + id(r) + ";\n";
  for (const kir::Op* op : pass.ops)
    if (op->kind == OpKind::Scan)
      s += indent + accumulator_type(k, *op, false) + " a" + id(op) + ";\n";
  s += indent + "auto " + body + " = [&](auto lanes, int64_t ro, int64_t " + inner +
       ") __attribute__((always_inline)) {\n";
  s += indent + "  using L = decltype(lanes);\n" + indent + "  (void)ro;\n" + prologue;
  for (const std::string& line : lines) s += indent + "  " + line + "\n";
  s += indent + "};\n";
  // A scan's vectors run one after another (each carries into the next): not grouped.
  const bool grouped = o.groups && vec && !pass.in_order && pass.ops.size() <= kMaxGroupedOps &&
                       rinner >= kGroup * 8;
  if (grouped) {
    s += group_lambda(indent, body + "_group", "int64_t ro, int64_t " + inner,
                      indent + "  (void)ro;\n" + prologue, lines, {inner, "rlin"});
  }
  s += indent + "for (int64_t ro = " + ro_lo + "; ro < " + ro_hi + "; ++ro) {\n";
  s += indent + "  int64_t " + inner + " = " + ri_lo + ";\n";
  s += vector_loops(indent + "  ", inner, ri_hi, grouped ? body + "_group" : "", body, "ro, ", vec);
  s += indent + "}\n";
  for (const kir::Op* r : pass.reduces)
    if (vec) s += indent + "a" + id(r) + ".w.fold_into(a" + id(r) + ".s);\n";
  return s;
}

// The final accumulator of each reduce of a pass, as f<id>.
std::string final_accumulators(const kir::Kernel& k, const RowPass& pass,
                               const std::string& indent) {
  const bool vec = pass.vectorized && !k.reduction_ranges.empty();
  std::string s;
  for (const kir::Op* r : pass.reduces)
    s += indent + "auto& f" + id(r) + " = a" + id(r) + (vec ? ".s" : "") + ";\n";
  return s;
}

}  // namespace

std::string row_stage(const kir::Kernel& k, const RowPlan& plan, size_t level,
                      const std::string& indent, const std::set<int>& skip) {
  std::string s;
  if (level > 0) {
    for (const kir::Op* r : plan.passes[level - 1].reduces) {
      const std::string f = "f" + id(r);
      const bool arg = r->name == "argmax" || r->name == "argmin";
      const std::string value = r->name == "any" ? "(" + f + ".result() != 0)"
                                : arg            ? f + ".index"
                                                 : f + ".result()";
      s += indent + "const " + c_type(r->dtype) + " s" + id(r) + " = " + value + ";\n";
    }
  }
  for (const kir::Op* op : plan.stages[level]) {
    if (skip.contains(op->id)) continue;
    if (op->kind == OpKind::Extract) {
      static const char* const fields[] = {"mean", "m2", "count"};
      const kir::Op* w = k.op(op->args.at(0));
      if (!w || w->name != "welford" || op->number < 0 || op->number > 2)
        throw std::runtime_error("extract reads a welford reduce's component 0, 1 or 2");
      s += indent + "const " + c_type(op->dtype) + " s" + id(op) + " = f" + id(w) + "." +
           fields[op->number] + ";\n";
    } else {
      s += indent + op_c(k, *op, {"", false, "s"}) + "\n";
    }
  }
  return s;
}

std::string reduction_kernel(const kir::Kernel& k, const CodegenOptions& o) {
  if (o.vector_width > 1) {
    const RowPlan columns = kir_support::plan_rows(k, 0);
    if (prefers_columns(k, columns, o)) return column_reduction_kernel(k, columns, o);
  }
  RowPlan plan = kir_support::plan_rows(k, o.row_cache_bytes);
  for (RowPass& pass : plan.passes) {
    if (o.vector_width == 1)
      pass.vectorized = false;
    else if (scans_on_vectors(pass))
      pass.vectorized = true;
  }
  const size_t n = k.ranges.size(), m = k.reduction_ranges.size();
  const int64_t rows = product(k.ranges, 0, n);
  const int64_t router = m ? product(k.reduction_ranges, 0, m - 1) : 1;
  const int64_t rinner = m ? k.reduction_ranges[m - 1] : 1;
  const int64_t rsize = router * rinner;
  const bool split =
      plan.single_pass && o.threads > 1 && rows < o.threads && rsize >= o.split_threshold;
  std::string s;
  if (!split) {
    s += parallel_for(o.threads, rows * rsize * static_cast<int64_t>(plan.passes.size()),
                      o.parallel_threshold);
    s += "  for (int64_t o = 0; o < " + num(rows) + "; ++o) {\n";
    s += unflatten(k.ranges, n, "x", "o");
    s += "    using L = krt::L1;\n";
    for (const RowPass& pass : plan.passes) {
      for (int v : pass.cache_writes) {
        s += "    alignas(64) " + std::string(c_type(k.op(v)->dtype)) + " c" + std::to_string(v) +
             "[" + num(router * rinner) + "];\n";
      }
    }
    s += row_stage(k, plan, 0, "    ");
    for (size_t p = 0; p < plan.passes.size(); ++p) {
      if (!plan.passes[p].ops.empty())
        s += pass_loops(k, plan.passes[p], p, "0", num(router), "0", num(rinner), "    ", o);
      s += final_accumulators(k, plan.passes[p], "    ");
      s += row_stage(k, plan, p + 1, "    ");
    }
    return s + "  }\n";
  }
  const RowPass& pass = plan.passes.at(0);
  const std::string t = std::to_string(o.threads);
  s += "  for (int64_t o = 0; o < " + num(rows) + "; ++o) {\n";
  s += unflatten(k.ranges, n, "x", "o");
  s += "    using L = krt::L1;\n";
  s += row_stage(k, plan, 0, "    ");
  for (const kir::Op* r : pass.reduces)
    s += "    " + accumulator_type(k, *r, false) + " p" + id(r) + "[" + t + "];\n";
  s += "#pragma omp parallel for schedule(static, 1) num_threads(" + t + ")\n";
  s += "    for (int tid = 0; tid < " + t + "; ++tid) {\n";
  if (router >= o.threads) {
    s += "      const int64_t lo = " + num(router) + " * tid / " + t + ", hi = " + num(router) +
         " * (tid + 1) / " + t + ";\n";
    s += pass_loops(k, pass, 0, "lo", "hi", "0", num(rinner), "      ", o);
  } else {
    s += "      const int64_t chunk = ((" + num(rinner) + " + " + t + " - 1) / " + t +
         " + 7) / 8 * 8;\n";
    s += "      const int64_t lo = krt::imin(tid * chunk, " + num(rinner) +
         "), hi = krt::imin(lo + chunk, " + num(rinner) + ");\n";
    s += pass_loops(k, pass, 0, "0", num(router), "lo", "hi", "      ", o);
  }
  const bool vec = pass.vectorized && m > 0;
  for (const kir::Op* r : pass.reduces)
    s += "      p" + id(r) + "[tid] = a" + id(r) + (vec ? ".s" : "") + ";\n";
  s += "    }\n";
  for (const kir::Op* r : pass.reduces) {
    s += "    " + accumulator_type(k, *r, false) + " f" + id(r) + ";\n";
    s += "    for (int tid = 0; tid < " + t + "; ++tid) f" + id(r) + ".merge(p" + id(r) +
         "[tid]);\n";
  }
  s += row_stage(k, plan, 1, "    ");
  return s + "  }\n";
}

}  // namespace kiln::cpu
