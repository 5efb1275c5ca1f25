// grid_sampler_2d as an elementwise kernel over the output: the grid point's coordinates
// computed op for op as the reference computes them (core/ops/grid_sampler_ops.cpp), then one
// tap (nearest) or four (bilinear) read with masks for taps outside the input and indices
// clamped into it.
#include "core/lower/lower_context.h"
#include "core/lower/window_index.h"

namespace kiln {
namespace {

struct Coords {
  KernelBuilder& kb;
  DType m;  // the math dtype
  int c(double v) { return kb.constant(m, v); }
  int op(const char* fn, int a, int b) { return kb.math(fn, m, {a, b}); }
  int op(const char* fn, int a) { return kb.math(fn, m, {a}); }

  // The source coordinate of normalized `v` along a dim of `size` (grid_sampler_ops.cpp).
  int source(int v, int64_t size, int64_t padding, bool align) {
    const auto n = static_cast<double>(size);
    v = align ? op("mul", op("div", op("add", v, c(1)), c(2)), c(n - 1))
              : op("div", op("sub", op("mul", op("add", v, c(1)), c(n)), c(1)), c(2));
    // fmin/fmax as the reference: a NaN coordinate clips to 0.
    const auto clip = [&](int x) {
      const int nan = kb.math("isnan", DType::Bool, {x});
      return op("min", c(n - 1), op("max", kb.where(nan, c(0), x), c(0)));
    };
    if (padding == 1) return clip(v);
    if (padding == 2) {
      const double low = align ? 0 : -0.5, span = align ? n - 1 : n;
      if (span <= 0) return c(0);
      const int d = op("abs", op("sub", v, c(low)));
      const int extra = op("fmod", d, c(span));
      const int flips = op("floor", op("div", d, c(span)));
      const int even = kb.math("eq", DType::Bool, {op("fmod", flips, c(2)), c(0)});
      v = kb.where(even, op("add", extra, c(low)), op("add", op("sub", c(span), extra), c(low)));
      return clip(v);
    }
    return v;
  }

  // An integral coordinate as an index value: NaN to -2, then clamped into [-2, size + 1].
  int index(int v, int64_t size) {
    const int nan = kb.math("isnan", DType::Bool, {v});
    const int bounded = op("min", op("max", v, c(-2)), c(static_cast<double>(size + 1)));
    return kb.cast(kb.where(nan, c(-2), bounded), DType::I64);
  }
};

// grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
bool grid_sampler(NodeLowering& n) {
  const TensorType& out = n.out_type(0);
  if (out.numel() == 0) return false;
  const Shape& in = n.in_type(0).sizes;
  const int64_t h = in[2], w = in[3];
  const int64_t mode = n.args().get_int(2), padding = n.args().get_int(3);
  const bool align = n.args().get_bool(4);
  KernelBuilder kb = n.kernel(out.sizes);
  Coords co{kb, compute_dtype(out.dtype)};
  const DType m = co.m;
  const auto grid = [&](int64_t k) {
    return kb.cast(n.load(kb, n.operand(1), {kb.x(0), kb.x(2), kb.x(3), Expr::constant(k)}), m);
  };
  const int ix = co.source(grid(0), w, padding, align);
  const int iy = co.source(grid(1), h, padding, align);
  // Input element (yi + dy, xi + dx) cast to the math type, 0 outside the input.
  const auto tap = [&](int yi, int xi, int64_t dy, int64_t dx) {
    const Expr y = kb.indirect(yi) + Expr::constant(dy), x = kb.indirect(xi) + Expr::constant(dx);
    const int inside =
        kb.math("and", DType::Bool,
                {between(kb, y, 0, Expr::constant(h)), between(kb, x, 0, Expr::constant(w))});
    return kb.cast(
        n.load(kb, n.operand(0),
               {kb.x(0), kb.x(1), clamp_index(y, 0, h - 1), clamp_index(x, 0, w - 1)}, inside),
        m);
  };
  int result = -1;
  if (mode == 1) {
    result = tap(co.index(co.op("round", iy), h), co.index(co.op("round", ix), w), 0, 0);
  } else {
    const int x0 = co.op("floor", ix), y0 = co.op("floor", iy);
    const int dx = co.op("sub", ix, x0), dy = co.op("sub", iy, y0);
    const int xi = co.index(x0, w), yi = co.index(y0, h);
    const int ex = co.op("sub", co.c(1), dx), ey = co.op("sub", co.c(1), dy);
    result = co.op("mul", tap(yi, xi, 0, 0), co.op("mul", ex, ey));
    result = co.op("add", result, co.op("mul", tap(yi, xi, 0, 1), co.op("mul", dx, ey)));
    result = co.op("add", result, co.op("mul", tap(yi, xi, 1, 0), co.op("mul", ex, dy)));
    result = co.op("add", result, co.op("mul", tap(yi, xi, 1, 1), co.op("mul", dx, dy)));
  }
  n.store_output(kb, result);
  return true;
}

}  // namespace

std::map<std::string, LowerFn> grid_sampler_lowerings() {
  return {{"aten.grid_sampler_2d.default", grid_sampler}};
}

}  // namespace kiln
