#include "core/ops/reduce_util.h"

#include "core/ops/op_error.h"

namespace kiln {

std::vector<bool> reduced_mask(int64_t rank, const std::optional<IntList>& dims) {
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  if (!dims || dims->empty()) {
    mask.assign(static_cast<size_t>(rank), true);
    return mask;
  }
  for (int64_t d : *dims) {
    auto n = normalize_dim(d, rank);
    if (!n) op_fail(n.error().message());
    if (rank == 0) continue;
    op_check(!mask[static_cast<size_t>(*n)],
             "dim " + std::to_string(d) + " appears twice in the reduction dims");
    mask[static_cast<size_t>(*n)] = true;
  }
  return mask;
}

Shape reduced_shape(const Shape& in, const std::vector<bool>& mask, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!mask[d])
      out.push_back(in[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Shape& in, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    if (mask[d]) n *= in[d];
  }
  return n;
}

ReduceWalk reduce_walk(const Shape& in, const std::vector<bool>& mask) {
  const int64_t numel = shape_numel(in);
  ReduceWalk walk;
  walk.out_index.resize(static_cast<size_t>(numel));
  walk.inner_index.resize(static_cast<size_t>(numel));
  Shape index(in.size(), 0);
  for (int64_t i = 0; i < numel; ++i) {
    int64_t out = 0, inner = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (mask[d])
        inner = inner * in[d] + index[d];
      else
        out = out * in[d] + index[d];
    }
    walk.out_index[static_cast<size_t>(i)] = out;
    walk.inner_index[static_cast<size_t>(i)] = inner;
    for (size_t d = in.size(); d-- > 0;) {  // advance the row-major counter
      if (++index[d] < in[d]) break;
      index[d] = 0;
    }
  }
  return walk;
}

}  // namespace kiln
