// Average pooling (avg_pool1d/2d/3d) and adaptive average pooling as Reduction kernels: the
// pointwise variables walk the output, the reduction variables the window. Window taps
// outside the input are masked off; their index is also clamped into the input, which
// changes no tap that is read but lets interval bounds prove every access in bounds.
#include <algorithm>

#include "core/lower/lower_context.h"

namespace kiln {
namespace {

Expr clamp(const Expr& e, int64_t lo, int64_t hi) {
  return min(max(e, Expr::constant(lo)), Expr::constant(hi));
}

int mask_and(KernelBuilder& kb, int mask, int m) {
  return mask < 0 ? m : kb.math("and", DType::Bool, {mask, m});
}

// lo <= e < hi, as a bool value.
int between(KernelBuilder& kb, const Expr& e, int64_t lo, const Expr& hi) {
  const int at = kb.index(e);
  const int ge = kb.math("ge", DType::Bool, {at, kb.constant(DType::I64, static_cast<double>(lo))});
  const int lt = kb.math("lt", DType::Bool, {at, kb.index(hi)});
  return kb.math("and", DType::Bool, {ge, lt});
}

IntList expand(const IntList& v, size_t n, const IntList& fallback) {
  if (v.empty()) return fallback;
  if (v.size() == 1) return IntList(n, v[0]);
  return v;
}

// avg_pool{1,2,3}d(self, kernel, stride, padding, ceil_mode, count_include_pad[, divisor]).
LowerFn avg_pool(size_t dims, bool has_divisor) {
  return [=](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const TensorType& in = n.in_type(0);
    const IntList kernel = expand(n.args().get_ints(1), dims, {});
    const IntList stride = expand(n.args().get_ints(2), dims, kernel);
    const IntList pad = expand(n.args().get_ints(3), dims, IntList(dims, 0));
    const bool count_pad = n.args().get_bool(5);
    const bool override = has_divisor && !n.args().is_none(6);
    const size_t lead = static_cast<size_t>(out.rank()) - dims;
    KernelBuilder kb = n.kernel(out.sizes, Shape(kernel.begin(), kernel.end()));
    std::vector<Expr> idx;
    for (size_t i = 0; i < lead; ++i) idx.push_back(kb.x(i));
    int mask = -1;
    Expr count = Expr::constant(1);  // taps the divisor counts, per output position
    for (size_t d = 0; d < dims; ++d) {
      const int64_t size = in.sizes[lead + d];
      const Expr start = kb.x(lead + d) * Expr::constant(stride[d]) + Expr::constant(-pad[d]);
      const Expr at = start + kb.r(d);
      mask = mask_and(kb, mask, between(kb, at, 0, Expr::constant(size)));
      idx.push_back(clamp(at, 0, size - 1));
      // Taps inside [0, size) or, counting padding, inside [-pad, size + pad).
      const Expr end =
          min(start + Expr::constant(kernel[d]), Expr::constant(count_pad ? size + pad[d] : size));
      const Expr begin = count_pad ? start : max(start, Expr::constant(0));
      count = count * max(end + begin * Expr::constant(-1), Expr::constant(0));
    }
    const DType acc = compute_dtype(out.dtype);
    const int v = kb.cast(n.load(kb, n.operand(0), idx, mask, 0), acc);
    const int sum = kb.reduce("sum", acc, v);
    const int divisor = override ? kb.constant(acc, static_cast<double>(n.args().get_int(6)))
                                 : kb.cast(kb.index(count), acc);
    const Access o = n.realize_output(0);
    kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()),
             kb.cast(kb.math("div", acc, {sum, divisor}), out.dtype));
    n.emit(std::move(kb).finish());
    return true;
  };
}

// Adaptive average pooling: output cell o of a dim covers [o*in floordiv out,
// ceil((o+1)*in/out)); the reduction walks the widest such window, masked per cell.
LowerFn adaptive_avg_pool(size_t dims) {
  return [=](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const TensorType& in = n.in_type(0);
    const size_t lead = static_cast<size_t>(out.rank()) - dims;
    Shape widest(dims, 1);
    for (size_t d = 0; d < dims; ++d) {
      const int64_t i = in.sizes[lead + d], o = out.sizes[lead + d];
      for (int64_t c = 0; c < o; ++c)
        widest[d] = std::max(widest[d], ((c + 1) * i + o - 1) / o - c * i / o);
    }
    KernelBuilder kb = n.kernel(out.sizes, widest);
    std::vector<Expr> idx;
    for (size_t i = 0; i < lead; ++i) idx.push_back(kb.x(i));
    int mask = -1;
    Expr count = Expr::constant(1);
    for (size_t d = 0; d < dims; ++d) {
      const int64_t i = in.sizes[lead + d], o = out.sizes[lead + d];
      const Expr x = kb.x(lead + d);
      const Expr lo = floordiv(x * Expr::constant(i), Expr::constant(o));
      const Expr hi = floordiv((x + Expr::constant(1)) * Expr::constant(i) + Expr::constant(o - 1),
                               Expr::constant(o));
      const Expr at = lo + kb.r(d);
      mask = mask_and(kb, mask, between(kb, at, 0, hi));
      idx.push_back(clamp(at, 0, i - 1));
      count = count * (hi + lo * Expr::constant(-1));
    }
    const DType acc = compute_dtype(out.dtype);
    const int v = kb.cast(n.load(kb, n.operand(0), idx, mask, 0), acc);
    const int sum = kb.reduce("sum", acc, v);
    const Access o = n.realize_output(0);
    kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()),
             kb.cast(kb.math("div", acc, {sum, kb.cast(kb.index(count), acc)}), out.dtype));
    n.emit(std::move(kb).finish());
    return true;
  };
}

}  // namespace

std::map<std::string, LowerFn> pool_lowerings() {
  return {{"aten.avg_pool1d.default", avg_pool(1, false)},
          {"aten.avg_pool2d.default", avg_pool(2, true)},
          {"aten.avg_pool3d.default", avg_pool(3, true)},
          {"aten.adaptive_avg_pool1d.default", adaptive_avg_pool(1)},
          {"aten._adaptive_avg_pool2d.default", adaptive_avg_pool(2)},
          {"aten._adaptive_avg_pool3d.default", adaptive_avg_pool(3)}};
}

}  // namespace kiln
