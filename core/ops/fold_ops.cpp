// col2im (nn.Fold): sums sliding-window columns [N?, C*kh*kw, L] back into an image
// [N?, C, H, W]; each window position's columns add into the pixels its taps cover.
#include "core/ops/fold_window.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {

Fold fold_of(const ArgView& c) {
  Fold f;
  f.w.dims = 2;
  f.w.kernel = c.get_ints(2);
  f.w.dilation = c.get_ints(3);
  f.w.padding = c.get_ints(4);
  f.w.stride = c.get_ints(5);
  const IntList size = c.get_ints(1);
  op_check(size.size() == 2 && f.w.kernel.size() == 2 && f.w.dilation.size() == 2 &&
               f.w.padding.size() == 2 && f.w.stride.size() == 2,
           "col2im: output_size, kernel_size, dilation, padding and stride need 2 values each");
  f.out = Shape(size.begin(), size.end());
  for (size_t d = 0; d < 2; ++d)
    f.blocks.push_back(pooled_size(f.out[d], f.w.kernel[d], f.w.stride[d], f.w.padding[d],
                                   f.w.dilation[d], false, "col2im", false));
  return f;
}

namespace {

OpRow col2im_row() {
  return {"aten.col2im.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            const Fold f = fold_of(c);
            op_check(x.rank() == 2 || x.rank() == 3,
                     "col2im: expected a 2-D or 3-D input, got " + x.to_string());
            const int64_t taps = f.w.kernel[0] * f.w.kernel[1];
            const int64_t cols = x.sizes[x.sizes.size() - 2], l = x.sizes.back();
            op_check(cols % taps == 0, "col2im: " + std::to_string(cols) +
                                           " columns do not divide into kernel windows of " +
                                           std::to_string(taps));
            int64_t positions = 0;
            op_check(!__builtin_mul_overflow(f.blocks[0], f.blocks[1], &positions),
                     "col2im: the window makes too many positions");
            op_check(l == positions, "col2im: " + std::to_string(l) +
                                         " blocks given, the window makes " +
                                         std::to_string(f.blocks[0] * f.blocks[1]));
            Shape out(x.sizes.begin(), x.sizes.end() - 2);
            out.insert(out.end(), {cols / taps, f.out[0], f.out[1]});
            return one(x.dtype, out);
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Fold f = fold_of(c);
            const Shape& os = c.out_types[0].sizes;
            std::vector<double> acc(static_cast<size_t>(shape_numel(os)), 0.0);
            const int64_t planes = shape_numel(Shape(os.begin(), os.end() - 2));
            const int64_t kh = f.w.kernel[0], kw = f.w.kernel[1], l = f.blocks[0] * f.blocks[1];
            for (int64_t p = 0; p < planes; ++p)  // (batch, channel)
              for (int64_t t = 0; t < kh * kw; ++t)
                for (int64_t b = 0; b < l; ++b) {
                  const int64_t h =
                      b / f.blocks[1] * f.w.stride[0] - f.w.padding[0] + t / kw * f.w.dilation[0];
                  const int64_t w =
                      b % f.blocks[1] * f.w.stride[1] - f.w.padding[1] + t % kw * f.w.dilation[1];
                  if (h < 0 || h >= f.out[0] || w < 0 || w >= f.out[1]) continue;
                  acc[static_cast<size_t>((p * f.out[0] + h) * f.out[1] + w)] +=
                      x.get((p * kh * kw + t) * l + b);
                }
            HostTensor out = c.output(0);
            for (int64_t i = 0; i < out.numel(); ++i) out.set(i, acc[static_cast<size_t>(i)]);
            return std::vector{out};
          }};
}

}  // namespace

std::vector<OpRow> fold_ops() {
  return {col2im_row()};
}

}  // namespace kiln
