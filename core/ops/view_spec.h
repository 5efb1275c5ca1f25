// A view as sizes, strides and an offset over its input read as contiguous. View ops
// describe themselves with these: inference takes the sizes, the reference reads through
// them, and lowering turns them into index expressions.
#pragma once

#include <functional>
#include <vector>

#include "core/graph/tensor_type.h"

namespace kiln {

class ArgView;

struct ViewSpec {
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
};

// One spec per output of the view op (split-like ops have several).
using ViewSpecsFn = std::function<std::vector<ViewSpec>(const ArgView&, const Shape&)>;

}  // namespace kiln
