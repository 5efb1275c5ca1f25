// The backward of 2-d pooling as Reduction kernels in gather form: each grad_input element is
// a row over the output windows that can cover it, masked to those that do, so no element is
// written twice (no atomics, deterministic). Along a dim with stride s and kernel k, at most
// ceil(k/s) windows cover a point (average), one per kernel tap for max pooling (a tap lands
// on the point only where (i + pad - tap*dilation) divides by s), and for adaptive pooling
// the widest run of cells that share an input element.
#include <algorithm>

#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/pool_window.h"

namespace kiln {
namespace {

constexpr size_t kDims = 2;

Expr c(int64_t v) {
  return Expr::constant(v);
}

std::vector<Expr> lead_vars(const KernelBuilder& kb, size_t lead) {
  std::vector<Expr> idx;
  for (size_t i = 0; i < lead; ++i) idx.push_back(kb.x(i));
  return idx;
}

// avg_pool2d_backward(grad_output, self, kernel, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
bool avg_pool2d_backward(NodeLowering& n) {
  const TensorType& in = n.out_type(0);
  const Shape& dy = n.in_type(0).sizes;
  const Window w = pool_window(n.args(), kDims, false, 2);
  const bool count_pad = n.args().get_bool(6);
  const size_t lead = in.sizes.size() - kDims;
  Shape covering(kDims);
  for (size_t d = 0; d < kDims; ++d) covering[d] = (w.kernel[d] + w.stride[d] - 1) / w.stride[d];
  KernelBuilder kb = n.kernel(in.sizes, covering);
  std::vector<Expr> idx = lead_vars(kb, lead);
  int mask = -1;
  Expr count = c(1);
  for (size_t d = 0; d < kDims; ++d) {
    const int64_t s = w.stride[d], p = w.padding[d], k = w.kernel[d], out = dy[lead + d];
    const Expr i = kb.x(lead + d);
    // The last window starting at or before i, then earlier ones; each must reach i.
    const Expr o = floordiv(i + c(p), c(s)) + kb.r(d) * c(-1);
    mask = mask_and(kb, mask, between(kb, o, 0, c(out)));
    mask = mask_and(kb, mask,
                    kb.math("lt", DType::Bool, {kb.index(i), kb.index(o * c(s) + c(k - p))}));
    const Expr at = clamp_index(o, 0, out - 1);
    idx.push_back(at);
    count = count * window_taps(at * c(s) + c(-p), k, in.sizes[lead + d], p, count_pad);
  }
  const Expr divisor = n.args().is_none(7) ? max(count, c(1)) : c(n.args().get_int(7));
  const DType acc = compute_dtype(in.dtype);
  const int g = kb.cast(n.load(kb, n.operand(0), idx, mask), acc);
  n.store_output(kb,
                 kb.reduce("sum", acc, kb.math("div", acc, {g, kb.cast(kb.index(divisor), acc)})));
  return true;
}

// max_pool2d_with_indices_backward(grad_output, self, kernel, stride, padding, dilation,
// ceil_mode, indices): a window adds its gradient where its index names this element. An index
// that names no position of its window adds nothing here (the reference calls it an error).
bool max_pool2d_backward(NodeLowering& n) {
  const TensorType& in = n.out_type(0);
  const Shape& dy = n.in_type(0).sizes;
  const Window w = pool_window(n.args(), kDims, true, 2);
  const size_t lead = in.sizes.size() - kDims;
  KernelBuilder kb = n.kernel(in.sizes, Shape(w.kernel.begin(), w.kernel.end()));
  std::vector<Expr> idx = lead_vars(kb, lead);
  int mask = -1;
  Expr flat = c(0);  // this element's position in its plane, as indices count it
  for (size_t d = 0; d < kDims; ++d) {
    const int64_t s = w.stride[d], out = dy[lead + d];
    const Expr num = kb.x(lead + d) + c(w.padding[d]) + kb.r(d) * c(-w.dilation[d]);
    idx.push_back(landing_position(kb, mask, num, s, out));
    flat = flat * c(in.sizes[lead + d]) + kb.x(lead + d);
  }
  const DType acc = compute_dtype(in.dtype);
  const int g = kb.cast(n.load(kb, n.operand(0), idx, mask), acc);
  const int chosen = n.load(kb, n.operand(7), idx, mask, -1);
  const int hit = kb.math("eq", DType::Bool, {chosen, kb.index(flat)});
  n.store_output(kb, kb.reduce("sum", acc, kb.where(hit, g, kb.constant(acc, 0))));
  return true;
}

// _adaptive_avg_pool2d_backward(grad_output, self): cell o covers [o*I floordiv O,
// ceil((o+1)*I/O)); the first cell covering i is i*O floordiv I.
bool adaptive_avg_pool2d_backward(NodeLowering& n) {
  const TensorType& in = n.out_type(0);
  const Shape& dy = n.in_type(0).sizes;
  const size_t lead = in.sizes.size() - kDims;
  Shape covering(kDims, 1);
  for (size_t d = 0; d < kDims; ++d) {
    const int64_t i = in.sizes[lead + d], o = dy[lead + d];
    for (int64_t at = 0; at < i; ++at) {
      const int64_t first = at * o / i;
      int64_t last = first;
      while (last + 1 < o && adaptive_start(last + 1, i, o) <= at) ++last;
      covering[d] = std::max(covering[d], last - first + 1);
    }
  }
  KernelBuilder kb = n.kernel(in.sizes, covering);
  std::vector<Expr> idx = lead_vars(kb, lead);
  int mask = -1;
  Expr count = c(1);
  for (size_t d = 0; d < kDims; ++d) {
    const int64_t size = in.sizes[lead + d], out = dy[lead + d];
    const Expr i = kb.x(lead + d);
    const Expr o = floordiv(i * c(out), c(size)) + kb.r(d);
    const Expr at = clamp_index(o, 0, out - 1);
    const Expr start = floordiv(at * c(size), c(out));
    const Expr end = floordiv((at + c(1)) * c(size) + c(out - 1), c(out));
    mask = mask_and(kb, mask, kb.math("lt", DType::Bool, {kb.index(o), kb.index(c(out))}));
    mask = mask_and(kb, mask, kb.math("le", DType::Bool, {kb.index(start), kb.index(i)}));
    idx.push_back(at);
    count = count * (end + start * c(-1));
  }
  const DType acc = compute_dtype(in.dtype);
  const int g = kb.cast(n.load(kb, n.operand(0), idx, mask), acc);
  n.store_output(kb,
                 kb.reduce("sum", acc, kb.math("div", acc, {g, kb.cast(kb.index(count), acc)})));
  return true;
}

}  // namespace

std::map<std::string, LowerFn> pool_backward_lowerings() {
  return {{"aten.avg_pool2d_backward.default", avg_pool2d_backward},
          {"aten.max_pool2d_with_indices_backward.default", max_pool2d_backward},
          {"aten._adaptive_avg_pool2d_backward.default", adaptive_avg_pool2d_backward}};
}

}  // namespace kiln
