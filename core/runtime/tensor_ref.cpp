#include "core/runtime/tensor_ref.h"

#include <cstring>

namespace kiln {
namespace {

// Calls f(linear index, element offset) for every element of `t` in row-major order.
template <class F>
void for_each_offset(const TensorType& t, F f) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const size_t rank = t.sizes.size();
  std::vector<int64_t> at(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, offset);
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < t.sizes[d]) {
        offset += t.strides[d];
        break;
      }
      offset -= t.strides[d] * (t.sizes[d] - 1);
      at[d] = 0;
    }
  }
}

}  // namespace

ElementSpan element_span(const TensorType& t) {
  if (t.numel() == 0) return {};
  ElementSpan s{0, 0};
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    const int64_t reach = (t.sizes[d] - 1) * t.strides[d];
    (reach < 0 ? s.low : s.high) += reach;
  }
  return s;
}

void gather_elements(const TensorType& t, const std::byte* base, std::span<std::byte> dense) {
  const size_t size = dtype_size(t.dtype);
  for_each_offset(t, [&](int64_t i, int64_t offset) {
    std::memcpy(dense.data() + static_cast<size_t>(i) * size,
                base + offset * static_cast<int64_t>(size), size);
  });
}

void scatter_elements(const TensorType& t, std::span<const std::byte> dense, std::byte* base) {
  const size_t size = dtype_size(t.dtype);
  for_each_offset(t, [&](int64_t i, int64_t offset) {
    std::memcpy(base + offset * static_cast<int64_t>(size),
                dense.data() + static_cast<size_t>(i) * size, size);
  });
}

}  // namespace kiln
