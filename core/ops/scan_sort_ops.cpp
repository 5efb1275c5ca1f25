// cumsum, cumprod, sort and topk along one dim: shape and dtype inference and references that walk
// each line (the elements along the dim for one position of the other dims).
#include <algorithm>
#include <numeric>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/scan_sort_order.h"

namespace kiln {
namespace {

// The dim (normalized, checked) and the lines along it: line l, element k is at
// base(l) + k * stride of a contiguous tensor.
struct Lines {
  size_t dim = 0;
  int64_t length = 1, stride = 1, count = 1;
  int64_t base(int64_t l) const { return l / stride * stride * length + l % stride; }
};

Lines lines_of(const Shape& sizes, int64_t dim, const std::string& op) {
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(sizes.size()), 1);
  auto d = normalize_dim(dim, rank);
  op_check(d.has_value(), op + ": dim " + std::to_string(dim) + " is out of range");
  Lines l;
  l.dim = static_cast<size_t>(*d);
  if (sizes.empty()) return l;
  l.length = sizes[l.dim];
  l.stride =
      shape_numel(Shape(sizes.begin() + static_cast<std::ptrdiff_t>(l.dim) + 1, sizes.end()));
  l.count = l.length == 0 ? 0 : shape_numel(sizes) / l.length;
  return l;
}

// cumsum/cumprod(self, dim, *, dtype=None): integers and bools combine as int64 unless dtype
// says; int64 wraps on overflow, as PyTorch's does.
OpRow scan_row(const std::string& name, bool product) {
  return {"aten." + name + ".default",
          [name](const InferContext& c) {
            const TensorType x = c.type(0);
            lines_of(x.sizes, c.get_int(1), name);
            const DType out = c.opt_dtype(2).value_or(is_floating(x.dtype) ? x.dtype : DType::I64);
            return one(out, x.sizes);
          },
          [name, product](const RefContext& c) {
            const HostTensor x = c.tensor(0).to(c.out_types[0].dtype);
            const Lines l = lines_of(x.sizes(), c.get_int(1), name);
            HostTensor out = c.output(0);
            const bool exact = !is_floating(out.dtype());
            for (int64_t line = 0; line < l.count; ++line) {
              double so_far = product ? 1 : 0;
              uint64_t iso_far = product ? 1 : 0;
              for (int64_t k = 0; k < l.length; ++k) {
                const int64_t at = l.base(line) + k * l.stride;
                if (exact) {
                  const auto v = static_cast<uint64_t>(x.get_int(at));
                  iso_far = product ? iso_far * v : iso_far + v;
                  out.set_int(at, static_cast<int64_t>(iso_far));
                } else {
                  so_far = product ? so_far * x.get(at) : so_far + x.get(at);
                  out.set(at, so_far);
                }
              }
            }
            return std::vector{out};
          }};
}

// The first `keep` elements of each line in sorted order: values and original indices.
std::vector<HostTensor> sorted_lines(const RefContext& c, const HostTensor& x, const Lines& l,
                                     bool descending, int64_t keep) {
  HostTensor values = c.output(0), indices = c.output(1);
  std::vector<int64_t> order(static_cast<size_t>(l.length));
  for (int64_t line = 0; line < l.count; ++line) {
    const int64_t base = l.base(line);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const int64_t at = base + a * l.stride, bt = base + b * l.stride;
      if (!is_floating(x.dtype()))
        return sorts_before(x.get_int(at), a, x.get_int(bt), b, descending);
      return sorts_before(x.get(at), a, x.get(bt), b, descending);
    });
    const int64_t out_base = line / l.stride * l.stride * keep + line % l.stride;
    for (int64_t k = 0; k < keep; ++k) {
      const int64_t from = order[static_cast<size_t>(k)];
      copy_element(values, out_base + k * l.stride, x, base + from * l.stride);
      indices.set_int(out_base + k * l.stride, from);
    }
  }
  return {values, indices};
}

// sort(self, dim=-1, descending=False) -> (values, indices)
OpRow sort_row() {
  return {"aten.sort.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            lines_of(x.sizes, c.get_int(1), "sort");
            return std::vector{TensorType::contiguous(x.dtype, x.sizes),
                               TensorType::contiguous(DType::I64, x.sizes)};
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Lines l = lines_of(x.sizes(), c.get_int(1), "sort");
            return sorted_lines(c, x, l, c.get_bool(2), l.length);
          }};
}

// topk(self, k, dim=-1, largest=True, sorted=True) -> (values, indices); always sorted.
OpRow topk_row() {
  return {"aten.topk.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            const Lines l = lines_of(x.sizes, c.get_int(2), "topk");
            const int64_t k = c.get_int(1);
            op_check(k >= 0 && k <= l.length, "topk: k (" + std::to_string(k) +
                                                  ") must be in [0, " + std::to_string(l.length) +
                                                  "], the size of the dim");
            Shape out = x.sizes;
            if (!out.empty()) out[l.dim] = k;
            return std::vector{TensorType::contiguous(x.dtype, out),
                               TensorType::contiguous(DType::I64, out)};
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Lines l = lines_of(x.sizes(), c.get_int(2), "topk");
            return sorted_lines(c, x, l, c.get_bool(3), c.get_int(1));
          }};
}

}  // namespace

std::vector<OpRow> scan_sort_ops() {
  return {scan_row("cumsum", false), scan_row("cumprod", true), sort_row(), topk_row()};
}

}  // namespace kiln
