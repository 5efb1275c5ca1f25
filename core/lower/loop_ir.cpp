#include "core/lower/loop_ir.h"

#include <algorithm>
#include <set>

namespace kiln {
namespace {

void collect_expr_vars(const Expr& e, std::set<std::string>& out) {
  if (e.kind() == ExprKind::Var) out.insert(e.name());
  for (const Expr& o : e.operands()) collect_expr_vars(o, out);
}

void add_once(std::vector<int>& list, int buffer) {
  if (std::find(list.begin(), list.end(), buffer) == list.end()) list.push_back(buffer);
}

}  // namespace

LoopOp make_loop_op(LoopOpKind kind, DType dtype, std::vector<int> args, std::string name) {
  LoopOp op;
  op.kind = kind;
  op.dtype = dtype;
  op.args = std::move(args);
  op.name = std::move(name);
  return op;
}

VarRanges loop_var_ranges(const LoopKernel& k) {
  VarRanges r;
  auto upto = [](int64_t size) { return Interval{0, std::max<int64_t>(size - 1, 0)}; };
  for (size_t i = 0; i < k.ranges.size(); ++i) r["x" + std::to_string(i)] = upto(k.ranges[i]);
  for (size_t i = 0; i < k.reduction_ranges.size(); ++i)
    r["r" + std::to_string(i)] = upto(k.reduction_ranges[i]);
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::CheckIndex) r["t" + std::to_string(op.id)] = upto(op.number);
  return r;
}

int64_t extern_attr(const LoopKernel& k, const std::string& key) {
  for (const auto& [name, value] : k.attrs)
    if (name == key) return value;
  return 1;
}

bool scatters(const LoopKernel& k) {
  return std::any_of(k.body.begin(), k.body.end(),
                     [](const LoopOp& op) { return op.kind == LoopOpKind::Scatter; });
}

bool scans(const LoopKernel& k) {
  return std::any_of(k.body.begin(), k.body.end(),
                     [](const LoopOp& op) { return op.kind == LoopOpKind::Scan; });
}

std::vector<int> kernel_reads(const LoopKernel& k) {
  std::vector<int> reads;
  for (int b : k.extern_inputs) add_once(reads, b);
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::Load || op.kind == LoopOpKind::Scatter) add_once(reads, op.buffer);
  return reads;
}

std::vector<int> kernel_writes(const LoopKernel& k) {
  std::vector<int> writes;
  for (int b : k.extern_outputs) add_once(writes, b);
  for (const LoopOp& op : k.body)
    if (op.kind == LoopOpKind::Store || op.kind == LoopOpKind::Scatter) add_once(writes, op.buffer);
  return writes;
}

bool reads_only_where_written(const LoopKernel& k, int read, int written) {
  if (k.kind != LoopKernelKind::Pointwise || read == written) return false;
  const LoopOp* store = nullptr;
  for (const LoopOp& op : k.body) {
    if (op.kind != LoopOpKind::Store || op.buffer != written) continue;
    if (store || op.mask >= 0) return false;
    store = &op;
  }
  if (!store) return false;
  std::set<std::string> vars;
  for (const Expr* e : {&store->index}) collect_expr_vars(*e, vars);
  for (const std::string& v : vars)
    if (v[0] == 't') return false;  // an address computed from data
  const std::string at = store->index.to_string();
  bool reads = false, stored = false;
  for (const LoopOp& op : k.body) {
    if (&op == store) stored = true;
    if (op.kind != LoopOpKind::Load || op.buffer != read) continue;
    // Every element must be read before the same iteration overwrites it.
    if (stored || op.mask >= 0 || op.index.to_string() != at) return false;
    reads = true;
  }
  return reads;
}

}  // namespace kiln
