// upsample_nearest2d.vec and upsample_bilinear2d.vec over [N, C, H, W]: shape inference and
// references that follow PyTorch's arithmetic (upsample_geometry.h).
#include <cmath>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/upsample_geometry.h"

namespace kiln {
namespace {

// upsample_nearest2d.vec(input, output_size?, scale_factors?)
OpRow nearest_row() {
  return {
      "aten.upsample_nearest2d.vec",
      [](const InferContext& c) {
        return one(c.type(0).dtype,
                   upsample_output(c.type(0).sizes, c.opt_ints(1), c.opt_floats(2), c.schema().op));
      },
      [](const RefContext& c) {
        const HostTensor x = c.tensor(0);
        HostTensor out = c.output(0);
        const Shape &in = x.sizes(), &os = out.sizes();
        const std::optional<FloatList> scales = c.opt_floats(2);
        for (int64_t o = 0; o < out.numel(); ++o) {
          Shape at = unravel(o, os);
          for (size_t d = 0; d < 2; ++d)
            at[2 + d] = nearest_source(at[2 + d], in[2 + d], os[2 + d], upsample_scale(scales, d));
          copy_element(out, o, x, ravel(at, in));
        }
        return std::vector{out};
      }};
}

// The source coordinate of output index `o` along one dim, in the math type T (float for
// float, half and bfloat16 tensors, double for double), and the two taps and weights.
template <class T>
void bilinear_taps(int64_t o, int64_t in, int64_t out, bool align, std::optional<double> scale,
                   int64_t& i0, int64_t& i1, double& w1) {
  const T f = static_cast<T>(bilinear_factor(in, out, align, scale));
  T src = align ? f * static_cast<T>(o) : f * (static_cast<T>(o) + T(0.5)) - T(0.5);
  if (src < T(0)) src = T(0);
  i0 = static_cast<int64_t>(src);
  i1 = i0 < in - 1 ? i0 + 1 : i0;
  w1 = static_cast<double>(src - static_cast<T>(i0));
}

// upsample_bilinear2d.vec(input, output_size?, align_corners, scale_factors?)
OpRow bilinear_row() {
  return {
      "aten.upsample_bilinear2d.vec",
      [](const InferContext& c) {
        op_check(is_floating(c.type(0).dtype), "upsample_bilinear2d needs a floating input");
        return one(c.type(0).dtype,
                   upsample_output(c.type(0).sizes, c.opt_ints(1), c.opt_floats(3), c.schema().op));
      },
      [](const RefContext& c) {
        const HostTensor x = c.tensor(0);
        HostTensor out = c.output(0);
        const Shape &in = x.sizes(), &os = out.sizes();
        const bool align = c.get_bool(2);
        const std::optional<FloatList> scales = c.opt_floats(3);
        const bool wide = x.dtype() == DType::F64;
        for (int64_t o = 0; o < out.numel(); ++o) {
          Shape at = unravel(o, os);
          int64_t lo[2], hi[2];
          double w[2];
          for (size_t d = 0; d < 2; ++d) {
            const auto s = upsample_scale(scales, d);
            if (wide)
              bilinear_taps<double>(at[2 + d], in[2 + d], os[2 + d], align, s, lo[d], hi[d], w[d]);
            else
              bilinear_taps<float>(at[2 + d], in[2 + d], os[2 + d], align, s, lo[d], hi[d], w[d]);
          }
          auto v = [&](int64_t h, int64_t wi) {
            Shape p = at;
            p[2] = h;
            p[3] = wi;
            return x.get(ravel(p, in));
          };
          const double top = (1 - w[1]) * v(lo[0], lo[1]) + w[1] * v(lo[0], hi[1]);
          const double bottom = (1 - w[1]) * v(hi[0], lo[1]) + w[1] * v(hi[0], hi[1]);
          out.set(o, (1 - w[0]) * top + w[0] * bottom);
        }
        return std::vector{out};
      }};
}

}  // namespace

std::vector<OpRow> upsample_ops() {
  return {nearest_row(), bilinear_row()};
}

}  // namespace kiln
