// Small helpers every op table uses: one-output type lists and row-major index arithmetic.
#pragma once

#include <vector>

#include "core/graph/host_tensor.h"

namespace kiln {

inline std::vector<TensorType> one(DType dtype, Shape sizes) {
  return {TensorType::contiguous(dtype, std::move(sizes))};
}

// Row-major linear index <-> multi-index.
inline Shape unravel(int64_t i, const Shape& sizes) {
  Shape index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = i % sizes[d];
    i /= sizes[d];
  }
  return index;
}

inline int64_t ravel(const Shape& index, const Shape& sizes) {
  int64_t i = 0;
  for (size_t d = 0; d < sizes.size(); ++d) i = i * sizes[d] + index[d];
  return i;
}

// out[o] = in[i], exactly for integers, through double for floats.
inline void copy_element(HostTensor& out, int64_t o, const HostTensor& in, int64_t i) {
  if (is_floating(out.dtype())) {
    out.set(o, in.get(i));
  } else {
    out.set_int(o, in.get_int(i));
  }
}

}  // namespace kiln
