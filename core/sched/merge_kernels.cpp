#include "core/sched/merge_kernels.h"

#include <map>

#include "core/expr/simplify.h"
#include "core/graph/tensor_type.h"
#include "core/sched/common_ops.h"
#include "core/sched/mask_ranges.h"
#include "core/sched/space_map.h"

namespace kiln {
namespace {

MergeOutcome failure(FusionCategory why, std::string detail) {
  MergeOutcome m;
  m.why = why;
  m.detail = std::move(detail);
  return m;
}

// Index pairs that should line up: `mapped`'s accesses of buffers `base` also touches.
std::vector<IndexHint> shared_indices(const LoopKernel& mapped, const LoopKernel& base) {
  std::vector<IndexHint> hints;
  for (const LoopOp& a : mapped.body) {
    if (a.kind != LoopOpKind::Load && a.kind != LoopOpKind::Store) continue;
    for (const LoopOp& b : base.body) {
      if ((b.kind == LoopOpKind::Load || b.kind == LoopOpKind::Store) && b.buffer == a.buffer)
        hints.emplace_back(a.index, b.index);
    }
  }
  return hints;
}

// `mapped` onto `base`'s loops: every point when the element counts allow, else its rows.
SpaceMapping map_onto(const LoopKernel& mapped, const LoopKernel& base) {
  const auto hints = shared_indices(mapped, base);
  SpaceMapping m = map_space(mapped, space_of(base), false, hints);
  if (!m.ok && base.kind == LoopKernelKind::Reduction && mapped.kind == LoopKernelKind::Pointwise) {
    SpaceMapping rows = map_space(mapped, space_of(base), true, hints);
    if (rows.ok) return rows;
  }
  return m;
}

// A pointwise kernel spread over a reduction's elements (an epilogue or prologue).
bool spreads_over_reduction(const LoopKernel& mapped, const SpaceMapping& m) {
  if (mapped.kind != LoopKernelKind::Pointwise) return false;
  for (const auto& [from, to] : m.bind)
    if (to.kind() == ExprKind::Var && to.name()[0] == 'r') return true;
  return false;
}

// "a,b" + "b,c" -> "a,b,c": the graph nodes a merged kernel computes, each once.
std::string joined_origins(const std::string& a, const std::string& b) {
  std::string out = a;
  size_t start = 0;
  while (start <= b.size()) {
    const size_t comma = std::min(b.find(',', start), b.size());
    const std::string item = b.substr(start, comma - start);
    if (!item.empty() && ("," + out + ",").find("," + item + ",") == std::string::npos)
      out += (out.empty() ? "" : ",") + item;
    start = comma + 1;
  }
  return out;
}

class BodyWriter {
 public:
  explicit BodyWriter(std::vector<LoopOp>& body) : body_(body) {}

  // Copies `k`'s ops under `bind`; loads of buffers in `forwarded` become the stored value.
  // Returns "" or why an access does not line up.
  std::string append(const LoopKernel& k, const std::map<std::string, Expr>& bind,
                     const VarRanges& ranges, const std::set<int>& dropped) {
    std::map<int, int> renamed;
    std::map<std::string, Expr> names = bind;
    for (const LoopOp& original : k.body) {
      LoopOp op = original;
      for (int& a : op.args) a = renamed.at(a);
      if (op.mask >= 0) op.mask = renamed.at(op.mask);
      op.index = simplify(substitute(op.index, names), ranges);
      if (op.kind == LoopOpKind::Store) {
        // A masked store writes part of the buffer: readers keep reading memory.
        if (op.mask >= 0) {
          forwarded_.erase(op.buffer);
          body_.push_back(std::move(op));
          continue;
        }
        forwarded_[op.buffer] = {op.index, op.args.at(0)};
        if (!dropped.contains(op.buffer)) body_.push_back(std::move(op));
        continue;
      }
      const int old = op.id;
      int value = -1;
      if (op.kind == LoopOpKind::Load && forwarded_.contains(op.buffer)) {
        const auto& [index, stored] = forwarded_.at(op.buffer);
        if (op.mask >= 0 || !(index == op.index)) {
          return "reads " + op.index.to_string() + " of a buffer written at " + index.to_string();
        }
        value = stored;
        if (body_dtype(stored) != op.dtype)
          value = push(make_loop_op(LoopOpKind::Cast, op.dtype, {stored}));
      } else {
        value = push(std::move(op));
      }
      renamed[old] = value;
      names["t" + std::to_string(old)] = Expr::var("t" + std::to_string(value));
    }
    return "";
  }

 private:
  int push(LoopOp op) {
    op.id = next_++;
    body_.push_back(std::move(op));
    return body_.back().id;
  }
  DType body_dtype(int id) const {
    for (const LoopOp& op : body_)
      if (op.id == id && op.kind != LoopOpKind::Store) return op.dtype;
    return DType::F32;
  }

  std::vector<LoopOp>& body_;
  std::map<int, std::pair<Expr, int>> forwarded_;  // buffer -> (store index, value)
  int next_ = 0;
};

}  // namespace

MergeOutcome merge_kernels(const LoopKernel& first, const LoopKernel& second,
                           const std::set<int>& dropped, const MergeOptions& options) {
  if (first.kind == LoopKernelKind::Extern || second.kind == LoopKernelKind::Extern)
    return failure(FusionCategory::Realized, "a library call");
  if (scatters(first) || scatters(second))
    return failure(FusionCategory::Realized, "scatters: other iterations read what it writes");
  if (scans(first) || scans(second))
    return failure(FusionCategory::Realized, "scans: each element needs the ones before it");
  const auto ops = static_cast<int64_t>(first.body.size() + second.body.size());
  if (ops > options.max_ops) {
    return failure(FusionCategory::TooLarge,
                   std::to_string(ops) + " ops, more than " + std::to_string(options.max_ops));
  }
  // The loops of the reduction (or of `first` when both are pointwise) carry the other body.
  const bool second_is_base =
      first.kind == LoopKernelKind::Pointwise && second.kind == LoopKernelKind::Reduction;
  const LoopKernel& base = second_is_base ? second : first;
  const LoopKernel& mapped = second_is_base ? first : second;
  const SpaceMapping m = map_onto(mapped, base);
  if (!m.ok) return failure(m.why, m.detail);
  if (base.kind == LoopKernelKind::Reduction && spreads_over_reduction(mapped, m) &&
      shape_numel(base.ranges) < options.min_rows) {
    return failure(FusionCategory::FewRows, std::to_string(shape_numel(base.ranges)) +
                                                " rows, fewer than " +
                                                std::to_string(options.min_rows));
  }
  std::map<std::string, Expr> identity;
  for (size_t i = 0; i < base.ranges.size(); ++i)
    identity["x" + std::to_string(i)] = Expr::var("x" + std::to_string(i));
  for (size_t i = 0; i < base.reduction_ranges.size(); ++i)
    identity["r" + std::to_string(i)] = Expr::var("r" + std::to_string(i));

  LoopKernel merged;
  merged.name = first.name;
  merged.origin = joined_origins(first.origin, second.origin);
  merged.kind = base.kind;
  merged.ranges = base.ranges;
  merged.reduction_ranges = base.reduction_ranges;
  const VarRanges ranges = loop_var_ranges(merged);
  BodyWriter writer(merged.body);
  const auto& first_bind = second_is_base ? m.bind : identity;
  const auto& second_bind = second_is_base ? identity : m.bind;
  if (std::string why = writer.append(first, first_bind, ranges, dropped); !why.empty())
    return failure(FusionCategory::DifferentOffset, why);
  if (std::string why = writer.append(second, second_bind, ranges, {}); !why.empty())
    return failure(FusionCategory::DifferentOffset, why);
  eliminate_common_ops(merged);
  // Check ranges were taken from the final body; indices simplify again with them.
  simplify_indices(merged);
  MergeOutcome out;
  out.kernel = std::move(merged);
  return out;
}

}  // namespace kiln
