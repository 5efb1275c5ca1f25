// Shared pieces of reduction ops: which dims reduce, the result shape, and a walk that
// pairs each input element with its output slot.
#pragma once

#include <optional>
#include <vector>

#include "core/ops/op_def.h"

namespace kiln {

// Dims to reduce: None or an empty list means all of them. Errors on repeats or bad dims.
std::vector<bool> reduced_mask(int64_t rank, const std::optional<IntList>& dims);
Shape reduced_shape(const Shape& in, const std::vector<bool>& mask, bool keepdim);
int64_t reduced_count(const Shape& in, const std::vector<bool>& mask);

// For each input element (row-major): the output element it folds into, and its position
// inside its group (row-major over the reduced dims).
struct ReduceWalk {
  std::vector<int64_t> out_index;
  std::vector<int64_t> inner_index;
};
ReduceWalk reduce_walk(const Shape& in, const std::vector<bool>& mask);

// softmax / log_softmax of `x` along `dim`, computed in f64, stored as `out`.
HostTensor softmax_reference(const HostTensor& x, int64_t dim, const TensorType& out, bool log);

}  // namespace kiln
