// The value of one op argument: a tensor reference, a literal, or a list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/graph/dtype.h"

namespace kiln {

// A tensor value of a graph: an index into Graph::values.
struct ValueRef {
  int32_t id = -1;
  bool valid() const { return id >= 0; }
  bool operator==(const ValueRef&) const = default;
};

struct None {
  bool operator==(const None&) const = default;
};

using IntList = std::vector<int64_t>;
using ints = IntList;  // reads naturally in builder calls: ints{-1}
// float[] (scale factors): a list given as integers becomes one when the schema says float[].
using FloatList = std::vector<double>;

// Tensor[] and Tensor?[]: absent entries are nullopt.
struct TensorList {
  std::vector<std::optional<ValueRef>> items;
  bool operator==(const TensorList&) const = default;
};

// A number in a Tensor position is a "wrapped scalar" (PyTorch promotes it more weakly
// than a tensor): bool, int64_t or double there.
using ArgValue = std::variant<None, ValueRef, bool, int64_t, double, std::string, DType, IntList,
                              TensorList, FloatList>;

inline ArgValue arg(int v) {
  return ArgValue{static_cast<int64_t>(v)};
}

}  // namespace kiln
