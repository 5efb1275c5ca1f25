#include <optional>

#include "core/lower/advanced_index_at.h"
#include "core/lower/deterministic_scatter_sum.h"
#include "core/lower/scatter_combine.h"
#include "core/ops/indexing.h"
#include "core/ops/op_def.h"
#include "core/ops/op_error.h"

namespace kiln {

void lower_scatter_combine(NodeLowering& n, const ScatterSpec& spec) {
  const TensorType& out = n.out_type(0);
  const Shape& sizes = out.sizes;
  const std::string& r = spec.reduce;
  const bool half = out.dtype == DType::F16 || out.dtype == DType::BF16;
  DType acc = out.dtype;
  if (half && (r == "sum" || r == "mean" || r == "prod")) acc = DType::F32;
  if (r == "mean" && !is_floating(out.dtype)) acc = DType::I64;  // the sum must not wrap
  // Deterministic mode: float sums in fixed point (deterministic_scatter_sum.h); a float
  // product has no order-free form, so it is refused (as PyTorch refuses it on a GPU).
  const bool fixed_point = n.deterministic() && is_floating(acc) && (r == "sum" || r == "mean");
  if (n.deterministic() && is_floating(acc) && r == "prod") {
    op_fail(
        "scatter_reduce with reduce='prod' on floats has no deterministic kernel "
        "(schedule.deterministic is on)");
  }
  const bool finalize = acc != out.dtype || r == "mean" || fixed_point;
  const int target =
      finalize ? n.temp_buffer("accumulated", acc, out.numel()) : n.realize_output(0).buffer;
  const auto fill = [&](int buffer, const std::function<int(KernelBuilder&)>& value) {
    KernelBuilder kb = n.kernel(sizes);
    kb.store(buffer, contiguous_index(sizes, kb.pointwise_vars()), value(kb));
    n.emit(std::move(kb).finish());
  };
  // One kernel over the scattered elements; `value` from the site's value (-1 unless wanted).
  const auto scatter = [&](const std::string& combine, int buffer, bool want,
                           const std::function<int(KernelBuilder&, int)>& value) {
    if (shape_numel(spec.space) == 0) return;
    KernelBuilder kb = n.kernel(spec.space);
    const ScatterSite s = spec.site(kb, want, acc);
    kb.scatter(combine, buffer, s.address, value(kb, s.value), s.mask);
    n.emit(std::move(kb).finish());
  };
  const auto itself = [](KernelBuilder&, int v) { return v; };
  fill(target, [&](KernelBuilder& kb) { return kb.cast(spec.initial(kb), acc); });
  if (!spec.include_self && r != "store") {
    // Places an element reaches start from the combine's identity; for max and min, from
    // one of their own elements (any one: the result is the same).
    if (r == "max" || r == "min") {
      scatter("store", target, true, itself);
    } else {
      scatter("store", target, false,
              [&](KernelBuilder& kb, int) { return kb.constant(acc, r == "prod" ? 1 : 0); });
    }
  }
  int count = -1;
  if (r == "mean") {
    count = n.temp_buffer("count", DType::I64, out.numel());
    fill(count, [&](KernelBuilder& kb) { return kb.constant(DType::I64, spec.include_self); });
    scatter("sum", count, false, [](KernelBuilder& kb, int) { return kb.constant(DType::I64, 1); });
  }
  std::optional<DeterministicScatterSum> sum;
  if (fixed_point) {
    const auto site = [&](KernelBuilder& kb) { return spec.site(kb, true, acc); };
    sum.emplace(n, spec.space, site, acc, out.numel());
  } else {
    scatter(r == "mean" ? "sum" : r, target, true, itself);
  }
  if (!finalize) return;
  KernelBuilder kb = n.kernel(sizes);
  const Expr at = contiguous_index(sizes, kb.pointwise_vars());
  int v = kb.load(target, acc, at);
  if (sum) v = sum->add_to(kb, at, v);
  if (r == "mean") {
    // A place nothing reached (include_self false) keeps self: its count is 0, divide by 1.
    const int c = kb.load(count, DType::I64, at);
    const int one = kb.constant(DType::I64, 1);
    const int divisor =
        kb.where(kb.math("gt", DType::Bool, {c, kb.constant(DType::I64, 0)}), c, one);
    v = is_floating(acc) ? kb.math("div", acc, {v, kb.cast(divisor, acc)})
                         : kb.math("floordiv", acc, {v, divisor});
  }
  n.store_output(kb, v);
}

namespace {

// self with the elements of an index tensor (operand 2) sent along `dim`, from src (operand
// 3) or a number: the site of scatter, scatter_add and scatter_reduce.
std::optional<ScatterSpec> along_dim(NodeLowering& n, bool from_tensor) {
  const TensorType& out = n.out_type(0);
  const auto dim_r = normalize_dim(n.args().get_int(1), out.rank());
  if (!dim_r || out.rank() == 0 || n.in_type(2).rank() != out.rank()) return std::nullopt;
  const auto dim = static_cast<size_t>(*dim_r);
  const double number = from_tensor ? 0 : n.args().get_float(3);
  ScatterSpec spec;
  spec.space = n.in_type(2).sizes;
  spec.site = [&n, dim, from_tensor, number](KernelBuilder& kb, bool want, DType dtype) {
    const Shape& sizes = n.out_type(0).sizes;
    const std::vector<Expr> vars = kb.pointwise_vars();
    std::vector<Expr> at = vars;
    at[dim] = kb.indirect(
        kb.check_index(kb.cast(n.load(kb, n.operand(2), vars), DType::I64), sizes[dim]));
    ScatterSite s;
    s.address = contiguous_index(sizes, at);
    if (want) {
      // A number becomes self's dtype first, as PyTorch converts it.
      s.value = from_tensor ? kb.cast(n.load(kb, n.operand(3), vars), dtype)
                            : kb.cast(kb.constant(n.out_type(0).dtype, number), dtype);
    }
    return s;
  };
  spec.initial = [&n](KernelBuilder& kb) { return n.load(kb, n.operand(0), kb.pointwise_vars()); };
  return spec;
}

LowerFn scatter_along_dim(const std::string& reduce) {
  return [reduce](NodeLowering& n) {
    auto spec = along_dim(n, true);
    if (!spec) return false;
    spec->reduce = reduce;
    lower_scatter_combine(n, *spec);
    return true;
  };
}

bool lower_scatter_reduce(NodeLowering& n) {
  static const std::map<std::string, std::string> combines = {
      {"sum", "sum"}, {"prod", "prod"}, {"mean", "mean"}, {"amax", "max"}, {"amin", "min"}};
  const auto combine = combines.find(n.args().get_str(4));
  auto spec = along_dim(n, true);
  if (!spec || combine == combines.end() || n.out_type(0).dtype == DType::Bool) return false;
  spec->reduce = combine->second;
  spec->include_self = n.args().get_bool(5);
  lower_scatter_combine(n, *spec);
  return true;
}

bool lower_index_put(NodeLowering& n) {
  const Shape self = n.in_type(0).sizes;
  const AdvancedIndex plan = plan_advanced_index(self, list_types(n, 1), "index_put");
  ScatterSpec spec;
  spec.space = plan.result;
  spec.site = [&n, plan, self](KernelBuilder& kb, bool want, DType dtype) {
    ScatterSite s;
    s.address = contiguous_index(self, advanced_index_at(n, kb, plan, 1, kb.pointwise_vars()));
    if (want) s.value = n.load_operand(kb, 2, plan.result, dtype, n.out_type(0).dtype);
    return s;
  };
  spec.initial = [&n](KernelBuilder& kb) { return n.load(kb, n.operand(0), kb.pointwise_vars()); };
  spec.reduce = n.args().get_bool(3) ? "sum" : "store";
  lower_scatter_combine(n, spec);
  return true;
}

// The checked row of index element `at`; a negative index is an error, as in the reference
// (reported as the row count: the kernel's check sees no sign).
int checked_row(NodeLowering& n, KernelBuilder& kb, const std::vector<Expr>& at, int64_t rows,
                int* raw_out) {
  const int raw = kb.cast(n.load(kb, n.operand(1), at), DType::I64);
  const int negative = kb.math("lt", DType::Bool, {raw, kb.constant(DType::I64, 0)});
  if (raw_out) *raw_out = raw;
  return kb.check_index(kb.where(negative, kb.constant(DType::I64, rows), raw), rows);
}

// embedding_dense_backward: grad rows summed into the weight rows their indices name;
// padding_idx's row gets nothing; scale_grad_by_freq divides by the index's count.
bool lower_embedding_backward(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  const Shape& index_sizes = n.in_type(1).sizes;
  const int64_t rows = out.sizes[0], width = out.sizes[1];
  const int64_t padding = n.args().get_int(3);
  int frequency = -1;
  if (n.args().get_bool(4)) {
    frequency = n.temp_buffer("frequency", DType::I64, rows);
    n.fill(frequency, {rows}, DType::I64, 0);
    if (shape_numel(index_sizes) > 0) {
      KernelBuilder kb = n.kernel(index_sizes);
      const int row = checked_row(n, kb, kb.pointwise_vars(), rows, nullptr);
      kb.scatter("sum", frequency, kb.indirect(row), kb.constant(DType::I64, 1));
      n.emit(std::move(kb).finish());
    }
  }
  ScatterSpec spec;
  spec.space = n.in_type(0).sizes;
  spec.site = [&n, rows, width, padding, frequency](KernelBuilder& kb, bool want, DType dtype) {
    const std::vector<Expr> vars = kb.pointwise_vars();
    int raw = -1;
    const int row = checked_row(n, kb, {vars.begin(), vars.end() - 1}, rows, &raw);
    ScatterSite s;
    s.address = kb.indirect(row) * Expr::constant(width) + vars.back();
    s.mask =
        kb.math("ne", DType::Bool, {raw, kb.constant(DType::I64, static_cast<double>(padding))});
    if (want) {
      s.value = kb.cast(n.load(kb, n.operand(0), vars), dtype);
      if (frequency >= 0) {
        const int count = kb.cast(kb.load(frequency, DType::I64, kb.indirect(row)), dtype);
        s.value = kb.math("div", dtype, {s.value, count});
      }
    }
    return s;
  };
  spec.initial = [&n](KernelBuilder& kb) { return kb.constant(n.out_type(0).dtype, 0); };
  spec.reduce = "sum";
  lower_scatter_combine(n, spec);
  return true;
}

}  // namespace

bool lower_scatter_into(NodeLowering& n, bool from_tensor) {
  auto spec = along_dim(n, from_tensor);
  if (!spec) return false;
  lower_scatter_combine(n, *spec);
  return true;
}

std::map<std::string, LowerFn> scatter_combine_lowerings() {
  std::map<std::string, LowerFn> t;
  t["aten.scatter_add.default"] = scatter_along_dim("sum");
  t["aten.scatter_reduce.two"] = lower_scatter_reduce;
  t["aten.index_put.default"] = lower_index_put;
  t["aten.embedding_dense_backward.default"] = lower_embedding_backward;
  return t;
}

}  // namespace kiln
