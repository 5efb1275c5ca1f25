// cat, padding and repeat: every output element reads one input element (or a constant),
// so each reference is an index map.
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {

// For each output multi-index, `source` rewrites it into an input index and says whether
// it lands inside the input; outside, the output takes `fill`.
template <class Source>
HostTensor map_indices(const HostTensor& in, const TensorType& out_type, double fill,
                       Source source) {
  HostTensor out = HostTensor::zeros(out_type.dtype, out_type.sizes);
  for (int64_t o = 0; o < out.numel(); ++o) {
    Shape index = unravel(o, out.sizes());
    if (source(index))
      copy_element(out, o, in, ravel(index, in.sizes()));
    else
      out.set(o, fill);
  }
  return out;
}

bool is_legacy_empty(const TensorType& t) {
  return t.rank() == 1 && t.sizes[0] == 0;
}

std::vector<TensorType> infer_cat(const InferContext& c) {
  const auto types = c.list_types(0);
  op_check(!types.empty(), "cat expects a non-empty list of tensors");
  const TensorType* shape_of = nullptr;
  DType dtype = types[0]->dtype;
  for (const auto& t : types) {
    dtype = promote_types(dtype, t->dtype);
    if (!is_legacy_empty(*t) && shape_of == nullptr) shape_of = &*t;
  }
  if (shape_of == nullptr) return one(dtype, {0});
  auto dim = normalize_dim(c.get_int(1), shape_of->rank());
  if (!dim) op_fail(dim.error().message());
  op_check(shape_of->rank() > 0, "cat: zero-dimensional tensors cannot be concatenated");
  Shape out = shape_of->sizes;
  out[static_cast<size_t>(*dim)] = 0;
  for (size_t k = 0; k < types.size(); ++k) {
    const TensorType& t = *types[k];
    if (is_legacy_empty(t)) continue;
    op_check(t.rank() == shape_of->rank(), "cat: tensor " + std::to_string(k) + " has rank " +
                                               std::to_string(t.rank()) + ", expected " +
                                               std::to_string(shape_of->rank()));
    for (size_t d = 0; d < out.size(); ++d) {
      if (static_cast<int64_t>(d) == *dim) continue;
      op_check(t.sizes[d] == shape_of->sizes[d],
               "cat: sizes of tensors must match except in dimension " + std::to_string(*dim) +
                   "; tensor " + std::to_string(k) + " is " + shape_text(t.sizes));
    }
    out[static_cast<size_t>(*dim)] += t.sizes[static_cast<size_t>(*dim)];
  }
  return one(dtype, out);
}

HostTensor cat_reference(const RefContext& c) {
  HostTensor out = c.output(0);
  if (out.numel() == 0) return out;
  std::vector<HostTensor> parts;
  for (auto& t : c.tensors(0)) {
    if (!is_legacy_empty(t->type())) parts.push_back(*t);
  }
  const auto dim = static_cast<size_t>(normalize_dim(c.get_int(1), out.rank()).value());
  for (int64_t o = 0; o < out.numel(); ++o) {
    Shape index = unravel(o, out.sizes());
    for (const auto& part : parts) {
      const int64_t size = part.sizes()[dim];
      if (index[dim] < size) {
        copy_element(out, o, part, ravel(index, part.sizes()));
        break;
      }
      index[dim] -= size;
    }
  }
  return out;
}

// Pads listed from the last dim backwards: (left, right) pairs, as torch.nn.functional.pad.
Shape padded_shape(const Shape& in, const IntList& pad, const std::string& op) {
  op_check(pad.size() % 2 == 0 && pad.size() / 2 <= in.size(),
           op + ": padding " + shape_text(pad) + " must be (left, right) pairs for at most " +
               std::to_string(in.size()) + " dims");
  Shape out = in;
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    const size_t d = in.size() - 1 - p;
    auto bounded = [](int64_t v) { return v >= -kMaxDimSize && v <= kMaxDimSize; };
    op_check(bounded(pad[2 * p]) && bounded(pad[2 * p + 1]),
             op + ": padding " + shape_text(pad) + " is beyond kiln's size limit");
    out[d] = in[d] + pad[2 * p] + pad[2 * p + 1];
    op_check(out[d] >= 0,
             op + ": padding " + shape_text(pad) + " makes dim " + std::to_string(d) + " negative");
  }
  return out;
}

enum class PadMode { Constant, Reflect, Replicate };

// reflection_pad and replication_pad: `dims` trailing dims, each (left, right).
OpRow pad_row(const std::string& overload, PadMode mode, size_t dims) {
  return {overload,
          [=](const InferContext& c) {
            const TensorType x = c.type(0);
            const IntList pad = c.get_ints(1);
            op_check(pad.size() == 2 * dims,
                     c.schema().op + " needs " + std::to_string(2 * dims) + " padding values");
            op_check(x.rank() == static_cast<int64_t>(dims) + 1 ||
                         x.rank() == static_cast<int64_t>(dims) + 2,
                     c.schema().op + " expects a " + std::to_string(dims + 1) + "-D or " +
                         std::to_string(dims + 2) + "-D input");
            for (size_t p = 0; p < dims; ++p) {
              const int64_t size = x.sizes[x.sizes.size() - 1 - p];
              if (mode == PadMode::Reflect) {
                op_check(pad[2 * p] < size && pad[2 * p + 1] < size && pad[2 * p] >= 0 &&
                             pad[2 * p + 1] >= 0,
                         c.schema().op +
                             ": padding must be non-negative and smaller than the input size " +
                             std::to_string(size));
              } else {
                op_check(size > 0 && pad[2 * p] >= 0 && pad[2 * p + 1] >= 0,
                         c.schema().op + ": padding needs a non-empty input");
              }
            }
            return one(x.dtype, padded_shape(x.sizes, pad, c.schema().op));
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const IntList pad = c.get_ints(1);
            return std::vector{map_indices(x, c.out_types[0], 0.0, [&](Shape& index) {
              for (size_t p = 0; p < dims; ++p) {
                const size_t d = index.size() - 1 - p;
                const int64_t n = x.sizes()[d];
                int64_t i = index[d] - pad[2 * p];
                if (mode == PadMode::Reflect) {
                  if (i < 0) i = -i;
                  if (i >= n) i = 2 * (n - 1) - i;
                } else {
                  i = std::min(std::max<int64_t>(i, 0), n - 1);
                }
                index[d] = i;
              }
              return true;
            })};
          }};
}

}  // namespace

std::vector<OpRow> cat_pad_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.cat.default", infer_cat,
                  [](const RefContext& c) { return std::vector{cat_reference(c)}; }});
  rows.push_back({"aten.constant_pad_nd.default",
                  [](const InferContext& c) {
                    return one(c.type(0).dtype,
                               padded_shape(c.type(0).sizes, c.get_ints(1), "constant_pad_nd"));
                  },
                  [](const RefContext& c) {
                    const HostTensor x = c.tensor(0);
                    const IntList pad = c.get_ints(1);
                    return std::vector{
                        map_indices(x, c.out_types[0], c.get_float(2), [&](Shape& index) {
                          for (size_t p = 0; p < pad.size() / 2; ++p) {
                            const size_t d = index.size() - 1 - p;
                            index[d] -= pad[2 * p];  // a negative pad crops: the shift still holds
                            if (index[d] < 0 || index[d] >= x.sizes()[d]) return false;
                          }
                          return true;
                        })};
                  }});
  rows.push_back(pad_row("aten.reflection_pad1d.default", PadMode::Reflect, 1));
  rows.push_back(pad_row("aten.reflection_pad2d.default", PadMode::Reflect, 2));
  rows.push_back(pad_row("aten.reflection_pad3d.default", PadMode::Reflect, 3));
  rows.push_back(pad_row("aten.replication_pad2d.default", PadMode::Replicate, 2));
  rows.push_back(pad_row("aten.replication_pad3d.default", PadMode::Replicate, 3));
  rows.push_back(
      {"aten.repeat.default",
       [](const InferContext& c) {
         const TensorType x = c.type(0);
         const IntList repeats = c.get_ints(1);
         op_check(repeats.size() >= x.sizes.size(),
                  "repeat: the number of repeats (" + std::to_string(repeats.size()) +
                      ") cannot be smaller than the tensor's rank (" + std::to_string(x.rank()) +
                      ")");
         Shape out(repeats.size());
         const size_t lead = repeats.size() - x.sizes.size();
         for (size_t d = 0; d < repeats.size(); ++d) {
           op_check(repeats[d] >= 0, "repeat: repeats must be non-negative");
           out[d] = shape_numel(
               {repeats[d], d < lead ? 1 : x.sizes[d - lead]});  // saturates; checked after
         }
         return one(x.dtype, out);
       },
       [](const RefContext& c) {
         const HostTensor x = c.tensor(0);
         const size_t lead = c.out_types[0].sizes.size() - x.sizes().size();
         return std::vector{map_indices(x, c.out_types[0], 0.0, [&](Shape& index) {
           Shape in(index.begin() + static_cast<std::ptrdiff_t>(lead), index.end());
           for (size_t d = 0; d < in.size(); ++d) in[d] %= x.sizes()[d];
           index = in;
           return true;
         })};
       }});
  return rows;
}

}  // namespace kiln
