// View ops. Each is described by one ViewSpec (sizes, strides and offset over its input
// read as contiguous), which gives both the inferred type and the reference: the reference
// reads the input through exactly those strides. Lowering turns the same spec into index
// expressions, so no view copies.
#include <numeric>

#include "core/graph/builder.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/view_spec.h"

namespace kiln {
namespace {

ViewSpec identity_spec(const Shape& in) {
  return {in, contiguous_strides(in), 0};
}

int64_t dim_of(int64_t dim, int64_t rank) {
  auto d = normalize_dim(dim, rank);
  if (!d) op_fail(d.error().message());
  return *d;
}

Shape infer_view_size(const Shape& in, IntList sizes) {
  const int64_t numel = shape_numel(in);
  int64_t known = 1;
  int infer_at = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      op_check(infer_at < 0, "only one dimension can be -1 in a view, got " + shape_text(sizes));
      infer_at = static_cast<int>(i);
    } else {
      op_check(sizes[i] >= 0,
               "invalid size " + std::to_string(sizes[i]) + " in " + shape_text(sizes));
      known = shape_numel({known, sizes[i]});  // saturates; the total is checked below
    }
  }
  if (infer_at >= 0) {
    op_check(known != 0 && numel % known == 0, "shape " + shape_text(sizes) +
                                                   " is invalid for a tensor of " +
                                                   std::to_string(numel) + " elements");
    sizes[static_cast<size_t>(infer_at)] = numel / known;
  }
  op_check(shape_numel(sizes) == numel, "shape " + shape_text(sizes) +
                                            " is invalid for a tensor of " + std::to_string(numel) +
                                            " elements");
  return sizes;
}

ViewSpec permute_spec(const Shape& in, const IntList& dims) {
  const auto rank = static_cast<int64_t>(in.size());
  op_check(static_cast<int64_t>(dims.size()) == rank,
           "permute needs " + std::to_string(rank) + " dims, got " + shape_text(dims));
  const Shape strides = contiguous_strides(in);
  ViewSpec spec;
  std::vector<bool> seen(in.size(), false);
  for (int64_t d : dims) {
    const auto n = static_cast<size_t>(dim_of(d, rank));
    op_check(!seen[n], "permute: dim " + std::to_string(d) + " repeats in " + shape_text(dims));
    seen[n] = true;
    spec.sizes.push_back(in[n]);
    spec.strides.push_back(strides[n]);
  }
  return spec;
}

// Reversed dims walk their input backwards: a negative stride from the last element.
ViewSpec flip_spec(const Shape& in, const IntList& dims) {
  const auto rank = static_cast<int64_t>(in.size());
  ViewSpec spec = identity_spec(in);
  std::vector<bool> seen(in.size(), false);
  for (int64_t d : dims) {
    const auto n = static_cast<size_t>(dim_of(d, rank));
    op_check(!seen[n],
             "flip: dim " + std::to_string(d) + " appears more than once in " + shape_text(dims));
    seen[n] = true;
    if (in[n] > 1) {
      spec.offset += (in[n] - 1) * spec.strides[n];
      spec.strides[n] = -spec.strides[n];
    }
  }
  return spec;
}

IntList transpose_dims(int64_t rank, int64_t a, int64_t b) {
  IntList dims(static_cast<size_t>(rank));
  std::iota(dims.begin(), dims.end(), 0);
  if (rank > 0)
    std::swap(dims[static_cast<size_t>(dim_of(a, rank))],
              dims[static_cast<size_t>(dim_of(b, rank))]);
  return dims;
}

ViewSpec select_spec(const Shape& in, int64_t dim, int64_t index) {
  op_check(!in.empty(), "select() cannot be applied to a 0-dim tensor");
  const auto d = static_cast<size_t>(dim_of(dim, static_cast<int64_t>(in.size())));
  op_check(index >= -in[d] && index < in[d],
           "select(): index " + std::to_string(index) + " out of range for dimension " +
               std::to_string(dim) + " of size " + std::to_string(in[d]));
  if (index < 0) index += in[d];
  ViewSpec spec = identity_spec(in);
  spec.offset = index * spec.strides[d];
  spec.sizes.erase(spec.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  spec.strides.erase(spec.strides.begin() + static_cast<std::ptrdiff_t>(d));
  return spec;
}

ViewSpec slice_spec(const Shape& in, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step) {
  op_check(!in.empty(), "slice() cannot be applied to a 0-dim tensor");
  op_check(step > 0, "slice step must be positive, got " + std::to_string(step));
  const auto d = static_cast<size_t>(dim_of(dim, static_cast<int64_t>(in.size())));
  const int64_t n = in[d];
  auto clamp = [n](int64_t v) {
    if (v < 0) v += n;
    return std::min(std::max<int64_t>(v, 0), n);
  };
  const int64_t s = clamp(start.value_or(0));
  const int64_t e = std::max(s, clamp(end.value_or(n)));
  ViewSpec spec = identity_spec(in);
  spec.offset = s * spec.strides[d];
  spec.sizes[d] = e > s ? (e - s - 1) / step + 1 : 0;
  spec.strides[d] *= step;
  return spec;
}

ViewSpec diagonal_spec(const Shape& in, int64_t offset, int64_t dim1, int64_t dim2) {
  const auto rank = static_cast<int64_t>(in.size());
  op_check(rank >= 2, "diagonal needs a tensor of rank 2 or more");
  const auto a = static_cast<size_t>(dim_of(dim1, rank));
  const auto b = static_cast<size_t>(dim_of(dim2, rank));
  op_check(a != b, "diagonal dimensions cannot be identical " + std::to_string(dim1) + ", " +
                       std::to_string(dim2));
  const Shape strides = contiguous_strides(in);
  ViewSpec spec;
  int64_t length = 0;
  if (offset >= 0) {
    length = std::max<int64_t>(std::min(in[a], in[b] - offset), 0);
    spec.offset = length > 0 ? offset * strides[b] : 0;
  } else {
    length = std::max<int64_t>(std::min(in[a] + offset, in[b]), 0);
    spec.offset = length > 0 ? -offset * strides[a] : 0;
  }
  for (size_t d = 0; d < in.size(); ++d) {
    if (d == a || d == b) continue;
    spec.sizes.push_back(in[d]);
    spec.strides.push_back(strides[d]);
  }
  spec.sizes.push_back(length);
  spec.strides.push_back(strides[a] + strides[b]);
  return spec;
}

// unfold: windows of `size` every `step` along `dim`, the window as a new last dim.
ViewSpec unfold_spec(const Shape& in, int64_t dimension, int64_t size, int64_t step) {
  const auto rank = static_cast<int64_t>(in.size());
  op_check(rank >= 1, "unfold: expects at least one dim");
  const auto d = static_cast<size_t>(dim_of(dimension, rank));
  op_check(step > 0, "unfold: step must be positive, got " + std::to_string(step));
  op_check(size >= 0 && size <= in[d], "unfold: a window of " + std::to_string(size) +
                                           " does not fit dim " + std::to_string(d) + " of " +
                                           shape_text(in));
  ViewSpec spec = identity_spec(in);
  const int64_t along = spec.strides[d];
  spec.sizes[d] = (in[d] - size) / step + 1;
  spec.strides[d] = along * step;
  spec.sizes.push_back(size);
  spec.strides.push_back(along);
  return spec;
}

ViewSpec expand_spec(const Shape& in, const IntList& sizes) {
  op_check(sizes.size() >= in.size(),
           "expand: the number of sizes (" + std::to_string(sizes.size()) +
               ") must be at least the tensor's rank (" + std::to_string(in.size()) + ")");
  const Shape strides = contiguous_strides(in);
  const size_t lead = sizes.size() - in.size();
  ViewSpec spec;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i < lead) {
      op_check(sizes[i] >= 0, "expand: size -1 is not allowed in a new leading dimension");
      spec.sizes.push_back(sizes[i]);
      spec.strides.push_back(0);
      continue;
    }
    const int64_t have = in[i - lead];
    const int64_t want = sizes[i] == -1 ? have : sizes[i];
    op_check(have == want || have == 1, "expand: size " + std::to_string(have) +
                                            " cannot expand to " + std::to_string(want) +
                                            " at dim " + std::to_string(i));
    spec.sizes.push_back(want);
    spec.strides.push_back(have == want ? strides[i - lead] : 0);
  }
  return spec;
}

ViewSpec squeeze_spec(const Shape& in, const std::optional<IntList>& dims) {
  std::vector<bool> drop(in.size(), false);
  if (!dims) {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  } else {
    for (int64_t dim : *dims) {
      const auto d = dim_of(dim, static_cast<int64_t>(in.size()));
      if (!in.empty()) drop[static_cast<size_t>(d)] = in[static_cast<size_t>(d)] == 1;
    }
  }
  const Shape strides = contiguous_strides(in);
  ViewSpec spec;
  for (size_t d = 0; d < in.size(); ++d) {
    if (drop[d]) continue;
    spec.sizes.push_back(in[d]);
    spec.strides.push_back(strides[d]);
  }
  return spec;
}

ViewSpec unsqueeze_spec(const Shape& in, int64_t dim) {
  const auto rank = static_cast<int64_t>(in.size()) + 1;
  op_check(dim >= -rank && dim < rank, "unsqueeze: dim " + std::to_string(dim) +
                                           " out of range for rank " + std::to_string(rank - 1));
  if (dim < 0) dim += rank;
  ViewSpec spec = identity_spec(in);
  const int64_t stride = static_cast<size_t>(dim) < in.size()
                             ? spec.strides[static_cast<size_t>(dim)] * in[static_cast<size_t>(dim)]
                             : 1;
  spec.sizes.insert(spec.sizes.begin() + dim, 1);
  spec.strides.insert(spec.strides.begin() + dim, stride);
  return spec;
}

ViewSpec as_strided_spec(const Shape& in, const IntList& sizes, const IntList& strides,
                         std::optional<int64_t> offset) {
  op_check(sizes.size() == strides.size(), "as_strided: sizes " + shape_text(sizes) +
                                               " and strides " + shape_text(strides) +
                                               " differ in length");
  ViewSpec spec{sizes, strides, offset.value_or(0)};
  int64_t last = spec.offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    op_check(sizes[d] >= 0 && strides[d] >= 0,
             "as_strided: negative sizes and strides are not supported");
    if (sizes[d] == 0) return spec;
    int64_t span = 0;
    op_check(!__builtin_mul_overflow(sizes[d] - 1, strides[d], &span) &&
                 !__builtin_add_overflow(last, span, &last),
             "as_strided: the view's extent overflows");
  }
  op_check(spec.offset >= 0 && last < shape_numel(in),
           "as_strided: the view reaches element " + std::to_string(last) + " of a tensor of " +
               std::to_string(shape_numel(in)) + " elements");
  return spec;
}

HostTensor read_view(const HostTensor& x, const ViewSpec& spec) {
  const HostTensor contiguous = x.contiguous();
  auto storage = std::make_shared<std::vector<std::byte>>(contiguous.bytes().begin(),
                                                          contiguous.bytes().end());
  auto view =
      HostTensor::strided(TensorType{x.dtype(), spec.sizes, spec.strides}, storage, spec.offset);
  if (!view) op_bug("view reference: " + view.error().message());
  return view->contiguous();
}

using SpecFn = std::function<ViewSpec(const ArgView&, const Shape&)>;

// A single-output view from its spec; `decompose` for the non-core spellings.
OpRow view_row(const std::string& overload, SpecFn spec, DecomposeFn decompose = nullptr) {
  return {overload,
          [spec](const InferContext& c) {
            const TensorType x = c.type(0);
            return std::vector{TensorType::contiguous(x.dtype, spec(c, x.sizes).sizes)};
          },
          [spec](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            return std::vector{read_view(x, spec(c, x.sizes()))};
          },
          std::move(decompose),
          [spec](const ArgView& c, const Shape& in) { return std::vector{spec(c, in)}; }};
}

// Split sizes along `dim`, for split_with_sizes, split and unbind.
std::vector<ViewSpec> split_specs(const Shape& in, const IntList& sizes, int64_t dim) {
  op_check(!in.empty(), "split cannot be applied to a 0-dim tensor");
  const auto d = static_cast<size_t>(dim_of(dim, static_cast<int64_t>(in.size())));
  int64_t total = 0;
  for (int64_t s : sizes) {
    op_check(s >= 0, "split sizes must be non-negative, got " + shape_text(sizes));
    total += s;
  }
  op_check(total == in[d], "split sizes " + shape_text(sizes) +
                               " do not sum to the dimension's size " + std::to_string(in[d]));
  std::vector<ViewSpec> specs;
  int64_t start = 0;
  for (int64_t s : sizes) {
    specs.push_back(slice_spec(in, dim, start, start + s, 1));
    start += s;
  }
  return specs;
}

IntList chunk_sizes(int64_t length, int64_t split) {
  op_check(split > 0 || length == 0, "split size must be positive, got " + std::to_string(split));
  IntList sizes;
  for (int64_t start = 0; start < length; start += split)
    sizes.push_back(std::min(split, length - start));
  if (sizes.empty()) sizes.push_back(0);
  return sizes;
}

using SplitFn = std::function<std::vector<ViewSpec>(const ArgView&, const Shape&)>;

OpRow split_row(const std::string& overload, SplitFn specs, DecomposeFn decompose = nullptr) {
  return {overload,
          [specs](const InferContext& c) {
            const TensorType x = c.type(0);
            std::vector<TensorType> types;
            for (const auto& s : specs(c, x.sizes))
              types.push_back(TensorType::contiguous(x.dtype, s.sizes));
            return types;
          },
          [specs](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            std::vector<HostTensor> outs;
            for (const auto& s : specs(c, x.sizes())) outs.push_back(read_view(x, s));
            return outs;
          },
          std::move(decompose), specs};
}

}  // namespace

std::vector<OpRow> view_ops() {
  std::vector<OpRow> rows;
  rows.push_back(view_row("aten.alias.default",
                          [](const ArgView&, const Shape& in) { return identity_spec(in); }));
  rows.push_back(view_row("aten.view.default", [](const ArgView& c, const Shape& in) {
    return identity_spec(infer_view_size(in, c.get_ints(1)));
  }));
  rows.push_back(view_row("aten.permute.default", [](const ArgView& c, const Shape& in) {
    return permute_spec(in, c.get_ints(1));
  }));
  rows.push_back(view_row("aten.flip.default", [](const ArgView& c, const Shape& in) {
    return flip_spec(in, c.get_ints(1));
  }));
  rows.push_back(view_row("aten.unfold.default", [](const ArgView& c, const Shape& in) {
    return unfold_spec(in, c.get_int(1), c.get_int(2), c.get_int(3));
  }));
  rows.push_back(view_row("aten.expand.default", [](const ArgView& c, const Shape& in) {
    return expand_spec(in, c.get_ints(1));
  }));
  rows.push_back(view_row("aten.select.int", [](const ArgView& c, const Shape& in) {
    return select_spec(in, c.get_int(1), c.get_int(2));
  }));
  rows.push_back(view_row("aten.slice.Tensor", [](const ArgView& c, const Shape& in) {
    return slice_spec(in, c.get_int(1), c.opt_int(2), c.opt_int(3), c.get_int(4));
  }));
  rows.push_back(view_row("aten.diagonal.default", [](const ArgView& c, const Shape& in) {
    return diagonal_spec(in, c.get_int(1), c.get_int(2), c.get_int(3));
  }));
  rows.push_back(view_row("aten.squeeze.dim", [](const ArgView& c, const Shape& in) {
    return squeeze_spec(in, IntList{c.get_int(1)});
  }));
  rows.push_back(view_row("aten.squeeze.dims", [](const ArgView& c, const Shape& in) {
    return squeeze_spec(in, c.get_ints(1));
  }));
  rows.push_back(view_row("aten.unsqueeze.default", [](const ArgView& c, const Shape& in) {
    return unsqueeze_spec(in, c.get_int(1));
  }));
  rows.push_back(view_row("aten.as_strided.default", [](const ArgView& c, const Shape& in) {
    return as_strided_spec(in, c.get_ints(1), c.get_ints(2), c.opt_int(3));
  }));

  // Spellings exported graphs still carry, decomposed into the core views above.
  rows.push_back(view_row(
      "aten.reshape.default",
      [](const ArgView& c, const Shape& in) {
        return identity_spec(infer_view_size(in, c.get_ints(1)));
      },
      [](const DecomposeContext& c) {
        return std::vector{c.b.op("aten.view.default", {c.tensor(0), c.mapped(1)})};
      }));
  rows.push_back(view_row(
      "aten.flatten.using_ints",
      [](const ArgView& c, const Shape& in) {
        if (in.empty()) return identity_spec({1});
        const auto rank = static_cast<int64_t>(in.size());
        const int64_t s = dim_of(c.get_int(1), rank), e = dim_of(c.get_int(2), rank);
        op_check(s <= e, "flatten: start_dim cannot come after end_dim");
        Shape sizes(in.begin(), in.begin() + s);
        sizes.push_back(shape_numel(Shape(in.begin() + s, in.begin() + e + 1)));
        sizes.insert(sizes.end(), in.begin() + e + 1, in.end());
        return identity_spec(sizes);
      },
      [](const DecomposeContext& c) {
        return std::vector{
            c.b.op("aten.view.default", {c.tensor(0), IntList(c.out_types[0].sizes)})};
      }));
  rows.push_back(view_row(
      "aten.transpose.int",
      [](const ArgView& c, const Shape& in) {
        return permute_spec(
            in, transpose_dims(static_cast<int64_t>(in.size()), c.get_int(1), c.get_int(2)));
      },
      [](const DecomposeContext& c) {
        return std::vector{
            c.b.op("aten.permute.default",
                   {c.tensor(0), transpose_dims(c.type(0).rank(), c.get_int(1), c.get_int(2))})};
      }));
  rows.push_back(view_row(
      "aten.t.default",
      [](const ArgView& c, const Shape& in) {
        op_check(in.size() <= 2, c.schema().op + " expects a tensor of rank 2 or less, got rank " +
                                     std::to_string(in.size()));
        return permute_spec(in, transpose_dims(static_cast<int64_t>(in.size()), 0, -1));
      },
      [](const DecomposeContext& c) {
        return std::vector{
            c.b.op("aten.permute.default", {c.tensor(0), transpose_dims(c.type(0).rank(), 0, -1)})};
      }));
  rows.push_back(view_row(
      "aten.squeeze.default",
      [](const ArgView&, const Shape& in) { return squeeze_spec(in, std::nullopt); },
      [](const DecomposeContext& c) {
        IntList dims;
        const Shape& in = c.type(0).sizes;
        for (size_t d = 0; d < in.size(); ++d) {
          if (in[d] == 1) dims.push_back(static_cast<int64_t>(d));
        }
        return std::vector{c.b.op("aten.squeeze.dims", {c.tensor(0), dims})};
      }));

  rows.push_back(split_row("aten.split_with_sizes.default", [](const ArgView& c, const Shape& in) {
    return split_specs(in, c.get_ints(1), c.get_int(2));
  }));
  rows.push_back(split_row(
      "aten.split.Tensor",
      [](const ArgView& c, const Shape& in) {
        op_check(!in.empty(), "split cannot be applied to a 0-dim tensor");
        const int64_t d = dim_of(c.get_int(2), static_cast<int64_t>(in.size()));
        return split_specs(in, chunk_sizes(in[static_cast<size_t>(d)], c.get_int(1)), c.get_int(2));
      },
      [](const DecomposeContext& c) {
        const Shape& in = c.type(0).sizes;
        const int64_t d = dim_of(c.get_int(2), static_cast<int64_t>(in.size()));
        return c.b.ops(
            "aten.split_with_sizes.default",
            {c.tensor(0), chunk_sizes(in[static_cast<size_t>(d)], c.get_int(1)), c.get_int(2)});
      }));
  rows.push_back(split_row(
      "aten.unbind.int",
      [](const ArgView& c, const Shape& in) {
        op_check(!in.empty(), "unbind cannot be applied to a 0-dim tensor");
        const auto d = static_cast<size_t>(dim_of(c.get_int(1), static_cast<int64_t>(in.size())));
        std::vector<ViewSpec> specs;
        for (int64_t i = 0; i < in[d]; ++i) specs.push_back(select_spec(in, c.get_int(1), i));
        return specs;
      },
      [](const DecomposeContext& c) {
        const Shape& in = c.type(0).sizes;
        const auto d = static_cast<size_t>(dim_of(c.get_int(1), static_cast<int64_t>(in.size())));
        std::vector<ValueRef> outs;
        for (int64_t i = 0; i < in[d]; ++i)
          outs.push_back(c.b.op("aten.select.int", {c.tensor(0), c.get_int(1), i}));
        return outs;
      }));
  return rows;
}

}  // namespace kiln
