#include "core/graph/tensor_type.h"

#include <algorithm>
#include <cstdint>

namespace kiln {

namespace {

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  return out;
}

}  // namespace

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size(), 1);
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride = saturating_mul(stride, std::max<int64_t>(sizes[i], 1));
  }
  return strides;
}

int64_t shape_numel(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n = saturating_mul(n, s);
  return n;
}

int64_t storage_extent(const TensorType& t) {
  if (t.numel() == 0) return 0;
  int64_t extent = 1;
  for (size_t i = 0; i < t.sizes.size() && i < t.strides.size(); ++i) {
    if (__builtin_add_overflow(extent, saturating_mul(t.sizes[i] - 1, t.strides[i]), &extent))
      return INT64_MAX;
  }
  return extent;
}

Status check_shape(const Shape& sizes) {
  for (int64_t s : sizes) {
    if (s < 0) return Error::user("shape " + shape_text(sizes) + " has a negative size");
    if (s > kMaxDimSize)
      return Error::user("shape " + shape_text(sizes) +
                         " has a dimension above kiln's limit of 2^40");
  }
  if (shape_numel(sizes) > kMaxElements) {
    return Error::user("shape " + shape_text(sizes) +
                       " has more than 2^46 elements, above kiln's limit");
  }
  return Ok{};
}

std::string shape_text(const Shape& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

TensorType TensorType::contiguous(DType dtype, Shape sizes) {
  Shape strides = contiguous_strides(sizes);
  return TensorType{dtype, std::move(sizes), std::move(strides)};
}

bool TensorType::is_contiguous() const {
  // Strides of size-1 dims do not matter.
  const Shape expected = contiguous_strides(sizes);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] != 1 && strides[i] != expected[i]) return false;
  }
  return true;
}

std::string TensorType::to_string() const {
  std::string text = std::string(dtype_name(dtype)) + shape_text(sizes);
  if (!is_contiguous()) {
    std::string s = shape_text(strides);
    text += "{" + s.substr(1, s.size() - 2) + "}";
  }
  return text;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      return Error::user("shapes " + shape_text(a) + " and " + shape_text(b) +
                         " do not broadcast (dim " + std::to_string(i) + ": " + std::to_string(x) +
                         " vs " + std::to_string(y) + ")");
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Result<int64_t> normalize_dim(int64_t dim, int64_t rank) {
  const int64_t bound = std::max<int64_t>(rank, 1);
  if (dim < -bound || dim >= bound) {
    return Error::user("dim " + std::to_string(dim) + " is out of range for a tensor of rank " +
                       std::to_string(rank));
  }
  return dim < 0 ? dim + bound : dim;
}

}  // namespace kiln
