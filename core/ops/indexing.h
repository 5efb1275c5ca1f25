// Shared by indexing and scatter ops: bounds-checked indices and the layout of advanced
// indexing (x[idx0, :, idx2]), which index.Tensor reads through and index_put writes through.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ops/op_def.h"
#include "core/ops/op_error.h"

namespace kiln {

// `index` in [-size, size) made non-negative; anything else is an error naming `op`.
int64_t checked_index(int64_t index, int64_t size, const std::string& op);
void require_index_dtype(const TensorType& t, const std::string& op);

struct AdvancedIndex {
  std::vector<int> indexed;  // dims that have an index tensor
  std::vector<size_t> kept;  // dims taken whole
  Shape broadcast;           // the index tensors broadcast together
  bool adjacent = false;     // indexed dims form one block: its result goes where the block was
  size_t insert_at = 0;
  Shape result;

  // The row-major index into `self` that result element `out_linear` reads.
  int64_t source(int64_t out_linear, const Shape& self,
                 const std::vector<std::optional<HostTensor>>& index_values,
                 const std::string& op) const;
};

AdvancedIndex plan_advanced_index(const Shape& self,
                                  const std::vector<std::optional<TensorType>>& indices,
                                  const std::string& op);

}  // namespace kiln
