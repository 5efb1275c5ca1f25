#include "core/sched/inline_pointwise.h"

#include <algorithm>
#include <map>

#include "core/expr/simplify.h"
#include "core/graph/tensor_type.h"
#include "core/lower/lower_context.h"
#include "core/sched/mask_ranges.h"

namespace kiln {
namespace {

std::string var(char prefix, size_t i) {
  return std::string(1, prefix) + std::to_string(i);
}

// Why `p` cannot be inlined, or "" when it can: one unmasked store, at the row-major index
// of its own loop variables, into a temporary nobody else writes and that is no output.
std::string inline_blocker(const LoopProgram& prog, size_t pi, const InlineOptions& o) {
  const LoopKernel& p = prog.kernels[pi];
  if (p.kind != LoopKernelKind::Pointwise) return "not pointwise";
  if (scatters(p)) return "scatters";
  const LoopOp* store = nullptr;
  for (const LoopOp& op : p.body) {
    if (op.kind != LoopOpKind::Store) continue;
    if (store) return "writes more than one value";
    store = &op;
  }
  if (!store) return "writes nothing";
  if (store->mask >= 0) return "masked store";
  if (static_cast<int>(p.body.size()) > o.max_body_ops) return "body too large to recompute";
  const int b = store->buffer;
  const LoopBuffer& buf = prog.buffers.at(static_cast<size_t>(b));
  if (buf.kind != BufferKind::Temp) return "writes an input";
  if (std::find(prog.outputs.begin(), prog.outputs.end(), b) != prog.outputs.end())
    return "graph output";
  if (buf.elements != shape_numel(p.ranges)) return "buffer larger than the loop";
  std::vector<Expr> vars;
  for (size_t i = 0; i < p.ranges.size(); ++i) vars.push_back(Expr::var(var('x', i)));
  const Expr rowmajor = contiguous_index(p.ranges, vars);
  const VarRanges r = loop_var_ranges(p);
  if (simplify(store->index, r).to_string() != simplify(rowmajor, r).to_string())
    return "stores out of loop order";
  for (const LoopOp& op : p.body)
    if (op.kind == LoopOpKind::Load && op.buffer == b) return "reads its own output";
  // An index check must see every element, as the unfused kernel does: a reader that reads
  // part of the buffer would let an out-of-range index elsewhere pass silently.
  for (const LoopOp& op : p.body)
    if (op.kind == LoopOpKind::CheckIndex) return "checks indices";
  // Integer division, modulo and power fail on some operands; under a masked read the
  // masked-off lanes compute on placeholder values and must not fail the launch.
  const bool can_fail = std::any_of(p.body.begin(), p.body.end(), [](const LoopOp& op) {
    return op.kind == LoopOpKind::Math && !is_floating(op.dtype) &&
           (op.name == "floordiv" || op.name == "truncdiv" || op.name == "mod" ||
            op.name == "fmod" || op.name == "pow");
  });
  int readers = 0;
  for (size_t k = 0; k < prog.kernels.size(); ++k) {
    if (k == pi) continue;
    const auto writes = kernel_writes(prog.kernels[k]);
    if (std::find(writes.begin(), writes.end(), b) != writes.end()) return "buffer written twice";
    const auto reads = kernel_reads(prog.kernels[k]);
    if (std::find(reads.begin(), reads.end(), b) == reads.end()) continue;
    if (prog.kernels[k].kind == LoopKernelKind::Extern) return "read by a library call";
    if (k < pi) return "read before it is written";
    for (const LoopOp& op : prog.kernels[k].body)
      if (can_fail && op.kind == LoopOpKind::Load && op.buffer == b && op.mask >= 0)
        return "integer division under a masked read";
    ++readers;
  }
  if (readers == 0) return "no readers";
  if (readers > o.max_readers) return "too many readers";
  return "";
}

// Replaces each load of `buffer` in `c` with the body of producer `p`, its loop variables
// bound to the coordinates the load's index names.
void inline_into(LoopKernel& c, const LoopKernel& p, int buffer, DType buffer_dtype) {
  std::vector<LoopOp> body;
  std::map<int, int> renamed;  // consumer SSA id -> id in the new body
  int next = 0;
  for (const LoopOp& op : c.body) next = std::max(next, op.id + 1);
  auto fresh = [&] { return next++; };
  // Appends an op under a fresh id; returns the id.
  auto push = [&](LoopOp op) {
    op.id = fresh();
    body.push_back(std::move(op));
    return body.back().id;
  };
  auto rename_args = [&](LoopOp& op) {
    for (int& a : op.args) a = renamed.at(a);
    if (op.mask >= 0) op.mask = renamed.at(op.mask);
  };
  std::map<std::string, Expr> t_names;  // consumer tN -> renamed tN
  const Shape strides = contiguous_strides(p.ranges);
  for (const LoopOp& original : c.body) {
    LoopOp op = original;
    rename_args(op);
    op.index = substitute(op.index, t_names);
    if (!defines_value(op)) {
      body.push_back(std::move(op));
      continue;
    }
    const int old_id = op.id;
    if (op.kind != LoopOpKind::Load || op.buffer != buffer) {
      const int id = push(std::move(op));
      renamed[old_id] = id;
      t_names["t" + std::to_string(old_id)] = Expr::var("t" + std::to_string(id));
      continue;
    }
    // The producer's coordinates of element `index`, then its body over them.
    std::map<std::string, Expr> bind;
    for (size_t i = 0; i < p.ranges.size(); ++i) {
      Expr coord = floordiv(op.index, Expr::constant(strides[i]));
      if (i > 0) coord = mod(coord, Expr::constant(p.ranges[i]));
      bind[var('x', i)] = coord;
    }
    std::map<int, int> pmap;
    std::map<int, DType> ptype;  // producer SSA id -> its dtype
    int value = -1;
    DType value_dtype = buffer_dtype;
    for (const LoopOp& pop : p.body) {
      if (pop.kind == LoopOpKind::Store) {
        value = pmap.at(pop.args.at(0));
        value_dtype = ptype.at(pop.args.at(0));
        continue;
      }
      ptype[pop.id] = pop.dtype;
      LoopOp q = pop;
      for (int& a : q.args) a = pmap.at(a);
      if (q.mask >= 0) q.mask = pmap.at(q.mask);
      q.index = substitute(q.index, bind);
      q.id = fresh();
      pmap[pop.id] = q.id;
      bind["t" + std::to_string(pop.id)] = Expr::var("t" + std::to_string(q.id));
      // Under a masked read, the producer's loads are masked too: off-mask lanes may index
      // anywhere.
      if (q.kind == LoopOpKind::Load && op.mask >= 0) {
        if (q.mask >= 0) {
          q.mask = push(make_loop_op(LoopOpKind::Math, DType::Bool, {op.mask, q.mask}, "and"));
        } else {
          q.mask = op.mask;
          q.other = 0;
        }
      }
      body.push_back(std::move(q));
    }
    // The value goes through the buffer's dtype as a stored one would, then the load's.
    auto cast = [&](int v, DType from, DType to) {
      return from == to ? v : push(make_loop_op(LoopOpKind::Cast, to, {v}));
    };
    value = cast(cast(value, value_dtype, buffer_dtype), buffer_dtype, op.dtype);
    if (op.mask >= 0) {
      LoopOp other = make_loop_op(LoopOpKind::Const, op.dtype);
      other.value = op.other;
      value = push(make_loop_op(LoopOpKind::Where, op.dtype, {op.mask, value, push(other)}));
    }
    renamed[old_id] = value;
    t_names["t" + std::to_string(old_id)] = Expr::var("t" + std::to_string(value));
  }
  // Dense ids in order, and indices in canonical form under the consumer's ranges.
  std::map<int, int> dense;
  std::map<std::string, Expr> dense_t;
  int id = 0;
  for (LoopOp& op : body) {
    for (int& a : op.args) a = dense.at(a);
    if (op.mask >= 0) op.mask = dense.at(op.mask);
    op.index = substitute(op.index, dense_t);
    if (defines_value(op)) {
      dense[op.id] = id;
      dense_t["t" + std::to_string(op.id)] = Expr::var("t" + std::to_string(id));
      op.id = id++;
    }
  }
  c.body = std::move(body);
  simplify_indices(c);
}

}  // namespace

InlineOptions inline_options(const ScheduleOptions& schedule) {
  const auto clamp = [](int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, 0, 1 << 20)); };
  return {clamp(schedule.max_readers), clamp(schedule.max_inline_ops)};
}

InlineReport inline_pointwise(LoopProgram& prog, const InlineOptions& options) {
  InlineReport report;
  for (size_t pi = 0; pi < prog.kernels.size();) {
    const std::string why = inline_blocker(prog, pi, options);
    if (!why.empty()) {
      if (prog.kernels[pi].kind == LoopKernelKind::Pointwise)
        report.kept.push_back({prog.kernels[pi].name, "", FusionCategory::Realized, why});
      ++pi;
      continue;
    }
    const LoopKernel p = prog.kernels[pi];
    int buffer = -1;
    for (const LoopOp& op : p.body)
      if (op.kind == LoopOpKind::Store) buffer = op.buffer;
    const DType dtype = prog.buffers.at(static_cast<size_t>(buffer)).dtype;
    for (size_t k = pi + 1; k < prog.kernels.size(); ++k) {
      const auto reads = kernel_reads(prog.kernels[k]);
      if (std::find(reads.begin(), reads.end(), buffer) != reads.end())
        inline_into(prog.kernels[k], p, buffer, dtype);
    }
    prog.kernels.erase(prog.kernels.begin() + static_cast<std::ptrdiff_t>(pi));
    ++report.inlined;
  }
  return report;
}

}  // namespace kiln
