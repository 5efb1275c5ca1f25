// Convolution (1-d to 3-d, stride, padding, dilation, groups, transposed) and its backward.
// The reference walks every product term of a regular convolution once; a transposed
// convolution is the regular one read backwards (its output is the regular one's input), and
// each gradient accumulates the same terms with a different pair of factors, so one walk
// serves all five results.
#include <optional>

#include "core/ops/conv_args.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"

namespace kiln {
namespace {

// Calls term(x_at, w_at, y_at) for every product x[x_at] * w[w_at] that adds into y[y_at] in
// the regular convolution y = conv(x, w) (flat row-major positions): x [N, C, *], w [O,
// C/groups, *k], y [N, O, *].
template <class Term>
void for_conv_terms(const Shape& x, const Shape& w, const Shape& y, const Window& win,
                    int64_t groups, Term term) {
  const Shape x_spatial(x.begin() + 2, x.end()), y_spatial(y.begin() + 2, y.end());
  const int64_t x_plane = shape_numel(x_spatial), y_plane = shape_numel(y_spatial),
                taps = shape_numel(win.kernel), in_per_group = w[1], out_per_group = w[0] / groups;
  for (int64_t n = 0; n < y[0]; ++n) {
    for (int64_t oc = 0; oc < y[1]; ++oc) {
      const int64_t g = oc / out_per_group;
      for (int64_t o = 0; o < y_plane; ++o) {
        const int64_t y_at = (n * y[1] + oc) * y_plane + o;
        const Shape pos = unravel(o, y_spatial);
        for (int64_t ic = 0; ic < in_per_group; ++ic) {
          const int64_t x_base = (n * x[1] + g * in_per_group + ic) * x_plane;
          int64_t tap = 0;
          for_window(win, x_spatial, pos, [&](const Shape& at, bool inside) {
            if (inside)
              term(x_base + ravel(at, x_spatial), (oc * in_per_group + ic) * taps + tap, y_at);
            ++tap;
          });
        }
      }
    }
  }
}

// The regular convolution relation behind a (possibly transposed) convolution of `input`:
// `small` is the regular relation's output side, `big` its input side.
struct Relation {
  Shape big, small;
};

Relation relation(const Shape& input, const Shape& output, const ConvArgs& a) {
  return a.transposed ? Relation{output, input} : Relation{input, output};
}

std::vector<double> zeros(int64_t n) {
  return std::vector<double>(static_cast<size_t>(n), 0.0);
}

HostTensor filled(const RefContext& c, size_t k, const std::vector<double>& values) {
  HostTensor t = c.output(k);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, values[static_cast<size_t>(i)]);
  return t;
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
// groups)
OpRow convolution_row() {
  return {"aten.convolution.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0), w = c.type(1);
            op_check(x.dtype == w.dtype && is_floating(x.dtype),
                     "convolution: input and weight must share a floating dtype");
            const ConvArgs a = conv_args(c, 3, w.sizes);
            Shape out = conv_output_shape(x.sizes, w.sizes, a, "convolution");
            if (!c.is_none(2)) {
              op_check(c.type(2).sizes == Shape{out[1]},
                       "convolution: bias needs one entry per output channel (" +
                           std::to_string(out[1]) + "), got " + shape_text(c.type(2).sizes));
              op_check(c.type(2).dtype == x.dtype,
                       "convolution: bias must have the input's dtype (as PyTorch requires)");
            }
            return one(x.dtype, std::move(out));
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0), w = c.tensor(1);
            const ConvArgs a = conv_args(c, 3, w.sizes());
            const Shape& y = c.out_types[0].sizes;
            std::vector<double> acc = zeros(shape_numel(y));
            const Relation r = relation(x.sizes(), y, a);
            if (a.transposed) {
              for_conv_terms(r.big, w.sizes(), r.small, a.window, a.groups,
                             [&](int64_t big, int64_t wi, int64_t small) {
                               acc[static_cast<size_t>(big)] += x.get(small) * w.get(wi);
                             });
            } else {
              for_conv_terms(r.big, w.sizes(), r.small, a.window, a.groups,
                             [&](int64_t big, int64_t wi, int64_t small) {
                               acc[static_cast<size_t>(small)] += x.get(big) * w.get(wi);
                             });
            }
            if (!c.is_none(2)) {
              const HostTensor bias = c.tensor(2);
              const int64_t plane = shape_numel(Shape(y.begin() + 2, y.end()));
              for (size_t i = 0; i < acc.size(); ++i)
                acc[i] += bias.get(static_cast<int64_t>(i) / plane % y[1]);
            }
            return std::vector{filled(c, 0, acc)};
          }};
}

// convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding, dilation,
// transposed, output_padding, groups, output_mask) -> (grad_input, grad_weight, grad_bias);
// a false output_mask entry gives an empty tensor in that slot.
OpRow convolution_backward_row() {
  return {
      "aten.convolution_backward.default",
      [](const InferContext& c) {
        const TensorType dy = c.type(0), x = c.type(1), w = c.type(2);
        const std::string op = "convolution_backward";
        op_check(x.dtype == w.dtype && dy.dtype == x.dtype && is_floating(x.dtype),
                 op + ": grad_output, input and weight must share a floating dtype");
        const ConvArgs a = conv_args(c, 4, w.sizes);
        const Shape y = conv_output_shape(x.sizes, w.sizes, a, op);
        op_check(dy.sizes == y, op + ": grad_output " + shape_text(dy.sizes) +
                                    " does not match the convolution's output " + shape_text(y));
        const IntList mask = c.get_ints(10);
        op_check(mask.size() == 3, op + ": output_mask needs 3 entries");
        if (mask[2] && !c.is_none(3))
          op_check(c.get_ints(3) == IntList{y[1]},
                   op + ": bias_sizes must be [" + std::to_string(y[1]) + "]");
        return std::vector{TensorType::contiguous(x.dtype, mask[0] ? x.sizes : Shape{0}),
                           TensorType::contiguous(x.dtype, mask[1] ? w.sizes : Shape{0}),
                           TensorType::contiguous(x.dtype, mask[2] ? Shape{y[1]} : Shape{0})};
      },
      [](const RefContext& c) {
        const HostTensor dy = c.tensor(0), x = c.tensor(1), w = c.tensor(2);
        const ConvArgs a = conv_args(c, 4, w.sizes());
        const Relation r = relation(x.sizes(), dy.sizes(), a);
        // In the regular relation: big = the transposed op's output or the regular op's
        // input; dy sits on the side the op writes.
        const HostTensor& big_value = a.transposed ? dy : x;
        const HostTensor& small_value = a.transposed ? x : dy;
        std::vector<double> dbig = zeros(shape_numel(r.big)), dsmall = zeros(shape_numel(r.small)),
                            dw = zeros(w.numel());
        for_conv_terms(r.big, w.sizes(), r.small, a.window, a.groups,
                       [&](int64_t big, int64_t wi, int64_t small) {
                         // Regular: dx[big] += dy*w; transposed: dx[small] += dy[big]*w.
                         if (a.transposed)
                           dsmall[static_cast<size_t>(small)] += big_value.get(big) * w.get(wi);
                         else
                           dbig[static_cast<size_t>(big)] += small_value.get(small) * w.get(wi);
                         dw[static_cast<size_t>(wi)] += big_value.get(big) * small_value.get(small);
                       });
        std::vector<HostTensor> out{c.output(0), c.output(1), c.output(2)};
        if (out[0].numel()) out[0] = filled(c, 0, a.transposed ? dsmall : dbig);
        if (out[1].numel()) out[1] = filled(c, 1, dw);
        if (out[2].numel()) {
          std::vector<double> db = zeros(dy.sizes()[1]);
          const int64_t plane = shape_numel(Shape(dy.sizes().begin() + 2, dy.sizes().end()));
          for (int64_t i = 0; i < dy.numel(); ++i)
            db[static_cast<size_t>(i / plane % dy.sizes()[1])] += dy.get(i);
          out[2] = filled(c, 2, db);
        }
        return out;
      }};
}

}  // namespace

std::vector<OpRow> conv_ops() {
  return {convolution_row(), convolution_backward_row()};
}

}  // namespace kiln
