#include "core/sched/inline_pointwise.h"

#include <algorithm>
#include <map>

#include "core/expr/simplify.h"
#include "core/graph/tensor_type.h"

namespace kiln {
namespace {

std::string var(char prefix, size_t i) {
  return std::string(1, prefix) + std::to_string(i);
}

// The ranges the simplifier may assume inside kernel `k`.
VarRanges ranges_of(const LoopKernel& k) {
  VarRanges r;
  for (size_t i = 0; i < k.ranges.size(); ++i)
    r[var('x', i)] = {0, std::max<int64_t>(k.ranges[i] - 1, 0)};
  for (size_t i = 0; i < k.reduction_ranges.size(); ++i)
    r[var('r', i)] = {0, std::max<int64_t>(k.reduction_ranges[i] - 1, 0)};
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::CheckIndex)
      r["t" + std::to_string(op.id)] = {0, std::max<int64_t>(op.number - 1, 0)};
  return r;
}

// Why `p` cannot be inlined, or "" when it can: one unmasked store, at the row-major index
// of its own loop variables, into a temporary nobody else writes and that is no output.
std::string inline_blocker(const LoopProgram& prog, size_t pi, const InlineOptions& o) {
  const LoopKernel& p = prog.kernels[pi];
  if (p.kind != LoopKernelKind::Pointwise) return "not pointwise";
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
  Expr rowmajor = Expr::constant(0);
  const Shape strides = contiguous_strides(p.ranges);
  for (size_t i = 0; i < p.ranges.size(); ++i)
    if (p.ranges[i] != 1) rowmajor = rowmajor + vars[i] * Expr::constant(strides[i]);
  const VarRanges r = ranges_of(p);
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
    if (op.kind == LoopOpKind::Store) {
      body.push_back(std::move(op));
      continue;
    }
    const int old_id = op.id;
    if (op.kind != LoopOpKind::Load || op.buffer != buffer) {
      op.id = fresh();
      renamed[old_id] = op.id;
      t_names["t" + std::to_string(old_id)] = Expr::var("t" + std::to_string(op.id));
      body.push_back(std::move(op));
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
    int value = -1;
    for (const LoopOp& pop : p.body) {
      if (pop.kind == LoopOpKind::Store) {
        value = pmap.at(pop.args.at(0));
        continue;
      }
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
          LoopOp both;
          both.kind = LoopOpKind::Math;
          both.name = "and";
          both.dtype = DType::Bool;
          both.args = {op.mask, q.mask};
          both.id = fresh();
          q.mask = both.id;
          body.push_back(both);
        } else {
          q.mask = op.mask;
          q.other = 0;
        }
      }
      body.push_back(std::move(q));
    }
    // The value goes through the buffer's dtype as a stored one would, then the load's.
    auto cast = [&](int v, DType from, DType to) {
      if (from == to) return v;
      LoopOp k;
      k.kind = LoopOpKind::Cast;
      k.dtype = to;
      k.args = {v};
      k.id = fresh();
      body.push_back(k);
      return k.id;
    };
    DType vt = DType::F32;
    for (const LoopOp& b : body)
      if (b.id == value) vt = b.dtype;
    value = cast(cast(value, vt, buffer_dtype), buffer_dtype, op.dtype);
    if (op.mask >= 0) {
      LoopOp other;
      other.kind = LoopOpKind::Const;
      other.dtype = op.dtype;
      other.value = op.other;
      other.id = fresh();
      body.push_back(other);
      LoopOp w;
      w.kind = LoopOpKind::Where;
      w.dtype = op.dtype;
      w.args = {op.mask, value, other.id};
      w.id = fresh();
      body.push_back(w);
      value = w.id;
    }
    renamed[old_id] = value;
    t_names["t" + std::to_string(old_id)] = Expr::var("t" + std::to_string(value));
  }
  // Dense ids in order, and indices in canonical form under the consumer's ranges.
  std::map<int, int> dense;
  int id = 0;
  for (LoopOp& op : body) {
    for (int& a : op.args) a = dense.at(a);
    if (op.mask >= 0) op.mask = dense.at(op.mask);
    std::map<std::string, Expr> t;
    for (const auto& [from, to] : dense)
      t["t" + std::to_string(from)] = Expr::var("t" + std::to_string(to));
    op.index = substitute(op.index, t);
    if (op.kind != LoopOpKind::Store) {
      dense[op.id] = id;
      op.id = id++;
    }
  }
  c.body = std::move(body);
  const VarRanges r = ranges_of(c);
  for (LoopOp& op : c.body)
    if (op.kind == LoopOpKind::Load || op.kind == LoopOpKind::Store || op.kind == LoopOpKind::Index)
      op.index = simplify(op.index, r);
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
        report.kept.push_back(prog.kernels[pi].name + ": " + why);
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
