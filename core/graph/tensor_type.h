// Tensor types: dtype, sizes and strides (in elements). Sizes are concrete integers today;
// they sit behind Shape so that symbolic sizes change this file, not every op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/dtype.h"
#include "core/support/result.h"

namespace kiln {

using Shape = std::vector<int64_t>;

// Limits on what kiln accepts, far above any real tensor, so that every size, stride and
// byte count computed from them fits in int64 without overflow.
inline constexpr int64_t kMaxDimSize = int64_t{1} << 40;
inline constexpr int64_t kMaxElements = int64_t{1} << 46;

Shape contiguous_strides(const Shape& sizes);  // saturates instead of overflowing
int64_t shape_numel(const Shape& sizes);       // saturates at INT64_MAX instead of overflowing
// Ok when every size is in [0, kMaxDimSize] and the product at most kMaxElements.
Status check_shape(const Shape& sizes);
std::string shape_text(const Shape& sizes);  // "[2, 3]"

struct TensorType {
  DType dtype = DType::F32;
  Shape sizes;
  Shape strides;  // same rank as sizes

  static TensorType contiguous(DType dtype, Shape sizes);

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const { return shape_numel(sizes); }
  bool is_contiguous() const;
  // "f32[32, 1024]"; strides follow in braces when not contiguous: "f32[3, 2]{1, 3}".
  std::string to_string() const;
  bool operator==(const TensorType&) const = default;
};

// NumPy/PyTorch broadcasting of two shapes; the error names both.
// Elements the storage of a tensor of type `t` spans: 1 + sum of (size - 1) * stride, 0 when
// it is empty. Saturates instead of overflowing.
int64_t storage_extent(const TensorType& t);

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// A dim in [-rank, rank) made non-negative; rank 0 accepts -1 and 0 as PyTorch does.
Result<int64_t> normalize_dim(int64_t dim, int64_t rank);

}  // namespace kiln
