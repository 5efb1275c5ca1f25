// Backward of layer norm and group norm (they appear in exported training graphs), from
// the saved mean and rstd:
//   xhat = (x - mean) * rstd,  g = dy * weight
//   dx   = rstd / M * (M * g - sum(g) - xhat * sum(g * xhat))   (sums over each group of M)
//   dweight = sum(dy * xhat),  dbias = sum(dy)                   (sums over everything else)
// A false output_mask entry gives an empty tensor in that slot. Both decompose into those
// sums and elementwise ops in the statistics dtype (f32 for half inputs), which fuse into
// row and column reduction kernels.
#include <cmath>

#include "core/graph/builder.h"
#include "core/ops/norm_stats.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"

namespace kiln {
namespace {

struct Grads {
  std::vector<double> dx, dweight, dbias;
};

// `group_of(e)` is the statistics group of element e, `channel_of(e)` its affine index.
template <class GroupOf, class ChannelOf>
Grads norm_backward(const HostTensor& dy, const HostTensor& x, const HostTensor& mean,
                    const HostTensor& rstd, const std::optional<HostTensor>& weight,
                    int64_t group_size, int64_t channels, GroupOf group_of, ChannelOf channel_of) {
  const auto n = static_cast<size_t>(x.numel());
  const auto groups = static_cast<size_t>(mean.numel());
  Grads out{std::vector<double>(n), std::vector<double>(static_cast<size_t>(channels)),
            std::vector<double>(static_cast<size_t>(channels))};
  std::vector<double> sum_g(groups, 0.0), sum_gx(groups, 0.0), xhat(n), g(n);
  for (size_t e = 0; e < n; ++e) {
    const auto grp = static_cast<size_t>(group_of(static_cast<int64_t>(e)));
    const auto ch = static_cast<size_t>(channel_of(static_cast<int64_t>(e)));
    xhat[e] = (x.get(static_cast<int64_t>(e)) - mean.get(static_cast<int64_t>(grp))) *
              rstd.get(static_cast<int64_t>(grp));
    const double d = dy.get(static_cast<int64_t>(e));
    g[e] = d * (weight ? weight->get(static_cast<int64_t>(ch)) : 1.0);
    sum_g[grp] += g[e];
    sum_gx[grp] += g[e] * xhat[e];
    out.dweight[ch] += d * xhat[e];
    out.dbias[ch] += d;
  }
  const double m = static_cast<double>(group_size);
  for (size_t e = 0; e < n; ++e) {
    const auto grp = static_cast<size_t>(group_of(static_cast<int64_t>(e)));
    out.dx[e] =
        rstd.get(static_cast<int64_t>(grp)) / m * (m * g[e] - sum_g[grp] - xhat[e] * sum_gx[grp]);
  }
  return out;
}

HostTensor filled(const TensorType& type, const std::vector<double>& values) {
  HostTensor t = HostTensor::zeros(type.dtype, type.sizes);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, values[static_cast<size_t>(i)]);
  return t;
}

IntList mask_of(const ArgView& c, int arg) {
  IntList mask = c.get_ints(arg);
  op_check(mask.size() == 3, c.schema().op + ": output_mask needs 3 entries");
  return mask;
}

std::vector<TensorType> masked_types(const IntList& mask, DType dtype, const Shape& dx,
                                     const Shape& affine) {
  return {TensorType::contiguous(dtype, mask[0] ? dx : Shape{0}),
          TensorType::contiguous(dtype, mask[1] ? affine : Shape{0}),
          TensorType::contiguous(dtype, mask[2] ? affine : Shape{0})};
}

std::vector<HostTensor> masked_results(const RefContext& c, const Grads& grads) {
  return {c.out_types[0].numel() ? filled(c.out_types[0], grads.dx) : c.output(0),
          c.out_types[1].numel() ? filled(c.out_types[1], grads.dweight) : c.output(1),
          c.out_types[2].numel() ? filled(c.out_types[2], grads.dbias) : c.output(2)};
}

// The three gradients from values already shaped so that `mean` and `rstd` broadcast over
// `x`'s groups and `weight` over its channels: `group_dims` are the dims one group spans
// (m elements), `channel_dims` those the affine gradients sum over. `shape` views each
// result back (dx to x's shape, dweight and dbias to `affine`).
std::vector<ValueRef> decomposed_grads(const DecomposeContext& c, const IntList& mask, ValueRef dy,
                                       ValueRef x, ValueRef mean, ValueRef rstd,
                                       std::optional<ValueRef> weight, const IntList& group_dims,
                                       const IntList& channel_dims, int64_t m, const Shape& shape,
                                       const Shape& affine) {
  GraphBuilder& b = c.b;
  const DType out = c.type(1).dtype;
  const auto empty = [&] { return b.op("aten.full.default", {IntList{0}, 0.0}, {{"dtype", out}}); };
  const auto finish = [&](ValueRef v, const Shape& s) {
    return b.cast(b.op("aten.view.default", {v, IntList(s.begin(), s.end())}), out);
  };
  const ValueRef xhat = b.mul(b.sub(x, mean), rstd);
  std::vector<ValueRef> grads;
  if (mask[0]) {
    const ValueRef g = weight ? b.mul(dy, *weight) : dy;
    const ValueRef sum_g = b.sum(g, group_dims, true);
    const ValueRef sum_gx = b.sum(b.mul(g, xhat), group_dims, true);
    const double md = static_cast<double>(m);
    const ValueRef dx =
        b.mul(b.div(rstd, md), b.sub(b.sub(b.mul(g, md), sum_g), b.mul(xhat, sum_gx)));
    grads.push_back(finish(dx, shape));
  } else {
    grads.push_back(empty());
  }
  // With no dims to sum over (one group spans the whole tensor) the products are the sums.
  const auto over_channels = [&](ValueRef v) {
    return channel_dims.empty() ? v : b.sum(v, channel_dims, false);
  };
  grads.push_back(mask[1] ? finish(over_channels(b.mul(dy, xhat)), affine) : empty());
  grads.push_back(mask[2] ? finish(over_channels(dy), affine) : empty());
  return grads;
}

// native_layer_norm_backward: groups are the trailing normalized dims; mean and rstd are
// viewed as [*lead, 1...], weight broadcasts over the lead dims.
std::vector<ValueRef> decompose_layer_norm_backward(const DecomposeContext& c) {
  GraphBuilder& b = c.b;
  const TensorType x = c.type(1);
  const IntList shape = c.get_ints(2);
  const DType stats = stats_dtype(x.dtype);
  const auto lead = static_cast<int64_t>(x.sizes.size() - shape.size());
  IntList stat_shape(x.sizes.begin(), x.sizes.begin() + lead), group_dims, lead_dims;
  for (int64_t d = 0; d < x.rank(); ++d) (d < lead ? lead_dims : group_dims).push_back(d);
  stat_shape.resize(x.sizes.size(), 1);
  const auto stat = [&](int arg) {
    return b.op("aten.view.default", {b.cast(c.tensor(arg), stats), stat_shape});
  };
  std::optional<ValueRef> w =
      c.is_none(5) ? std::nullopt : std::optional(b.cast(c.tensor(5), stats));
  return decomposed_grads(c, c.get_ints(7), b.cast(c.tensor(0), stats), b.cast(c.tensor(1), stats),
                          stat(3), stat(4), w, group_dims, lead_dims, shape_numel(shape), x.sizes,
                          Shape(shape.begin(), shape.end()));
}

// native_group_norm_backward: x viewed as [N, G, C/G, HxW]; mean and rstd as [N, G, 1, 1];
// weight as [1, G, C/G, 1].
std::vector<ValueRef> decompose_group_norm_backward(const DecomposeContext& c) {
  GraphBuilder& b = c.b;
  const TensorType x = c.type(1);
  const int64_t n = c.get_int(5), ch = c.get_int(6), hw = c.get_int(7), groups = c.get_int(8);
  const DType stats = stats_dtype(x.dtype);
  const IntList grouped{n, groups, ch / groups, hw};
  const auto view = [&](int arg, IntList s) {
    return b.op("aten.view.default", {b.cast(c.tensor(arg), stats), std::move(s)});
  };
  std::optional<ValueRef> w =
      c.is_none(4) ? std::nullopt : std::optional(view(4, IntList{1, groups, ch / groups, 1}));
  return decomposed_grads(c, c.get_ints(9), view(0, grouped), view(1, grouped),
                          view(2, IntList{n, groups, 1, 1}), view(3, IntList{n, groups, 1, 1}), w,
                          IntList{2, 3}, IntList{0, 3}, ch / groups * hw, x.sizes, Shape{ch});
}

}  // namespace

std::vector<OpRow> norm_backward_ops() {
  std::vector<OpRow> rows;
  // native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
  // output_mask)
  rows.push_back(
      {"aten.native_layer_norm_backward.default",
       [](const InferContext& c) {
         const TensorType dy = c.type(0), x = c.type(1);
         const IntList shape = c.get_ints(2);
         op_check(dy.sizes == x.sizes,
                  "native_layer_norm_backward: grad_out and input shapes differ");
         op_check(!shape.empty() && shape.size() <= x.sizes.size() &&
                      Shape(x.sizes.end() - static_cast<std::ptrdiff_t>(shape.size()),
                            x.sizes.end()) == shape,
                  "native_layer_norm_backward: normalized_shape does not match the input");
         const int64_t rows_n = x.numel() / std::max<int64_t>(shape_numel(shape), 1);
         op_check(c.type(3).numel() == rows_n && c.type(4).numel() == rows_n,
                  "native_layer_norm_backward: mean and rstd need one value per normalized row");
         for (int i : {5, 6}) {
           op_check(
               c.is_none(i) || c.type(i).sizes == shape,
               "native_layer_norm_backward: weight and bias must have shape " + shape_text(shape));
         }
         return masked_types(mask_of(c, 7), x.dtype, x.sizes, shape);
       },
       [](const RefContext& c) {
         const int64_t group = shape_numel(c.get_ints(2));
         const std::optional<HostTensor> w =
             c.is_none(5) ? std::nullopt : std::optional(c.tensor(5));
         const Grads grads = norm_backward(
             c.tensor(0), c.tensor(1), c.tensor(3), c.tensor(4), w, group, group,
             [group](int64_t e) { return e / group; }, [group](int64_t e) { return e % group; });
         return masked_results(c, grads);
       },
       decompose_layer_norm_backward});
  // native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
  rows.push_back({"aten.native_group_norm_backward.default",
                  [](const InferContext& c) {
                    const TensorType dy = c.type(0), x = c.type(1);
                    const int64_t n = c.get_int(5), ch = c.get_int(6), hw = c.get_int(7),
                                  groups = c.get_int(8);
                    op_check(dy.sizes == x.sizes && x.numel() == n * ch * hw && x.rank() >= 2 &&
                                 x.sizes[1] == ch,
                             "native_group_norm_backward: N, C, HxW do not match the input");
                    op_check(groups > 0 && ch % groups == 0,
                             "native_group_norm_backward: C must divide into groups");
                    op_check(c.type(2).numel() == n * groups && c.type(3).numel() == n * groups,
                             "native_group_norm_backward: mean and rstd need N x group values");
                    op_check(c.is_none(4) || c.type(4).sizes == Shape{ch},
                             "native_group_norm_backward: weight needs one entry per channel");
                    return masked_types(mask_of(c, 9), x.dtype, x.sizes, {ch});
                  },
                  [](const RefContext& c) {
                    const int64_t ch = c.get_int(6), hw = c.get_int(7), groups = c.get_int(8);
                    const int64_t per_group = ch / groups * hw;
                    const std::optional<HostTensor> w =
                        c.is_none(4) ? std::nullopt : std::optional(c.tensor(4));
                    const Grads grads = norm_backward(
                        c.tensor(0), c.tensor(1), c.tensor(2), c.tensor(3), w, per_group, ch,
                        [per_group](int64_t e) { return e / per_group; },
                        [ch, hw](int64_t e) { return (e / hw) % ch; });
                    return masked_results(c, grads);
                  },
                  decompose_group_norm_backward});
  return rows;
}

}  // namespace kiln
