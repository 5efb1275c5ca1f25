// grid_sampler_2d(input [N, C, H, W], grid [N, Ho, Wo, 2], interpolation_mode, padding_mode,
// align_corners) -> [N, C, Ho, Wo]: each output point reads the input at the grid's
// normalized (x, y) in [-1, 1]. Interpolation: 0 bilinear, 1 nearest (bicubic, 2, is not
// implemented); padding: 0 zeros, 1 border, 2 reflection. The reference follows PyTorch's
// arithmetic step by step in the math type (float, double for double tensors), which the
// lowering (core/lower/grid_sampler_lowering.cpp) repeats op for op.
#include <cmath>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {

template <class T>
T source_coordinate(T coord, int64_t size, int padding, bool align) {
  const T n = static_cast<T>(size);
  // Unnormalize: -1 and 1 are the corner pixels' centers, or their outer edges.
  coord = align ? (coord + T(1)) / T(2) * (n - T(1)) : ((coord + T(1)) * n - T(1)) / T(2);
  const auto clip = [&](T v) { return std::fmin(n - T(1), std::fmax(v, T(0))); };
  if (padding == 1) return clip(coord);
  if (padding == 2) {
    // Reflect about the edges (pixel centers with align_corners, pixel borders without).
    const T low = align ? T(0) : T(-0.5), span = align ? n - T(1) : n;
    if (span <= T(0)) return T(0);
    const T d = std::fabs(coord - low);
    const T extra = std::fmod(d, span);
    const T flips = std::floor(d / span);
    coord = std::fmod(flips, T(2)) == T(0) ? extra + low : span - extra + low;
    return clip(coord);
  }
  return coord;
}

// A coordinate as an index: NaN and far-away values (which read nothing either way) are
// clamped into [-2, size + 1] first, so the conversion is always defined.
template <class T>
int64_t to_index(T v, int64_t size) {
  if (std::isnan(v)) return -2;
  return static_cast<int64_t>(std::fmin(std::fmax(v, T(-2)), static_cast<T>(size + 1)));
}

template <class T>
void sample(const HostTensor& x, const HostTensor& grid, HostTensor& out, int mode, int padding,
            bool align) {
  const Shape &in = x.sizes(), &os = out.sizes();
  const int64_t h = in[2], w = in[3];
  for (int64_t o = 0; o < out.numel(); ++o) {
    const Shape at = unravel(o, os);  // n, c, i, j
    const int64_t g = ((at[0] * os[2] + at[2]) * os[3] + at[3]) * 2;
    const T ix = source_coordinate(static_cast<T>(grid.get(g)), w, padding, align);
    const T iy = source_coordinate(static_cast<T>(grid.get(g + 1)), h, padding, align);
    const int64_t plane = (at[0] * in[1] + at[1]) * h * w;
    auto tap = [&](int64_t yy, int64_t xx) {
      return yy >= 0 && yy < h && xx >= 0 && xx < w ? x.get(plane + yy * w + xx) : 0.0;
    };
    if (mode == 1) {
      out.set(o, tap(to_index(std::nearbyint(iy), h), to_index(std::nearbyint(ix), w)));
      continue;
    }
    const T x0 = std::floor(ix), y0 = std::floor(iy);
    const T dx = ix - x0, dy = iy - y0;
    const int64_t xi = to_index(x0, w), yi = to_index(y0, h);
    const double v = tap(yi, xi) * static_cast<double>((T(1) - dx) * (T(1) - dy)) +
                     tap(yi, xi + 1) * static_cast<double>(dx * (T(1) - dy)) +
                     tap(yi + 1, xi) * static_cast<double>((T(1) - dx) * dy) +
                     tap(yi + 1, xi + 1) * static_cast<double>(dx * dy);
    out.set(o, v);
  }
}

OpRow grid_sampler_row() {
  return {
      "aten.grid_sampler_2d.default",
      [](const InferContext& c) {
        const TensorType x = c.type(0), g = c.type(1);
        const std::string op = "grid_sampler_2d";
        op_check(is_floating(x.dtype) && g.dtype == x.dtype,
                 op + ": input and grid must share a floating dtype");
        op_check(x.rank() == 4 && g.rank() == 4 && g.sizes[0] == x.sizes[0] && g.sizes[3] == 2,
                 op + ": expected input [N, C, H, W] and grid [N, Ho, Wo, 2], got " +
                     shape_text(x.sizes) + " and " + shape_text(g.sizes));
        const int64_t mode = c.get_int(2), padding = c.get_int(3);
        op_check(mode == 0 || mode == 1,
                 op + ": interpolation_mode " + std::to_string(mode) +
                     " is not supported (0 bilinear and 1 nearest are; 2, bicubic, is not yet)");
        op_check(padding >= 0 && padding <= 2,
                 op + ": padding_mode must be 0 (zeros), 1 (border) or 2 (reflection)");
        op_check(x.sizes[2] > 0 && x.sizes[3] > 0, op + ": the input's H and W must be positive");
        return one(x.dtype, {x.sizes[0], x.sizes[1], g.sizes[1], g.sizes[2]});
      },
      [](const RefContext& c) {
        const HostTensor x = c.tensor(0), grid = c.tensor(1);
        HostTensor out = c.output(0);
        const auto mode = static_cast<int>(c.get_int(2));
        const auto padding = static_cast<int>(c.get_int(3));
        if (x.dtype() == DType::F64)
          sample<double>(x, grid, out, mode, padding, c.get_bool(4));
        else
          sample<float>(x, grid, out, mode, padding, c.get_bool(4));
        return std::vector{out};
      }};
}

}  // namespace

std::vector<OpRow> grid_sampler_ops() {
  return {grid_sampler_row()};
}

}  // namespace kiln
