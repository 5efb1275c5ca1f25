#include "plugins/kir_support/row_plan.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace kiln::kir_support {
namespace {

using kir::OpKind;

// The values an op reads: operands, mask, and values named in its index (tN).
std::vector<int> inputs_of(const kir::Op& op) {
  std::vector<int> in = op.args;
  if (op.mask >= 0) in.push_back(op.mask);
  std::set<std::string> vars;
  collect_vars(op.index, vars);
  for (const auto& v : vars)
    if (v[0] == 't') in.push_back(std::stoi(v.substr(1)));
  return in;
}

bool costly(const kir::Op& op) {
  static const std::set<std::string> calls = {"sin",  "cos",   "tan",   "asin",   "acos",  "atan",
                                              "sinh", "cosh",  "tanh",  "asinh",  "acosh", "atanh",
                                              "exp",  "expm1", "log",   "log1p",  "log2",  "log10",
                                              "erf",  "pow",   "atan2", "sigmoid"};
  return op.kind == kir::OpKind::Math && calls.contains(op.name);
}

bool names_reduction_var(const kir::Op& op) {
  std::set<std::string> vars;
  collect_vars(op.index, vars);
  return std::any_of(vars.begin(), vars.end(), [](const std::string& v) { return v[0] == 'r'; });
}

}  // namespace

void collect_vars(const kir::Expr& e, std::set<std::string>& out) {
  if (e.kind == kir::Expr::Var) out.insert(e.name);
  for (const auto& o : e.operands) collect_vars(o, out);
}

RowPlan plan_rows(const kir::Kernel& k, int64_t max_cache_bytes) {
  std::map<int, int> level;   // value -> how many reductions deep it is
  std::set<int> per_element;  // values that vary along the reduction
  std::map<int, const kir::Op*> def;
  int passes = 1;
  bool scanned = false;
  struct Placed {
    const kir::Op* op;
    int level;
    bool element;
  };
  std::vector<Placed> placed;
  for (const kir::Op& op : k.body) {
    int lv = 0;
    bool element = names_reduction_var(op);
    for (int in : inputs_of(op)) {
      if (!level.contains(in)) throw std::runtime_error("a value is used before it is defined");
      lv = std::max(lv, level.at(in));
      element = element || per_element.contains(in);
    }
    if (op.kind == OpKind::Reduce) {
      passes = std::max(passes, lv + 1);
      placed.push_back({&op, lv, true});
      level[op.id] = lv + 1;
      def[op.id] = &op;
      continue;
    }
    if (op.kind == OpKind::Extract) element = false;
    scanned = scanned || op.kind == OpKind::Scan;
    element = element || op.kind == OpKind::Scan;
    if (element) passes = std::max(passes, lv + 1);
    placed.push_back({&op, lv, element});
    if (op.kind == OpKind::Store) continue;
    level[op.id] = lv;
    def[op.id] = &op;
    if (element) per_element.insert(op.id);
  }
  if (scanned && passes > 1) throw std::runtime_error("a kernel that scans has no reduce");
  // Per-element values worth keeping between passes: their computation calls a library
  // function and an op of a later level reads them.
  std::set<int> cached;
  int64_t row_elements = 1;
  for (int64_t r : k.reduction_ranges) row_elements *= r;
  std::set<int> expensive;
  int64_t cache_bytes = 0;
  for (const kir::Op& op : k.body) {
    if (op.kind == OpKind::Store || !per_element.contains(op.id)) continue;
    bool e = costly(op);
    for (int in : inputs_of(op)) e = e || expensive.contains(in);
    if (e) expensive.insert(op.id);
    for (int in : inputs_of(op)) {
      const kir::Op* d = def.at(in);
      // The budget covers all of a kernel's arrays together (they share the thread's stack).
      const int64_t bytes = row_elements * kir::dtype_size(d->dtype);
      if (expensive.contains(in) && level.at(in) < level.at(op.id) && !cached.contains(in) &&
          cache_bytes + bytes <= max_cache_bytes && d->dtype != kir::DType::Bool) {
        cached.insert(in);
        cache_bytes += bytes;
      }
    }
  }
  RowPlan plan;
  plan.passes.resize(static_cast<size_t>(passes));
  plan.stages.resize(static_cast<size_t>(passes) + 1);
  for (const Placed& p : placed) {
    if (!p.element) {
      plan.stages[static_cast<size_t>(p.level)].push_back(p.op);
      continue;
    }
    RowPass& pass = plan.passes[static_cast<size_t>(p.level)];
    if (p.op->kind == OpKind::Scan) {
      pass.in_order = true;
      pass.vectorized = false;
    }
    if (p.op->kind == OpKind::Reduce) {
      pass.reduces.push_back(p.op);
      static const std::set<std::string> lanewise = {"sum", "prod", "max", "min", "any", "welford"};
      // Arg lanes keep positions as wide as the values they compare (4 or 8 bytes).
      const kir::Op* operand = def.at(p.op->args.at(0));
      const size_t bytes = kir::dtype_size(operand->dtype);
      const bool arg = p.op->name == "argmax" || p.op->name == "argmin";
      const bool arg_lanes = arg && (bytes == 4 || bytes == 8) && row_elements < (int64_t{1} << 31);
      pass.vectorized = pass.vectorized && (lanewise.contains(p.op->name) || arg_lanes);
    }
    plan.single_pass = plan.single_pass && p.op->kind != OpKind::Store;
  }
  plan.single_pass = plan.single_pass && passes == 1;
  // Each pass runs its reduces, per-element stores, index checks (whose failure is their
  // effect, read or not) and values kept for later, and whatever per-element values those
  // need: read back when an earlier pass kept them, else recomputed from the row's elements.
  for (size_t lv = 0; lv < plan.passes.size(); ++lv) {
    RowPass& pass = plan.passes[lv];
    std::set<int> needed;
    std::set<const kir::Op*> roots;
    for (const Placed& p : placed) {
      const bool kept = p.op->kind != OpKind::Store && cached.contains(p.op->id);
      if (p.element && static_cast<size_t>(p.level) == lv &&
          (p.op->kind == OpKind::Reduce || p.op->kind == OpKind::Store ||
           p.op->kind == OpKind::CheckIndex || kept))
        roots.insert(p.op);
      if (kept && static_cast<size_t>(p.level) == lv) pass.cache_writes.insert(p.op->id);
    }
    std::vector<const kir::Op*> ops;
    for (auto it = k.body.rbegin(); it != k.body.rend(); ++it) {
      const kir::Op& op = *it;
      const bool root = roots.contains(&op);
      const bool wanted = root || (op.kind != OpKind::Store && op.kind != OpKind::Reduce &&
                                   per_element.contains(op.id) && needed.contains(op.id));
      if (!wanted) continue;
      ops.push_back(&op);
      for (int in : inputs_of(op)) {
        if (cached.contains(in) && static_cast<size_t>(level.at(in)) < lv)
          pass.cache_reads.insert(in);
        else if (per_element.contains(in))
          needed.insert(in);
        else
          pass.row_values.insert(in);
      }
    }
    pass.ops.assign(ops.rbegin(), ops.rend());
  }
  return plan;
}

}  // namespace kiln::kir_support
