#include "plugins/cpp_openmp/column_reduction_codegen.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "plugins/cpp_openmp/loop_text.h"
#include "plugins/cpp_openmp/reduction_codegen.h"

namespace kiln::cpu {
namespace {

using kir::OpKind;
using kir_support::RowPass;
using kir_support::RowPlan;

std::string id(const kir::Op* op) {
  return std::to_string(op->id);
}

bool defines_value(const kir::Op* op) {
  return op->kind != OpKind::Store && op->kind != OpKind::Scatter;
}

struct BlockShape {
  size_t n = 0, m = 0;
  int64_t width = 0;   // the innermost output dim
  int64_t outer = 0;   // the other output dims, flattened
  int64_t router = 0;  // the reduction dims but the innermost, flattened
  int64_t rinner = 0;
  int64_t block = 0;   // outputs per block (a multiple of the lanes)
  int64_t blocks = 0;  // per outer index
  // Ops fixed along the innermost output dim (invariant_along): stage values among them (a
  // bag's offsets and their checks) are one scalar per task, computed before the block's
  // outputs, instead of an array entry each; pass ops among them once per reduction step.
  std::set<int> fixed;
};

// Rows picked per step are read a few vectors at a time (kPickedRowVectors per visit of a row),
// every step's row again for the next few: the rows of a bag stream in side by side (the
// prefetcher follows each), where reading each whole row in turn leaves memory idle at each
// row's start (faster on an embedding bag's generated C++ timed alone). The steps' hoisted
// values (row numbers, masks) are computed once into a table of up to kTableSteps steps,
// replayed per group of vectors.
constexpr int64_t kPickedRowVectors = 8;
constexpr int64_t kTableSteps = 256;

// Visits (a step's row over one group of vectors) between a row's prefetch and its read: the
// hardware prefetcher cannot guess the next step's row, so without it each visit starts with
// a miss to memory (bench/results/2026-12-07-cpu-row-prefetch: an embedding bag's kernel
// alone, 4 to 32 visits).
constexpr int64_t kPrefetchVisits = 16;

// Vectors of outputs per block where rows are picked per step.
constexpr int64_t kPickedRowBlock = 64;

// A load of a row picked per step: indirect, and moving along the outputs (not among the ops
// `fixed` along them).
bool picked_row_load(const kir::Op& op, const std::set<int>& fixed) {
  return op.kind == OpKind::Load && !fixed.contains(op.id) && mentions_indirect(op.index);
}

// picks_rows, given the ops fixed along the innermost output dim.
bool picks_rows(const kir::Kernel& k, const std::set<int>& fixed) {
  return !fixed.empty() && std::any_of(k.body.begin(), k.body.end(), [&](const kir::Op& op) {
    return picked_row_load(op, fixed);
  });
}

BlockShape shape_of(const kir::Kernel& k, const CodegenOptions& o) {
  BlockShape s;
  s.n = k.ranges.size();
  s.m = k.reduction_ranges.size();
  s.width = k.ranges[s.n - 1];
  s.outer = product(k.ranges, 0, s.n - 1);
  s.router = product(k.reduction_ranges, 0, s.m - 1);
  s.rinner = k.reduction_ranges[s.m - 1];
  const int64_t lanes = o.vector_width;
  s.fixed = invariant_along(k, "x" + std::to_string(s.n - 1));
  // Rows picked per step are read a group of vectors at a time (kPickedRowVectors), whatever
  // the block: a block as wide as the rows computes each step's row number and mask once.
  const int64_t vectors = picks_rows(k, s.fixed) ? kPickedRowBlock : o.column_block_vectors;
  s.block = std::min(vectors, (s.width + lanes - 1) / lanes) * lanes;
  // Smaller blocks until every thread has one.
  while (s.block > lanes && s.outer * ((s.width + s.block - 1) / s.block) < o.threads)
    s.block = (s.block / lanes + 1) / 2 * lanes;
  s.blocks = (s.width + s.block - 1) / s.block;
  return s;
}

// Every value a stage defined before `level` (reduce results included), read back for the
// output `j` of the block.
std::string reload_stage_values(const RowPlan& plan, size_t level, const BlockShape& sh) {
  std::string s;
  for (size_t st = 0; st < level; ++st) {
    if (st > 0) {
      for (const kir::Op* r : plan.passes[st - 1].reduces)
        s += "      const " + std::string(c_type(r->dtype)) + " s" + id(r) + " = s" + id(r) +
             "_b[j];\n";
    }
    for (const kir::Op* op : plan.stages[st]) {
      if (defines_value(op) && !sh.fixed.contains(op->id))
        s += "      const " + std::string(c_type(op->dtype)) + " s" + id(op) + " = s" + id(op) +
             "_b[j];\n";
    }
  }
  return s;
}

// The stage values fixed along the block's outputs, once per task, before its outputs.
std::string fixed_stage_values(const kir::Kernel& k, const RowPlan& plan, const BlockShape& sh) {
  std::string s;
  for (const auto& stage : plan.stages)
    for (const kir::Op* op : stage)
      if (sh.fixed.contains(op->id)) s += "    " + op_c(k, *op, {"", false, "s"}) + "\n";
  return s;
}

// Stage `level` for each output of the block, its values kept in the block's arrays.
std::string stage_loop(const kir::Kernel& k, const RowPlan& plan, size_t level,
                       const BlockShape& sh) {
  std::string s = "    for (int64_t j = 0; j < xe - xb; ++j) {\n";
  s += "      const int64_t x" + std::to_string(sh.n - 1) + " = xb + j;\n";
  s += reload_stage_values(plan, level, sh);
  for (size_t p = 0; p < level; ++p) {
    for (const kir::Op* r : plan.passes[p].reduces)
      s += "      const auto& f" + id(r) + " = f" + id(r) + "_b[j];\n";
  }
  s += row_stage(k, plan, level, "      ", sh.fixed);
  if (level > 0) {
    for (const kir::Op* r : plan.passes[level - 1].reduces)
      s += "      s" + id(r) + "_b[j] = s" + id(r) + ";\n";
  }
  for (const kir::Op* op : plan.stages[level])
    if (defines_value(op) && !sh.fixed.contains(op->id))
      s += "      s" + id(op) + "_b[j] = s" + id(op) + ";\n";
  return s + "    }\n";
}

// A step's reduction position from (ro, r<m-1>): every reduction dim, and rlin.
std::string step_position(const kir::Kernel& k, const BlockShape& sh, const std::string& indent) {
  const std::string ri = "r" + std::to_string(sh.m - 1);
  return indent + "(void)ro;\n" + unflatten(k.reduction_ranges, sh.m - 1, "r", "ro") + indent +
         "const int64_t rlin = ro * " + num(sh.rinner) + " + " + ri + ";\n" + indent +
         "(void)rlin;\n";
}

// `auto column_pass<p> = [&](lanes, ro, r, x, accumulators...)`: pass `p`'s body at one
// reduction position and one vector (or lane) of outputs. Values in `hoisted` were computed
// for the reduction position before it (as s<id>) and are splat into lanes.
std::string pass_body(const kir::Kernel& k, const RowPass& pass, size_t p, const BlockShape& sh,
                      const std::set<int>& hoisted = {}, const std::map<int, int>& masks = {}) {
  const std::string xi = "x" + std::to_string(sh.n - 1);
  const std::string ri = "r" + std::to_string(sh.m - 1);
  std::string params;
  for (const kir::Op* r : pass.reduces)
    params += ", " + accumulator_type(k, *r, true) + "& a" + id(r);
  std::string s = "    auto column_pass" + std::to_string(p) +
                  " = [&](auto lanes, int64_t ro, int64_t " + ri + ", int64_t " + xi + params +
                  ") __attribute__((always_inline)) {\n";
  s += "      using L = decltype(lanes);\n" + step_position(k, sh, "      ");
  for (int v : pass.row_values) {
    const std::string t = c_type(k.op(v)->dtype), name = std::to_string(v);
    s += "      const auto v" + name + " = " +
         (sh.fixed.contains(v) ? "krt::splat<L, " + t + ">(s" + name + ");\n"
                               : "krt::load<L, " + t + ">(s" + name + "_b, " + xi + " - xb, 1);\n");
  }
  ExprContext ctx{xi, false, "v"};
  ctx.row_scalars = &hoisted;
  for (const kir::Op* op : pass.ops) {
    // With several reduces, each adds only where its own mask is on.
    const auto mask = masks.find(op->id);
    const std::string guard = mask != masks.end() && masks.size() > 1
                                  ? "if (s" + std::to_string(mask->second) + ") "
                                  : "";
    s += "      " + guard +
         (hoisted.contains(op->id) ? splat_row_value(k, op->id) : op_c(k, *op, ctx)) + "\n";
  }
  return s + "    };\n";
}

// The ops of `pass` that do not vary along the innermost output dim (an embedding bag's row
// numbers and their checks): computed once per reduction position, not once per vector.
std::set<int> invariant_ops(const RowPass& pass, const BlockShape& sh) {
  std::set<int> out;
  for (const kir::Op* op : pass.ops)
    if (sh.fixed.contains(op->id)) out.insert(op->id);
  return out;
}

// The hoisted mask under which reduce `r` takes anything at a reduction position: its value is
// where(mask, v, identity), so where the mask is off the position adds nothing (x + 0, x * 1,
// max(x, -inf) are x, NaN included; the sum never holds -0 to lose, starting at +0). -1 where
// there is none (welford counts every position).
int step_mask(const kir::Kernel& k, const kir::Op& r, const std::set<int>& hoisted) {
  const kir::Op* value = k.op(r.args.at(0));
  if (!value || value->kind != OpKind::Where || !hoisted.contains(value->args.at(0))) return -1;
  const kir::Op* other = k.op(value->args.at(2));
  if (!other || other->kind != OpKind::Const || !kir::is_float(value->dtype)) return -1;
  const std::string& v = other->literal;
  const bool identity = r.name == "sum"    ? std::strtod(v.c_str(), nullptr) == 0
                        : r.name == "prod" ? std::strtod(v.c_str(), nullptr) == 1
                        : r.name == "max"  ? v == "-inf"
                        : r.name == "min"  ? v == "inf"
                                           : false;
  return identity ? value->args.at(0) : -1;
}

// Each reduce's step mask, or empty where a position must run anyway: a reduce without one,
// or an op past the hoisted ones that can fail (an index check) or writes.
std::map<int, int> step_masks(const kir::Kernel& k, const RowPass& pass,
                              const std::set<int>& hoisted) {
  std::map<int, int> out;
  for (const kir::Op* op : pass.ops) {
    if (hoisted.contains(op->id)) continue;
    if (op->kind == OpKind::CheckIndex || op->kind == OpKind::Store || op->kind == OpKind::Scatter)
      return {};
  }
  for (const kir::Op* r : pass.reduces) {
    const int mask = step_mask(k, *r, hoisted);
    if (mask < 0) return {};
    out[r->id] = mask;
  }
  return out;
}

// The values `op` reads: its arguments, its mask, the indirect values of its index (t<N>).
void add_reads(const kir::Op& op, std::set<int>& reads) {
  for (int a : op.args) reads.insert(a);
  if (op.mask >= 0) reads.insert(op.mask);
  std::set<std::string> vars;
  kir_support::collect_vars(op.index, vars);
  for (const std::string& v : vars)
    if (v[0] == 't') reads.insert(std::stoi(v.substr(1)));
}

// Per reduction position, before the vectors: the hoisted ops of `pass` as scalars, reading
// stage values (the same for every output of the block, since they do not vary along it)
// from the block's first output.
std::string hoisted_scalars(const kir::Kernel& k, const RowPass& pass, const std::set<int>& ids,
                            const BlockShape& sh) {
  std::set<int> reads;
  std::string ops;
  for (const kir::Op* op : pass.ops) {
    if (!ids.contains(op->id)) continue;
    add_reads(*op, reads);
    ops += "        " + op_c(k, *op, {"", false, "s"}) + "\n";
  }
  std::string s = unflatten(k.reduction_ranges, sh.m - 1, "r", "ro");
  for (int r : reads) {
    const kir::Op* def = k.op(r);
    if (ids.contains(r) || !def || sh.fixed.contains(r)) continue;
    s += "        const " + std::string(c_type(def->dtype)) + " s" + std::to_string(r) + " = s" +
         std::to_string(r) + "_b[0];\n";
  }
  return s + ops;
}

// Whether pass `p` may read rows picked per reduction step (an embedding bag's): it has
// hoisted values and an indirect load that moves along the outputs.
bool reads_picked_rows(const RowPass& pass, const std::set<int>& hoisted) {
  return !hoisted.empty() && std::any_of(pass.ops.begin(), pass.ops.end(), [&](const kir::Op* op) {
    return picked_row_load(*op, hoisted);
  });
}

// The hoisted values the rest of the pass reads (as s<id>), and the step masks' guards.
std::set<int> hoisted_reads(const RowPass& pass, const std::set<int>& hoisted,
                            const std::map<int, int>& masks) {
  std::set<int> reads;
  for (const kir::Op* op : pass.ops)
    if (!hoisted.contains(op->id)) add_reads(*op, reads);
  for (const auto& [r, mask] : masks) reads.insert(mask);
  std::set<int> out;
  for (int r : reads)
    if (hoisted.contains(r)) out.insert(r);
  return out;
}

// The vector and tail loops of pass `p` over outputs [from, to) of the block.
std::string vector_loops(const RowPass& pass, size_t p, const BlockShape& sh,
                         const std::string& from, const std::string& to,
                         const std::string& indent) {
  const std::string ri = "r" + std::to_string(sh.m - 1);
  const std::string body = "column_pass" + std::to_string(p);
  std::string vector_args, tail_args;
  for (const kir::Op* r : pass.reduces) {
    vector_args += ", a" + id(r) + "_v[c]";
    tail_args += ", a" + id(r) + "_t[t]";
  }
  std::string s = indent + "int64_t xv = " + from + ";\n";
  s += indent + "for (int64_t c = (xv - xb) / krt::kLanes; xv + krt::kLanes <= " + to +
       "; xv += krt::kLanes, ++c) " + body + "(krt::LV{}, ro, " + ri + ", xv" + vector_args +
       ");\n";
  s += indent + "for (int64_t t = xv - full; xv < " + to + "; ++xv, ++t) " + body +
       "(krt::L1{}, ro, " + ri + ", xv" + tail_args + ");\n";
  return s;
}

// A recorded step's values, read back from the table for `step`: its reduction position and
// the hoisted values the pass reads. A step recorded under one mask has it on: a constant,
// so the select of the row's load folds away (g++ made it a masked load, slower on a bag's
// rows).
std::string recorded_step(const kir::Kernel& k, const BlockShape& sh, const std::set<int>& kept,
                          int on, const std::string& indent) {
  std::string s = indent + "const int64_t ro = step_ro[step], r" + std::to_string(sh.m - 1) +
                  " = step_r[step];\n";
  for (int v : kept) {
    s += indent + "const " + std::string(c_type(k.op(v)->dtype)) + " s" + std::to_string(v) +
         (v == on ? " = true;\n" : " = h" + std::to_string(v) + "[step];\n");
  }
  return s;
}

// The prefetches of a recorded step's rows over outputs [x, x + count): one per picked-row
// load read contiguously along the outputs whose row numbers are all the step's recorded
// values or the block's (a gather by an index that moves along the outputs has none to
// read back). Empty where there is none.
std::string row_prefetches(const RowPass& pass, const BlockShape& sh, const std::set<int>& hoisted,
                           const std::set<int>& kept) {
  const std::string xi = "x" + std::to_string(sh.n - 1);
  ExprContext ctx{"", false, "s"};
  ctx.row_scalars = &hoisted;
  const auto known = [&](const kir::Op& op) {
    std::set<std::string> vars;
    kir_support::collect_vars(op.index, vars);
    return std::all_of(vars.begin(), vars.end(), [&](const std::string& v) {
      if (v[0] != 't') return true;
      const int id = std::stoi(v.substr(1));
      return kept.contains(id) || (sh.fixed.contains(id) && !hoisted.contains(id));
    });
  };
  std::string s;
  for (const kir::Op* op : pass.ops) {
    if (hoisted.contains(op->id) || !picked_row_load(*op, hoisted) || !known(*op)) continue;
    if (coefficient(op->index, xi) != std::optional<int64_t>(1)) continue;
    s += "        krt::prefetch_span(" + op->name + ", " + expr_c(op->index, ctx) + ", count);\n";
  }
  return s;
}

// Fetches rows kPrefetchVisits visits ahead of the replay, in its order (per group of vectors,
// every step): `fetch_next` asks for the next visit not asked for yet.
std::string prefetch_cursor(const kir::Kernel& k, const BlockShape& sh, const std::set<int>& kept,
                            int on, const std::string& prefetches) {
  const std::string group = num(kPickedRowVectors) + " * krt::kLanes";
  std::string s = "      auto fetch = [&](int64_t step, int64_t x" + std::to_string(sh.n - 1) +
                  ", int64_t count) {\n";
  s += recorded_step(k, sh, kept, on, "        ");
  s += step_position(k, sh, "        ");
  s += prefetches + "      };\n";
  s += "      int64_t fetch_x = xb, fetch_step = 0;\n";
  s += "      auto fetch_next = [&]() {\n";
  s += "        if (fetch_x < xe) fetch(fetch_step, fetch_x, krt::imin(fetch_x + " + group +
       ", xe) - fetch_x);\n";
  s += "        if (++fetch_step == steps) {\n          fetch_step = 0;\n          fetch_x += " +
       group + ";\n        }\n      };\n";
  s += "      for (int64_t a = 0; a < " + num(kPrefetchVisits) + "; ++a) fetch_next();\n";
  return s;
}

// The step table's replay: per group of kPickedRowVectors vectors, every recorded step, with
// the rows of later visits prefetched.
std::string replay_steps(const kir::Kernel& k, const RowPass& pass, size_t p, const BlockShape& sh,
                         const std::set<int>& hoisted, const std::map<int, int>& masks,
                         const std::set<int>& kept, int on) {
  std::string s = "    auto replay" + std::to_string(p) + " = [&](int64_t steps) {\n";
  const std::string prefetches = row_prefetches(pass, sh, hoisted, kept);
  if (!prefetches.empty()) {
    s += "      if (steps == 0) return;\n";
    s += prefetch_cursor(k, sh, kept, on, prefetches);
  }
  s += "      for (int64_t gb = xb; gb < xe; gb += " + num(kPickedRowVectors) +
       " * krt::kLanes) {\n";
  s += "        const int64_t ge = krt::imin(gb + " + num(kPickedRowVectors) +
       " * krt::kLanes, xe);\n";
  s += "        for (int64_t step = 0; step < steps; ++step) {\n";
  if (!prefetches.empty()) s += "          fetch_next();\n";
  s += recorded_step(k, sh, kept, on, "          ");
  // The hoisted ops only other hoisted ops read stay behind in the recording loop.
  RowPass replayed = pass;
  std::erase_if(replayed.ops, [&](const kir::Op* op) {
    return hoisted.contains(op->id) && !kept.contains(op->id);
  });
  s += pass_body(k, replayed, p, sh, hoisted, masks);
  s += vector_loops(pass, p, sh, "gb", "ge", "          ");
  return s + "        }\n      }\n    };\n";
}

// Pass `p` over the block: the reduction outermost, the outputs in vectors (one accumulator
// per vector of outputs, one per output in the tail), then each output's accumulator.
std::string pass_block(const kir::Kernel& k, const RowPass& pass, size_t p, const BlockShape& sh) {
  const std::string ri = "r" + std::to_string(sh.m - 1);
  std::string s;
  for (const kir::Op* r : pass.reduces) {
    const std::string acc = accumulator_type(k, *r, true);
    s += "    " + acc + " a" + id(r) + "_v[" + num(sh.block) + " / krt::kLanes];\n";
    s += "    " + acc + " a" + id(r) + "_t[krt::kLanes];\n";
  }
  const std::set<int> hoisted = invariant_ops(pass, sh);
  // A position where every reduce's mask is off adds nothing: its vectors are skipped.
  const std::map<int, int> masks = step_masks(k, pass, hoisted);
  std::string skip;
  std::set<int> distinct;
  if (!masks.empty()) {
    for (const auto& [r, mask] : masks) distinct.insert(mask);
    std::string any;
    for (int mask : distinct) any += (any.empty() ? "s" : " || s") + std::to_string(mask);
    skip = "        if (!(" + any + ")) continue;\n";
  }
  const bool table = reads_picked_rows(pass, hoisted);
  const std::set<int> kept = table ? hoisted_reads(pass, hoisted, masks) : std::set<int>{};
  const int on = distinct.size() == 1 ? *distinct.begin() : -1;  // every recorded step's mask
  if (table) {
    s += "    int64_t step_ro[" + num(kTableSteps) + "], step_r[" + num(kTableSteps) + "];\n";
    for (int v : kept)
      if (v != on)
        s += "    " + std::string(c_type(k.op(v)->dtype)) + " h" + std::to_string(v) + "[" +
             num(kTableSteps) + "];\n";
    s += replay_steps(k, pass, p, sh, hoisted, masks, kept, on);
    s += "    int64_t steps = 0;\n";
  }
  s += "    for (int64_t ro = 0; ro < " + num(sh.router) + "; ++ro) {\n";
  s += "      for (int64_t " + ri + " = 0; " + ri + " < " + num(sh.rinner) + "; ++" + ri + ") {\n";
  s += hoisted_scalars(k, pass, hoisted, sh);
  s += skip;
  if (table) {
    s += "        step_ro[steps] = ro;\n        step_r[steps] = " + ri + ";\n";
    for (int v : kept)
      if (v != on) s += "        h" + std::to_string(v) + "[steps] = s" + std::to_string(v) + ";\n";
    s += "        if (++steps == " + num(kTableSteps) + ") {\n          replay" +
         std::to_string(p) + "(steps);\n          steps = 0;\n        }\n";
  } else {
    s += pass_body(k, pass, p, sh, hoisted, masks);
    s += vector_loops(pass, p, sh, "xb", "xe", "        ");
  }
  s += "      }\n    }\n";
  if (table) s += "    replay" + std::to_string(p) + "(steps);\n";
  if (!pass.reduces.empty()) {
    s += "    for (int64_t j = 0; j < xe - xb; ++j) {\n";
    for (const kir::Op* r : pass.reduces) {
      s += "      f" + id(r) + "_b[j] = xb + j < full ? a" + id(r) +
           "_v[j / krt::kLanes].w.lane(int(j % krt::kLanes)) : a" + id(r) +
           "_t[xb + j - full].s;\n";
    }
    s += "    }\n";
  }
  return s;
}

// Values per output the row-major last pass may keep for every output of the kernel (on the
// calling thread's stack, shared by the team).
constexpr int64_t kMaxRowMajorValues = 16384;

// Whether the last pass only writes elements (softmax over dim 0 normalizing): it then runs
// row-major over whole rows after the others, as a pointwise kernel would. A column block's
// writes hop a row's length between elements, so a fresh output's pages were first touched out
// of order (each write a page fault away from the last; 24 ms of 56 for softmax over dim 0 of
// [8192, 1024] at 2 threads, most of a 62 ms call at 16), and the prefetcher stops at each page.
bool last_pass_row_major(const RowPlan& plan, const BlockShape& sh, const CodegenOptions& o) {
  if (plan.passes.size() < 2 || !plan.stages.back().empty()) return false;
  const RowPass& last = plan.passes.back();
  if (!last.reduces.empty()) return false;
  const bool writes = std::any_of(last.ops.begin(), last.ops.end(),
                                  [](const kir::Op* op) { return op->kind == OpKind::Store; });
  const int64_t kept = sh.outer * sh.width * static_cast<int64_t>(last.row_values.size());
  return writes && kept <= kMaxRowMajorValues && o.threads > 1 &&
         sh.outer * sh.width * sh.router * sh.rinner >= o.parallel_threshold;
}

// The last pass over every row, rows in parallel: its per-output values from the arrays the
// blocks filled (g<v>, outer x width).
std::string row_major_pass(const kir::Kernel& k, const RowPlan& plan, const BlockShape& sh,
                           const CodegenOptions& o) {
  const RowPass& last = plan.passes.back();
  const size_t p = plan.passes.size() - 1;
  const int64_t rsize = sh.router * sh.rinner;
  const std::string ri = "r" + std::to_string(sh.m - 1);
  std::string s = parallel_for(o.threads, sh.outer * sh.width * rsize, o.parallel_threshold);
  s += "  for (int64_t row = 0; row < " + num(sh.outer * rsize) + "; ++row) {\n";
  s += "    const int64_t o = row / " + num(rsize) + ", rr = row % " + num(rsize) + ";\n";
  s += unflatten(k.ranges, sh.n - 1, "x", "o");
  s += "    const int64_t xb = 0;\n    using L = krt::L1;\n";
  for (int v : last.row_values) {
    s += "    const " + std::string(c_type(k.op(v)->dtype)) + "* s" + std::to_string(v) + "_b = g" +
         std::to_string(v) + " + o * " + num(sh.width) + ";\n";
  }
  BlockShape rows = sh;  // every value from the arrays the blocks filled
  rows.fixed.clear();
  s += pass_body(k, last, p, rows);
  s += "    const int64_t ro = rr / " + num(sh.rinner) + ", " + ri + " = rr % " + num(sh.rinner) +
       ";\n";
  s += "    int64_t xv = 0;\n";
  s += "    for (; xv + krt::kLanes <= " + num(sh.width) + "; xv += krt::kLanes) column_pass" +
       std::to_string(p) + "(krt::LV{}, ro, " + ri + ", xv);\n";
  s += "    for (; xv < " + num(sh.width) + "; ++xv) column_pass" + std::to_string(p) +
       "(krt::L1{}, ro, " + ri + ", xv);\n";
  return s + "  }\n";
}

}  // namespace

bool picks_rows(const kir::Kernel& k) {
  const size_t n = k.ranges.size();
  return n > 0 && picks_rows(k, invariant_along(k, "x" + std::to_string(n - 1)));
}

bool prefers_columns(const kir::Kernel& k, const RowPlan& plan, const CodegenOptions& o) {
  const size_t n = k.ranges.size(), m = k.reduction_ranges.size();
  if (o.vector_width < 2 || n == 0 || m == 0 || k.ranges[n - 1] < o.vector_width) return false;
  const std::string xi = "x" + std::to_string(n - 1), ri = "r" + std::to_string(m - 1);
  int across = 0, along = 0;
  for (const RowPass& pass : plan.passes) {
    if (!pass.vectorized || !pass.cache_reads.empty() || !pass.cache_writes.empty()) return false;
    for (const kir::Op* r : pass.reduces) {
      if (r->name != "sum" && r->name != "prod" && r->name != "max" && r->name != "min" &&
          r->name != "welford")
        return false;
    }
    for (const kir::Op* op : pass.ops) {
      if (op->kind == OpKind::Scatter) return false;
      if (op->kind != OpKind::Load) continue;
      const auto cx = coefficient(op->index, xi);
      if (mentions_indirect(op->index)) {
        // Rows picked per reduction step (an embedding bag's), read along the outputs: the
        // row form would gather one row per lane.
        if (cx == 1 && indirects_uniform(k, op->index, xi)) ++across;
        continue;
      }
      const auto cr = coefficient(op->index, ri);
      if (!cx || !cr) continue;
      // A load that does not move along the outputs is one value for the whole block.
      if (*cr == 1 && *cx != 0) ++along;
      if (*cx == 1 && *cr != 0 && *cr != 1) ++across;
    }
  }
  return across > 0 && along == 0;
}

std::string column_reduction_kernel(const kir::Kernel& k, const RowPlan& plan,
                                    const CodegenOptions& o) {
  const BlockShape sh = shape_of(k, o);
  const int64_t rsize = sh.router * sh.rinner;
  const bool row_major = last_pass_row_major(plan, sh, o);
  const size_t block_passes = plan.passes.size() - (row_major ? 1 : 0);
  std::string s;
  if (row_major) {
    for (int v : plan.passes.back().row_values)
      s += "  " + std::string(c_type(k.op(v)->dtype)) + " g" + std::to_string(v) + "[" +
           num(sh.outer * sh.width) + "];\n";
  }
  s += parallel_for(o.threads, sh.outer * sh.width * rsize * static_cast<int64_t>(block_passes),
                    o.parallel_threshold);
  s += "  for (int64_t task = 0; task < " + num(sh.outer * sh.blocks) + "; ++task) {\n";
  s += "    const int64_t o = task / " + num(sh.blocks) + ";\n";
  s += unflatten(k.ranges, sh.n - 1, "x", "o");
  s += "    const int64_t xb = task % " + num(sh.blocks) + " * " + num(sh.block) +
       ", xe = krt::imin(xb + " + num(sh.block) + ", " + num(sh.width) + ");\n";
  s += "    const int64_t full = xb + (xe - xb) / krt::kLanes * krt::kLanes;\n    (void)full;\n";
  s += "    using L = krt::L1;\n";
  // Per output of the block: every stage value and every reduce's accumulator.
  for (size_t st = 0; st < plan.stages.size(); ++st) {
    for (const kir::Op* op : plan.stages[st]) {
      if (defines_value(op) && !sh.fixed.contains(op->id))
        s += "    " + std::string(c_type(op->dtype)) + " s" + id(op) + "_b[" + num(sh.block) +
             "];\n";
    }
  }
  s += fixed_stage_values(k, plan, sh);
  for (const RowPass& pass : plan.passes) {
    for (const kir::Op* r : pass.reduces) {
      s += "    " + std::string(c_type(r->dtype)) + " s" + id(r) + "_b[" + num(sh.block) + "];\n";
      s += "    " + accumulator_type(k, *r, false) + " f" + id(r) + "_b[" + num(sh.block) + "];\n";
    }
  }
  s += stage_loop(k, plan, 0, sh);
  for (size_t p = 0; p < block_passes; ++p) {
    // A scope per pass: each pass over picked rows declares its own step table.
    s += "    {\n" + pass_block(k, plan.passes[p], p, sh) + "    }\n";
    s += stage_loop(k, plan, p + 1, sh);
  }
  if (row_major) {
    s += "    for (int64_t j = 0; j < xe - xb; ++j) {\n";
    for (int v : plan.passes.back().row_values) {
      const std::string name = std::to_string(v);
      s += "      g" + name + "[o * " + num(sh.width) + " + xb + j] = s" + name +
           (sh.fixed.contains(v) ? "" : "_b[j]") + ";\n";
    }
    s += "    }\n  }\n";
    return s + row_major_pass(k, plan, sh, o);
  }
  return s + "  }\n";
}

}  // namespace kiln::cpu
