// Ops that move data rather than compute it: creation (full, arange), cat and padding
// through masked loads with an explicit `other`, repeat through mod, and indexing
// (gather, index_select, embedding, index.Tensor) through checked indirect loads: an index
// out of range is reported by the kernel, never read.
#include "core/lower/advanced_index_at.h"
#include "core/lower/lower_context.h"
#include "core/ops/indexing.h"

namespace kiln {
namespace {

// full, full_like, fill, scalar_tensor, empty (zeros, as the reference makes them).
LowerFn filled(int value_arg) {
  return [value_arg](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    KernelBuilder kb = n.kernel(out.sizes);
    const bool int_value = value_arg >= 0 && !is_floating(out.dtype) &&
                           !std::holds_alternative<double>(n.args().at(value_arg));
    const double v = value_arg < 0 ? 0.0
                     : int_value   ? static_cast<double>(n.args().get_int(value_arg))
                                   : n.args().get_float(value_arg);
    if (int_value && static_cast<double>(static_cast<int64_t>(v)) != v) return false;
    n.store_output(kb, kb.constant(out.dtype, v));
    return true;
  };
}

bool lower_arange(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  bool fp = is_floating(out.dtype);
  for (int a : {0, 1, 2}) fp = fp || std::holds_alternative<double>(n.args().at(a));
  KernelBuilder kb = n.kernel(out.sizes);
  const DType c = fp ? DType::F64 : DType::I64;
  const int i = kb.cast(kb.index(kb.x(0)), c);
  const int start = kb.constant(c, fp ? n.args().get_float(0) : n.args().get_int(0));
  const int step = kb.constant(c, fp ? n.args().get_float(2) : n.args().get_int(2));
  n.store_output(kb, kb.math("add", c, {start, kb.math("mul", c, {i, step})}));
  return true;
}

// A bool value: lo <= x<dim> < hi.
int in_range(KernelBuilder& kb, const Expr& position, int64_t lo, int64_t hi) {
  const int p = kb.index(position);
  const int ge = kb.math("ge", DType::Bool, {p, kb.constant(DType::I64, static_cast<double>(lo))});
  const int lt = kb.math("lt", DType::Bool, {p, kb.constant(DType::I64, static_cast<double>(hi))});
  return kb.math("and", DType::Bool, {ge, lt});
}

bool lower_cat(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.rank() == 0) return false;
  auto dim_r = normalize_dim(n.args().get_int(1), out.rank());
  if (!dim_r) return false;
  const auto dim = static_cast<size_t>(*dim_r);
  KernelBuilder kb = n.kernel(out.sizes);
  const std::vector<Expr> vars = kb.pointwise_vars();
  int result = -1;
  int64_t offset = 0;
  const auto& items = n.args().tensor_list(0).items;
  for (size_t i = 0; i < items.size(); ++i) {
    const Access& a = n.list_operand(0, i);
    // PyTorch skips legacy 1-D empty tensors in cat.
    if (a.type.rank() != out.rank()) continue;
    const int64_t size = a.type.sizes[dim];
    if (size == 0) continue;
    std::vector<Expr> idx = vars;
    idx[dim] = vars[dim] + Expr::constant(-offset);
    const int mask = in_range(kb, vars[dim], offset, offset + size);
    const int v = kb.cast(n.load(kb, a, idx, mask, 0), out.dtype);
    result = result < 0 ? v : kb.where(mask, v, result);
    offset += size;
  }
  if (result < 0) result = kb.constant(out.dtype, 0);
  n.store_output(kb, result);
  return true;
}

bool lower_constant_pad(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Access& in = n.operand(0);
  const IntList pad = n.args().get_ints(1);
  const double value = n.args().get_float(2);
  KernelBuilder kb = n.kernel(out.sizes);
  std::vector<Expr> idx = kb.pointwise_vars();
  int mask = -1;
  for (size_t p = 0; p + 1 < pad.size() + 1 && p / 2 < static_cast<size_t>(out.rank()); p += 2) {
    const size_t d = static_cast<size_t>(out.rank()) - 1 - p / 2;
    const int64_t before = pad[p];
    idx[d] = idx[d] + Expr::constant(-before);
    const int m = in_range(kb, kb.x(d), before, before + in.type.sizes[d]);
    mask = mask < 0 ? m : kb.math("and", DType::Bool, {mask, m});
  }
  const int v = n.load(kb, in, idx, mask, value);
  n.store_output(kb, mask < 0 ? v : kb.where(mask, v, kb.constant(out.dtype, value)));
  return true;
}

// reflection_pad and replication_pad: an index remap of each padded dim, no masks. With
// p = x - before, replication reads min(max(p, 0), n - 1) and reflection n-1 - |n-1 - |p||
// (|e| as max(e, -e)), which is p inside the input and its mirror image outside it.
LowerFn lower_index_pad(bool reflect) {
  return [reflect](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const Access& in = n.operand(0);
    const IntList pad = n.args().get_ints(1);
    KernelBuilder kb = n.kernel(out.sizes);
    std::vector<Expr> idx = kb.pointwise_vars();
    const auto abs = [](const Expr& e) { return max(e, e * Expr::constant(-1)); };
    for (size_t p = 0; p + 1 < pad.size() && p / 2 < static_cast<size_t>(out.rank()); p += 2) {
      const size_t d = static_cast<size_t>(out.rank()) - 1 - p / 2;
      const Expr at = idx[d] + Expr::constant(-pad[p]);
      const Expr last = Expr::constant(in.type.sizes[d] - 1);
      const Expr mirrored = last + abs(last + abs(at) * Expr::constant(-1)) * Expr::constant(-1);
      // The clamp changes no index (the mirror image of a pad smaller than the dim stays in
      // it) but lets interval bounds see that, so checks prove every read inside the input.
      idx[d] = min(max(reflect ? mirrored : at, Expr::constant(0)), last);
    }
    n.store_output(kb, n.load(kb, in, idx, -1, 0));
    return true;
  };
}

bool lower_repeat(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Access& in = n.operand(0);
  KernelBuilder kb = n.kernel(out.sizes);
  const size_t lead = static_cast<size_t>(out.rank() - in.type.rank());
  std::vector<Expr> idx;
  for (size_t i = 0; i < in.type.sizes.size(); ++i) {
    const int64_t s = in.type.sizes[i];
    idx.push_back(s <= 1 ? Expr::constant(0) : mod(kb.x(lead + i), Expr::constant(s)));
  }
  n.store_output(kb, n.load(kb, in, idx));
  return true;
}

// The checked value of index tensor `a` at `idx`, usable as an index variable.
Expr indirect(NodeLowering& n, KernelBuilder& kb, const Access& a, const std::vector<Expr>& idx,
              int64_t size) {
  return kb.indirect(kb.check_index(n.load(kb, a, idx), size));
}

bool lower_gather(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Access& self = n.operand(0);
  const Access& index = n.operand(2);
  if (self.type.rank() == 0 || out.rank() != self.type.rank()) return false;
  auto dim = normalize_dim(n.args().get_int(1), self.type.rank());
  if (!dim) return false;
  const auto d = static_cast<size_t>(*dim);
  KernelBuilder kb = n.kernel(out.sizes);
  std::vector<Expr> idx = kb.pointwise_vars();
  idx[d] = indirect(n, kb, index, kb.pointwise_vars(), self.type.sizes[d]);
  n.store_output(kb, n.load(kb, self, idx));
  return true;
}

bool lower_index_select(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Access& self = n.operand(0);
  const Access& index = n.operand(2);
  if (self.type.rank() == 0) return false;
  auto dim = normalize_dim(n.args().get_int(1), self.type.rank());
  if (!dim) return false;
  const auto d = static_cast<size_t>(*dim);
  KernelBuilder kb = n.kernel(out.sizes);
  std::vector<Expr> idx = kb.pointwise_vars();
  const std::vector<Expr> at = index.type.rank() == 0 ? std::vector<Expr>{} : std::vector{idx[d]};
  idx[d] = indirect(n, kb, index, at, self.type.sizes[d]);
  n.store_output(kb, n.load(kb, self, idx));
  return true;
}

bool lower_embedding(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Access& weight = n.operand(0);
  const Access& indices = n.operand(1);
  if (weight.type.rank() != 2) return false;
  KernelBuilder kb = n.kernel(out.sizes);
  const std::vector<Expr> vars = kb.pointwise_vars();
  const std::vector<Expr> at(vars.begin(), vars.end() - 1);
  const Expr row = indirect(n, kb, indices, at, weight.type.sizes[0]);
  n.store_output(kb, n.load(kb, weight, {row, vars.back()}));
  return true;
}

bool lower_index(NodeLowering& n) {
  const Access& self = n.operand(0);
  const AdvancedIndex plan = plan_advanced_index(self.type.sizes, list_types(n, 1), "index.Tensor");
  KernelBuilder kb = n.kernel(n.out_type(0).sizes);
  n.store_output(kb, n.load(kb, self, advanced_index_at(n, kb, plan, 1, kb.pointwise_vars())));
  return true;
}

}  // namespace

std::map<std::string, LowerFn> data_movement_lowerings() {
  std::map<std::string, LowerFn> t;
  t["aten.full.default"] = t["aten.full_like.default"] = t["aten.fill.Scalar"] = filled(1);
  t["aten.scalar_tensor.default"] = filled(0);
  t["aten.empty.memory_format"] = t["aten.empty_strided.default"] = filled(-1);
  t["aten.arange.start_step"] = lower_arange;
  t["aten.cat.default"] = lower_cat;
  t["aten.constant_pad_nd.default"] = lower_constant_pad;
  for (const char* op : {"aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
                         "aten.reflection_pad3d.default"})
    t[op] = lower_index_pad(true);
  for (const char* op : {"aten.replication_pad2d.default", "aten.replication_pad3d.default"})
    t[op] = lower_index_pad(false);
  t["aten.repeat.default"] = lower_repeat;
  t["aten.gather.default"] = lower_gather;
  t["aten.index_select.default"] = lower_index_select;
  t["aten.embedding.default"] = lower_embedding;
  t["aten.index.Tensor"] = lower_index;
  return t;
}

}  // namespace kiln
