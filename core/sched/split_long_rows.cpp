#include "core/sched/split_long_rows.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "core/graph/tensor_type.h"

namespace kiln {
namespace {

constexpr const char* kSplittable[] = {"sum", "max", "min", "prod", "any", "welford"};

// Whether `e` walks the row.
bool along_row(const Expr& e) {
  return mentions(e, {"r0"});
}

// Whether `e` names a value of the body (tN: a gathered index, a checked one).
bool names_value(const Expr& e) {
  if (e.kind() == ExprKind::Var) return e.name().starts_with("t");
  return std::any_of(e.operands().begin(), e.operands().end(), names_value);
}

std::string x(size_t i) {
  return "x" + std::to_string(i);
}

// The SSA operands of `op`: its arguments and its mask.
std::vector<int> operands(const LoopOp& op) {
  std::vector<int> out = op.args;
  if (op.mask >= 0) out.push_back(op.mask);
  return out;
}

// The original kernel, read once: where each value is defined, which ops vary along the row,
// and the level of each reduction.
struct Analysis {
  const LoopKernel& k;
  std::map<int, size_t> at;       // SSA id -> body position
  std::vector<bool> per_element;  // by position: varies along the reduction dim
  std::vector<int> after;         // by position: levels that must be done before it
  std::map<int, int> reduce_of;   // Extract id -> the welford reduce it reads
  int levels = 0;

  explicit Analysis(const LoopKernel& kernel) : k(kernel) {}

  // The reduce whose result value `id` is (a reduce, or an extract of one), else -1.
  int result_of(int id) const {
    const LoopOp& op = k.body[at.at(id)];
    if (op.kind == LoopOpKind::Reduce) return id;
    if (op.kind == LoopOpKind::Extract) return reduce_of.at(id);
    return -1;
  }
  int level(int reduce_id) const { return after[at.at(reduce_id)]; }
};

// Fills `a`; false when the kernel is not one this pass splits.
bool analyse(Analysis& a) {
  const LoopKernel& k = a.k;
  if (k.kind != LoopKernelKind::Reduction || k.reduction_ranges.size() != 1 || scatters(k) ||
      scans(k))
    return false;
  a.per_element.assign(k.body.size(), false);
  a.after.assign(k.body.size(), 0);
  for (size_t i = 0; i < k.body.size(); ++i) {
    const LoopOp& op = k.body[i];
    if (op.id >= 0) a.at[op.id] = i;
    if (op.kind == LoopOpKind::Reduce &&
        std::find(std::begin(kSplittable), std::end(kSplittable), op.name) == std::end(kSplittable))
      return false;
    // Values read through indices (gathers and their bounds checks) are not followed here:
    // such kernels stay whole.
    if (op.kind == LoopOpKind::CheckIndex || (has_index(op) && names_value(op.index))) return false;
    bool varies = has_index(op) && along_row(op.index);
    int after = 0;
    for (int o : operands(op)) {
      if (!a.at.contains(o)) return false;
      const size_t p = a.at[o];
      const LoopOp& from = k.body[p];
      if (from.kind == LoopOpKind::Reduce && from.name == "welford" &&
          op.kind != LoopOpKind::Extract)
        return false;  // a Welford state is read through its components only
      const int reduce = a.result_of(o);
      if (reduce >= 0) {
        after = std::max(after, a.level(reduce) + 1);
      } else {
        varies = varies || a.per_element[p];
        after = std::max(after, a.after[p]);
      }
    }
    if (op.kind == LoopOpKind::Extract) {
      if (op.args.size() != 1 || k.body[a.at[op.args[0]]].kind != LoopOpKind::Reduce) return false;
      a.reduce_of[op.id] = op.args[0];
      after = a.level(op.args[0]) + 1;
      varies = false;
    }
    if (op.kind == LoopOpKind::Reduce) {
      a.levels = std::max(a.levels, after + 1);
      varies = false;
    }
    // A value stored once per row cannot vary along it.
    if (op.kind == LoopOpKind::Store && !along_row(op.index) && varies) return false;
    a.per_element[i] = varies;
    a.after[i] = after;
  }
  return a.levels > 0;
}

// The step of `index` along r0 (its value at r0 = 1 less at r0 = 0, every x at 0); the
// kernel's indices name no other variables (analyse).
int64_t step_along_row(const LoopKernel& k, const Expr& index) {
  std::map<std::string, int64_t> at;
  for (size_t i = 0; i < k.ranges.size(); ++i) at[x(i)] = 0;
  at["r0"] = 1;
  const int64_t one = evaluate(index, at);
  at["r0"] = 0;
  return one - evaluate(index, at);
}

// Work units of `k` before a split, and how many it needs: its rows against min_rows, or its
// estimated blocks against min_blocks.
std::pair<int64_t, int64_t> work(const LoopKernel& k, int64_t rows, const SplitRowsOptions& o) {
  if (o.min_rows > 0) return {rows, o.min_rows};
  bool along = true;  // the first load that walks the row reads it contiguously
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::Load && along_row(op.index)) {
      along = step_along_row(k, op.index) == 1;
      break;
    }
  const int64_t per_block = along ? 1 : std::max<int64_t>(o.column_rows, 1);
  return {(rows + per_block - 1) / per_block, o.min_blocks};
}

// Chunks per row: the fewest that give the work needed, else as many as there can be, each
// chunk min_chunk elements at least; 0 when the kernel has work enough or its row does not
// split.
int64_t chunks(const LoopKernel& k, int64_t rows, const SplitRowsOptions& o) {
  const auto [have, need] = work(k, rows, o);
  if (need <= 0 || have >= need) return 0;
  const int64_t n = k.reduction_ranges[0];
  int64_t most = 0;
  for (int64_t s = 2; s * o.min_chunk <= n; ++s) {
    if (n % s != 0) continue;
    if (have * s >= need) return s;
    most = s;
  }
  return most;
}

// A softmax's sum of exp(a - m) whose level does nothing else, m being `a`'s max one level
// before: each chunk's partial kernel finds its own max and the sum of exp(a - its max) (one
// walk of the chunk where the plugin folds them, GPUs do), and the max's final kernel
// rescales the chunks' sums, S = sum_k s_k exp(m_k - m), so the sum's level reads the input no
// more. A chunk of -inf adds nothing (its own sum may be NaN: exp(-inf + inf)); a +inf makes
// the sum NaN, as in two passes; a row of -inf gets a sum of 0 where two passes give NaN,
// and its softmax is NaN either way (exp(-inf + inf) over the sum).
struct FoldedSum {
  const LoopOp* sum = nullptr;
  int max = -1;    // the max reduce's id
  int value = -1;  // a: the value both reduce
};

// Folded sums by the level of their max.
std::map<int, FoldedSum> folded_sums(const Analysis& a) {
  const LoopKernel& k = a.k;
  auto op_of = [&](int id) -> const LoopOp* {
    return a.at.contains(id) ? &k.body[a.at.at(id)] : nullptr;
  };
  std::map<int, int> reduces_at;  // level -> reduces there
  for (size_t i = 0; i < k.body.size(); ++i)
    if (k.body[i].kind == LoopOpKind::Reduce) ++reduces_at[a.after[i]];
  std::map<int, FoldedSum> out;
  for (size_t i = 0; i < k.body.size(); ++i) {
    const LoopOp& sum = k.body[i];
    if (sum.kind != LoopOpKind::Reduce || sum.name != "sum" || reduces_at[a.after[i]] != 1 ||
        (sum.dtype != DType::F32 && sum.dtype != DType::F64))
      continue;
    const LoopOp* exp = op_of(sum.args.at(0));
    if (!exp || exp->kind != LoopOpKind::Math || exp->name != "exp") continue;
    const LoopOp* d = op_of(exp->args.at(0));
    if (!d || d->kind != LoopOpKind::Math || d->name != "sub" || d->mask >= 0) continue;
    const LoopOp* max = op_of(d->args.at(1));
    if (!max || max->kind != LoopOpKind::Reduce || max->name != "max" || max->dtype != sum.dtype ||
        max->mask >= 0 || max->args.at(0) != d->args.at(0) || a.level(max->id) + 1 != a.after[i])
      continue;
    out[a.level(max->id)] = {&sum, max->id, d->args[0]};
  }
  return out;
}

// What one split makes: the new kernels and buffers, built op by op.
class Splitter {
 public:
  Splitter(const Analysis& a, LoopProgram& program, int64_t s)
      : a_(a),
        k_(a.k),
        program_(program),
        s_(s),
        rows_(shape_numel(k_.ranges)),
        folded_(folded_sums(a)) {
    n_ = k_.reduction_ranges[0];
    for (const LoopOp& op : k_.body) next_id_ = std::max(next_id_, op.id + 1);
    for (const auto& [level, f] : folded_) folded_levels_.insert(level + 1);
    last_level_ = a_.levels - 1;
    while (folded_levels_.contains(last_level_)) --last_level_;
  }

  std::vector<LoopKernel> split() {
    std::vector<LoopKernel> out;
    for (int level = 0; level < a_.levels; ++level) {
      if (folded_levels_.contains(level)) continue;
      out.push_back(partial(level));
      out.push_back(combine(level));
    }
    std::set<size_t> stores;
    for (size_t i = 0; i < k_.body.size(); ++i)
      if (k_.body[i].kind == LoopOpKind::Store && a_.per_element[i]) stores.insert(i);
    // Stores along the row that read no reduction stay per element, as they were.
    if (!stores.empty()) out.push_back(elementwise(stores));
    return out;
  }

 private:
  const Analysis& a_;
  const LoopKernel& k_;
  LoopProgram& program_;
  int64_t s_, rows_, n_ = 0;
  int next_id_ = 0;
  std::map<int, FoldedSum> folded_;                  // by the level of the max
  std::set<int> folded_levels_;                      // the sums' levels: no kernels of their own
  int last_level_ = 0;                               // the last level with kernels
  std::map<int, std::vector<int>> partial_buffers_;  // reduce id -> [state] or [mean, m2]
  std::map<int, std::vector<int>> final_buffers_;    // reduce id -> [value] or [mean, m2, n]
  // While a final kernel is built: extract id -> the combined value it reads instead, and the
  // original ids the kernel already defines (its level's reduces).
  std::map<int, int> replaced_;
  std::set<int> present_;

  int buffer(const std::string& suffix, DType dtype, int64_t elements) {
    LoopBuffer b;
    b.name = k_.name + suffix;
    b.dtype = dtype;
    b.elements = elements;
    b.kind = BufferKind::Temp;
    program_.buffers.push_back(b);
    return static_cast<int>(program_.buffers.size()) - 1;
  }

  // The row's index among rows_, with the kernel's own dims from x{shift} on.
  Expr row(size_t shift) const {
    Expr e = Expr::constant(0);
    int64_t stride = 1;
    for (size_t i = k_.ranges.size(); i-- > 0;) {
      e = e + Expr::var(x(i + shift)) * Expr::constant(stride);
      stride *= k_.ranges[i];
    }
    return simplify(e);
  }

  LoopKernel fresh(const std::string& suffix, LoopKernelKind kind, Shape ranges,
                   Shape reduction) const {
    LoopKernel out;
    out.name = k_.name + suffix;
    out.origin = k_.origin;
    out.kind = kind;
    out.ranges = std::move(ranges);
    out.reduction_ranges = std::move(reduction);
    return out;
  }

  int add(LoopKernel& to, LoopOp op) {
    if (defines_value(op)) op.id = next_id_++;
    to.body.push_back(std::move(op));
    return to.body.back().id;
  }

  int load(LoopKernel& to, int buf, const Expr& index, DType dtype, int id = -1) {
    LoopOp op = make_loop_op(LoopOpKind::Load, dtype);
    op.buffer = buf;
    op.index = simplify(index);
    if (id >= 0) {
      op.id = id;
      to.body.push_back(std::move(op));
      return id;
    }
    return add(to, std::move(op));
  }

  void store(LoopKernel& to, int buf, const Expr& index, int value, DType dtype) {
    LoopOp op = make_loop_op(LoopOpKind::Store, dtype, {value});
    op.buffer = buf;
    op.index = simplify(index);
    to.body.push_back(std::move(op));
  }

  int constant(LoopKernel& to, double value, DType dtype) {
    LoopOp op = make_loop_op(LoopOpKind::Const, dtype);
    op.value = value;
    return add(to, std::move(op));
  }

  int math(LoopKernel& to, const std::string& name, DType dtype, std::vector<int> args) {
    return add(to, make_loop_op(LoopOpKind::Math, dtype, std::move(args), name));
  }

  // Appends the original ops `roots` need, in body order: indices through `to_vars`, results
  // of levels before `level` loaded from their final buffers at the row (dims from
  // x{shift}), and values `replaced_` names read in their place.
  void copy_needed(LoopKernel& to, const std::set<size_t>& roots, int level,
                   const std::map<std::string, Expr>& to_vars, size_t shift) {
    std::set<size_t> needed;
    std::vector<size_t> work(roots.begin(), roots.end());
    auto leaf = [&](size_t p) {
      const int reduce = a_.k.body[p].id >= 0 ? a_.result_of(a_.k.body[p].id) : -1;
      return reduce >= 0 && a_.level(reduce) < level;
    };
    while (!work.empty()) {
      const size_t p = work.back();
      work.pop_back();
      if (!needed.insert(p).second) continue;
      const int id = k_.body[p].id;
      if (leaf(p) || replaced_.contains(id) || present_.contains(id)) continue;
      for (int o : operands(k_.body[p])) work.push_back(a_.at.at(o));
    }
    for (size_t p : needed) {
      const LoopOp& op = k_.body[p];
      if (replaced_.contains(op.id) || present_.contains(op.id)) continue;
      if (leaf(p)) {
        const int reduce = a_.result_of(op.id);
        const auto& finals = final_buffers_.at(reduce);
        const int buf = op.kind == LoopOpKind::Extract ? finals.at(static_cast<size_t>(op.number))
                                                       : finals.at(0);
        load(to, buf, row(shift), op.dtype, op.id);
        continue;
      }
      LoopOp copy = op;
      for (int& arg : copy.args)
        if (replaced_.contains(arg)) arg = replaced_.at(arg);
      if (copy.mask >= 0 && replaced_.contains(copy.mask)) copy.mask = replaced_.at(copy.mask);
      if (has_index(copy)) copy.index = simplify(substitute(copy.index, to_vars));
      to.body.push_back(std::move(copy));
    }
  }

  // Level `level`'s reductions over one chunk of each row: [S, rows] reduce [n / S].
  LoopKernel partial(int level) {
    Shape ranges{s_};
    ranges.insert(ranges.end(), k_.ranges.begin(), k_.ranges.end());
    const int64_t chunk = n_ / s_;
    LoopKernel out =
        fresh("_part" + std::to_string(level), LoopKernelKind::Reduction, ranges, {chunk});
    std::map<std::string, Expr> to_vars;
    for (size_t i = 0; i < k_.ranges.size(); ++i) to_vars[x(i)] = Expr::var(x(i + 1));
    to_vars["r0"] = Expr::var("x0") * Expr::constant(chunk) + Expr::var("r0");
    std::set<size_t> roots;
    for (size_t i = 0; i < k_.body.size(); ++i)
      if (k_.body[i].kind == LoopOpKind::Reduce && a_.after[i] == level) roots.insert(i);
    copy_needed(out, roots, level, to_vars, 1);
    const Expr at = Expr::var("x0") * Expr::constant(rows_) + row(1);
    for (size_t i : roots) {
      const LoopOp& r = k_.body[i];
      std::vector<int>& bufs = partial_buffers_[r.id];
      const std::string tag = "_r" + std::to_string(r.id);
      if (r.name == "welford") {
        for (int c = 0; c < 2; ++c) {
          bufs.push_back(buffer(tag + (c ? "_m2_part" : "_mean_part"), r.dtype, s_ * rows_));
          LoopOp e = make_loop_op(LoopOpKind::Extract, r.dtype, {r.id});
          e.number = c;
          store(out, bufs.back(), at, add(out, std::move(e)), r.dtype);
        }
      } else {
        bufs.push_back(buffer(tag + "_part", r.dtype, s_ * rows_));
        store(out, bufs.back(), at, r.id, r.dtype);
      }
    }
    if (auto f = folded_.find(level); f != folded_.end()) {
      // The chunk's own sum of exp(a - its max).
      const LoopOp& sum = *f->second.sum;
      const DType t = sum.dtype;
      const int d = math(out, "sub", t, {f->second.value, f->second.max});
      const int s =
          add(out, make_loop_op(LoopOpKind::Reduce, t, {math(out, "exp", t, {d})}, "sum"));
      partial_buffers_[sum.id].push_back(
          buffer("_r" + std::to_string(sum.id) + "_part", t, s_ * rows_));
      store(out, partial_buffers_[sum.id][0], at, s, t);
    }
    return out;
  }

  // Level `level`'s results from the partial states: [rows] reduce [S]. The last level's
  // kernel also makes the stores made once per row.
  LoopKernel combine(int level) {
    LoopKernel out =
        fresh("_rows" + std::to_string(level), LoopKernelKind::Reduction, k_.ranges, {s_});
    const Expr part = Expr::var("r0") * Expr::constant(rows_) + row(0);
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const LoopOp& r = k_.body[i];
      if (r.kind != LoopOpKind::Reduce || a_.after[i] != level) continue;
      const std::vector<int>& parts = partial_buffers_.at(r.id);
      std::vector<int>& finals = final_buffers_[r.id];
      const std::string tag = "_r" + std::to_string(r.id);
      if (r.name != "welford") {
        LoopOp reduce = r;
        const int chunk_value = load(out, parts[0], part, r.dtype);
        reduce.args = {chunk_value};
        out.body.push_back(std::move(reduce));  // keeps its id: later row ops read it
        present_.insert(r.id);
        finals.push_back(buffer(tag, r.dtype, rows_));
        store(out, finals[0], row(0), r.id, r.dtype);
        if (auto f = folded_.find(level); f != folded_.end() && f->second.max == r.id)
          rescale_chunk_sums(out, f->second, chunk_value, part);
        continue;
      }
      // Chan's merge of S states of `chunk` elements each: the mean of the means, and the
      // M2s plus chunk * (mean_k - mean)^2.
      const DType t = r.dtype;
      const int mean_k = load(out, parts[0], part, t), m2_k = load(out, parts[1], part, t);
      const int mean = math(out, "div", t,
                            {add(out, make_loop_op(LoopOpKind::Reduce, t, {mean_k}, "sum")),
                             constant(out, static_cast<double>(s_), t)});
      const int d = math(out, "sub", t, {mean_k, mean});
      const int spread =
          math(out, "mul", t,
               {math(out, "mul", t, {d, d}), constant(out, static_cast<double>(n_ / s_), t)});
      const int m2 = add(
          out, make_loop_op(LoopOpKind::Reduce, t, {math(out, "add", t, {m2_k, spread})}, "sum"));
      const int count = constant(out, static_cast<double>(n_), t);
      const int values[] = {mean, m2, count};
      const char* names[] = {"_mean", "_m2", "_count"};
      for (int c = 0; c < 3; ++c) {
        finals.push_back(buffer(tag + names[c], t, rows_));
        store(out, finals.back(), row(0), values[c], t);
      }
      for (const auto& [extract, reduce] : a_.reduce_of)
        if (reduce == r.id) replaced_[extract] = values[k_.body[a_.at.at(extract)].number];
    }
    if (level == last_level_) {
      std::set<size_t> roots;
      for (size_t i = 0; i < k_.body.size(); ++i)
        if (k_.body[i].kind == LoopOpKind::Store && !a_.per_element[i]) roots.insert(i);
      // This level's results are in the kernel (its reduces keep their ids; extracts are
      // replaced), earlier ones loaded.
      copy_needed(out, roots, level, {}, 0);
    }
    // Both name values of this kernel only: later kernels load the level's results.
    present_.clear();
    replaced_.clear();
    return out;
  }

  // A folded sum from its chunks' sums and maxima (`chunk_max`, loaded by `out`):
  // sum_k s_k exp(m_k - m) over the chunks whose max is not -inf, stored as the sum's result;
  // this kernel's row ops read it.
  void rescale_chunk_sums(LoopKernel& out, const FoldedSum& f, int chunk_max, const Expr& part) {
    const LoopOp& sum = *f.sum;
    const DType t = sum.dtype;
    const int chunk_sum = load(out, partial_buffers_.at(sum.id)[0], part, t);
    const int scale = math(out, "exp", t, {math(out, "sub", t, {chunk_max, f.max})});
    const int empty = math(out, "eq", DType::Bool,
                           {chunk_max, constant(out, -std::numeric_limits<double>::infinity(), t)});
    const int term = math(out, "where", t,
                          {empty, constant(out, 0.0, t), math(out, "mul", t, {chunk_sum, scale})});
    const int total = add(out, make_loop_op(LoopOpKind::Reduce, t, {term}, "sum"));
    std::vector<int>& finals = final_buffers_[sum.id];
    finals.push_back(buffer("_r" + std::to_string(sum.id), t, rows_));
    store(out, finals[0], row(0), total, t);
    replaced_[sum.id] = total;
  }

  // The stores along the row, as a pointwise kernel over the whole space, its dims in the
  // first store's memory order: [rows..., n] when rows are contiguous, else [n, rows...]
  // (a softmax over dim 0 writes its columns' neighbours side by side).
  LoopKernel elementwise(const std::set<size_t>& stores) {
    const bool row_inner = step_along_row(k_, k_.body[*stores.begin()].index) == 1;
    Shape ranges = k_.ranges;
    ranges.insert(row_inner ? ranges.end() : ranges.begin(), n_);
    LoopKernel out = fresh("_each", LoopKernelKind::Pointwise, ranges, {});
    std::map<std::string, Expr> to_vars;
    if (row_inner) {
      to_vars["r0"] = Expr::var(x(k_.ranges.size()));
    } else {
      for (size_t i = 0; i < k_.ranges.size(); ++i) to_vars[x(i)] = Expr::var(x(i + 1));
      to_vars["r0"] = Expr::var("x0");
    }
    copy_needed(out, stores, a_.levels, to_vars, row_inner ? 0 : 1);
    return out;
  }
};

}  // namespace

SplitRowsOptions device_split_options(int64_t compute_units, int64_t warp_width) {
  SplitRowsOptions o;
  if (warp_width > 1) {
    o.min_blocks = 4 * std::max<int64_t>(compute_units, 0);
    o.column_rows = warp_width;
  }
  return o;
}

int split_long_rows(LoopProgram& program, const SplitRowsOptions& options) {
  if (options.min_rows <= 0 && options.min_blocks <= 0) return 0;
  int split = 0;
  std::vector<LoopKernel> kernels;
  for (LoopKernel& k : program.kernels) {
    Analysis a(k);
    const int64_t s = analyse(a) ? chunks(k, shape_numel(k.ranges), options) : 0;
    if (s == 0) {
      kernels.push_back(std::move(k));
      continue;
    }
    for (LoopKernel& part : Splitter(a, program, s).split()) kernels.push_back(std::move(part));
    ++split;
  }
  program.kernels = std::move(kernels);
  return split;
}

}  // namespace kiln
