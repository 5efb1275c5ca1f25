// upsample_nearest2d and upsample_bilinear2d as elementwise kernels over the output: each
// element computes its source position with the references' arithmetic (upsample_geometry.h)
// and gathers one tap (nearest) or four (bilinear). Computed positions index the input
// through indirect variables clamped into it, so every access is in bounds by construction.
#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"
#include "core/ops/upsample_geometry.h"

namespace kiln {
namespace {

// upsample_nearest2d.vec(input, output_size?, scale_factors?)
bool nearest(NodeLowering& n) {
  const Shape &in = n.in_type(0).sizes, &out = n.out_type(0).sizes;
  const std::optional<FloatList> scales = n.args().opt_floats(2);
  KernelBuilder kb = n.kernel(out);
  std::vector<Expr> idx{kb.x(0), kb.x(1)};
  for (size_t d = 0; d < 2; ++d) {
    const int64_t i = in[2 + d], o = out[2 + d];
    const Expr x = kb.x(2 + d);
    if (o == i) {
      idx.push_back(x);
    } else if (o == 2 * i) {
      idx.push_back(floordiv(x, Expr::constant(2)));
    } else {
      const float f = nearest_factor(i, o, upsample_scale(scales, d));
      const int src =
          kb.math("floor", DType::F32,
                  {kb.math("mul", DType::F32,
                           {kb.cast(kb.index(x), DType::F32), kb.constant(DType::F32, f)})});
      idx.push_back(clamp_index(kb.indirect(kb.cast(src, DType::I64)), 0, i - 1));
    }
  }
  n.store_output(kb, n.load(kb, n.operand(0), idx));
  return true;
}

// upsample_bilinear2d.vec(input, output_size?, align_corners, scale_factors?)
bool bilinear(NodeLowering& n) {
  const TensorType& x = n.in_type(0);
  const Shape &in = x.sizes, &out = n.out_type(0).sizes;
  const bool align = n.args().get_bool(2);
  const std::optional<FloatList> scales = n.args().opt_floats(3);
  const DType m = compute_dtype(x.dtype);  // f32, or f64 for f64 tensors
  KernelBuilder kb = n.kernel(out);
  Expr lo[2], hi[2];
  int w1[2];
  for (size_t d = 0; d < 2; ++d) {
    const int64_t i = in[2 + d];
    const int f = kb.constant(m, bilinear_factor(i, out[2 + d], align, upsample_scale(scales, d)));
    const int dst = kb.cast(kb.index(kb.x(2 + d)), m);
    int src = align
                  ? kb.math("mul", m, {f, dst})
                  : kb.math("sub", m,
                            {kb.math("mul", m, {f, kb.math("add", m, {dst, kb.constant(m, 0.5)})}),
                             kb.constant(m, 0.5)});
    if (!align) src = kb.math("max", m, {src, kb.constant(m, 0)});
    const int i0 = kb.cast(src, DType::I64);  // src >= 0: truncation is floor
    lo[d] = clamp_index(kb.indirect(i0), 0, i - 1);
    hi[d] = clamp_index(kb.indirect(i0) + Expr::constant(1), 0, i - 1);
    w1[d] = kb.math("sub", m, {src, kb.cast(i0, m)});
  }
  auto tap = [&](const Expr& h, const Expr& w) {
    return kb.cast(n.load(kb, n.operand(0), {kb.x(0), kb.x(1), h, w}), m);
  };
  auto lerp = [&](int a, int b, int t) {  // (1 - t) * a + t * b
    return kb.math("add", m,
                   {kb.math("mul", m, {kb.math("sub", m, {kb.constant(m, 1), t}), a}),
                    kb.math("mul", m, {t, b})});
  };
  const int top = lerp(tap(lo[0], lo[1]), tap(lo[0], hi[1]), w1[1]);
  const int bottom = lerp(tap(hi[0], lo[1]), tap(hi[0], hi[1]), w1[1]);
  n.store_output(kb, lerp(top, bottom, w1[0]));
  return true;
}

}  // namespace

std::map<std::string, LowerFn> upsample_lowerings() {
  return {{"aten.upsample_nearest2d.vec", nearest}, {"aten.upsample_bilinear2d.vec", bilinear}};
}

}  // namespace kiln
