// Average pooling (avg_pool1d/2d/3d), adaptive average pooling and max pooling with indices
// as Reduction kernels: the
// pointwise variables walk the output, the reduction variables the window. Window taps
// outside the input are masked off; their index is also clamped into the input, which
// changes no tap that is read but lets interval bounds prove every access in bounds.
#include <algorithm>
#include <optional>

#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/pool_window.h"

namespace kiln {
namespace {

// The kernel's output: the sum of the window's taps (element `idx` of the input where
// `mask` holds) divided by `divisor`, an index expression over the output position.
void emit_window_mean(NodeLowering& n, KernelBuilder& kb, const std::vector<Expr>& idx, int mask,
                      const Expr& divisor) {
  const TensorType& out = n.out_type(0);
  const DType acc = compute_dtype(out.dtype);
  const int v = kb.cast(n.load(kb, n.operand(0), idx, mask, 0), acc);
  const int sum = kb.reduce("sum", acc, v);
  const Access o = n.realize_output(0);
  kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()),
           kb.cast(kb.math("div", acc, {sum, kb.cast(kb.index(divisor), acc)}), out.dtype));
  n.emit(std::move(kb).finish());
}

// avg_pool{1,2,3}d(self, kernel, stride, padding, ceil_mode, count_include_pad[, divisor]).
LowerFn avg_pool(size_t dims, bool has_divisor) {
  return [=](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const TensorType& in = n.in_type(0);
    const Window w = pool_window(n.args(), dims, false);
    const IntList &kernel = w.kernel, &stride = w.stride, &pad = w.padding;
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
      idx.push_back(clamp_index(at, 0, size - 1));
      count = count * window_taps(start, kernel[d], size, pad[d], count_pad);
    }
    const std::optional<int64_t> divisor =
        override ? std::optional<int64_t>(n.args().get_int(6)) : std::nullopt;
    emit_window_mean(n, kb, idx, mask, divisor ? Expr::constant(*divisor) : count);
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
      idx.push_back(clamp_index(at, 0, i - 1));
      count = count * (hi + lo * Expr::constant(-1));
    }
    emit_window_mean(n, kb, idx, mask, count);
    return true;
  };
}

// max_pool{2,3}d_with_indices(self, kernel, stride, padding, dilation, ceil_mode) -> (max,
// flat index of it in its plane). A tap outside the input reads the nearest tap of its window
// that is inside (the first one before the input, the last one after it) and names that
// position. Ties resolve to the first position holding the maximum (NaN first, as PyTorch):
// the substitution is monotone along every dim, so the first tap that reaches the maximum
// in row-major order is a copy of the first inside position that holds it, and every index
// stays inside the input.
// The window along one dim for output position `x`: its first tap, and its first and last
// taps inside [0, size).
struct TapRange {
  Expr start, first_inside, last_inside;
};

TapRange tap_range(const Expr& x, const Window& w, size_t d, int64_t size) {
  const int64_t dil = w.dilation[d];
  const Expr start = x * Expr::constant(w.stride[d]) + Expr::constant(-w.padding[d]);
  const Expr skipped =
      max(floordiv(start * Expr::constant(-1) + Expr::constant(dil - 1), Expr::constant(dil)),
          Expr::constant(0));
  const Expr kept =
      min(floordiv(Expr::constant(size - 1) + start * Expr::constant(-1), Expr::constant(dil)),
          Expr::constant(w.kernel[d] - 1));
  return {start, start + skipped * Expr::constant(dil), start + kept * Expr::constant(dil)};
}

// Whether some window along a dim has no tap inside the input (dilation can step over it
// all); such a window's maximum is -inf at no position, which the substitution cannot give.
bool has_empty_window(const Window& w, size_t d, int64_t in, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    bool any = false;
    for (int64_t t = 0; t < w.kernel[d] && !any; ++t) {
      const int64_t at = o * w.stride[d] - w.padding[d] + t * w.dilation[d];
      any = at >= 0 && at < in;
    }
    if (!any) return true;
  }
  return false;
}

// max_pool's indices: each window's first maximal tap (of `v`) as its input position,
// flattened in the plane.
int max_position(KernelBuilder& kb, int v, const Window& w, const std::vector<TapRange>& ranges,
                 const TensorType& in, size_t lead) {
  const IntList& kernel = w.kernel;
  const size_t dims = kernel.size();
  const int tap = kb.reduce("argmax", DType::I64, v);  // row-major over the window
  // The tap's input position per dim, substituted as its load was, then flattened in the
  // plane.
  const auto i64 = [&](int64_t c) { return kb.constant(DType::I64, static_cast<double>(c)); };
  int flat = i64(0);
  int64_t inner = shape_numel(Shape(kernel.begin(), kernel.end()));
  for (size_t d = 0; d < dims; ++d) {
    inner /= kernel[d];
    const int r = kb.math("mod", DType::I64,
                          {kb.math("floordiv", DType::I64, {tap, i64(inner)}), i64(kernel[d])});
    const bool unit = w.dilation[d] == 1;
    const int step = unit ? r : kb.math("mul", DType::I64, {r, i64(w.dilation[d])});
    const int at = kb.math("add", DType::I64, {kb.index(ranges[d].start), step});
    const int lo = unit ? i64(0) : kb.index(ranges[d].first_inside);
    const int hi = unit ? i64(in.sizes[lead + d] - 1) : kb.index(ranges[d].last_inside);
    const int inside = kb.math("max", DType::I64, {kb.math("min", DType::I64, {at, hi}), lo});
    flat = kb.math("add", DType::I64,
                   {kb.math("mul", DType::I64, {flat, i64(in.sizes[lead + d])}), inside});
  }
  return flat;
}

LowerFn max_pool(size_t dims) {
  return [=](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const TensorType& in = n.in_type(0);
    const Window w = pool_window(n.args(), dims, true);
    const IntList& kernel = w.kernel;
    const size_t lead = static_cast<size_t>(out.rank()) - dims;
    if (in.numel() == 0 || out.numel() == 0) return false;
    for (size_t d = 0; d < dims; ++d)
      if (has_empty_window(w, d, in.sizes[lead + d], out.sizes[lead + d])) return false;
    KernelBuilder kb = n.kernel(out.sizes, Shape(kernel.begin(), kernel.end()));
    std::vector<Expr> idx;
    for (size_t i = 0; i < lead; ++i) idx.push_back(kb.x(i));
    std::vector<TapRange> ranges;
    for (size_t d = 0; d < dims; ++d) {
      const int64_t size = in.sizes[lead + d];
      const TapRange t = tap_range(kb.x(lead + d), w, d, size);
      ranges.push_back(t);
      const Expr at = t.start + kb.r(d) * Expr::constant(w.dilation[d]);
      // With dilation 1 the window's inside taps are the input's clamp.
      idx.push_back(w.dilation[d] == 1
                        ? clamp_index(at, 0, size - 1)
                        : clamp_index(min(max(at, t.first_inside), t.last_inside), 0, size - 1));
    }
    const DType acc = compute_dtype(out.dtype);
    const int v = kb.cast(n.load(kb, n.operand(0), idx), acc);
    const int best = kb.reduce("max", acc, v);
    const bool indices = n.output_read(1);
    const int flat = indices ? max_position(kb, v, w, ranges, in, lead) : -1;
    const Expr at_out = contiguous_index(out.sizes, kb.pointwise_vars());
    kb.store(n.realize_output(0).buffer, at_out, kb.cast(best, out.dtype));
    if (indices) kb.store(n.realize_output(1).buffer, at_out, flat);
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
          {"aten._adaptive_avg_pool3d.default", adaptive_avg_pool(3)},
          {"aten.max_pool2d_with_indices.default", max_pool(2)},
          {"aten.max_pool3d_with_indices.default", max_pool(3)}};
}

}  // namespace kiln
