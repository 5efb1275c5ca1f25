// Memory a caller owns, described for a run: a pointer, a dtype, sizes and strides (in
// elements), on the host or on the compiled graph's device. The C runtime API turns DLPack
// tensors into these; the core reads and writes them in place when their layout is the one
// the program uses, and copies through the host otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/graph/tensor_type.h"

namespace kiln {

struct TensorRef {
  void* data = nullptr;
  TensorType type;         // dtype, sizes and strides (elements, may be negative)
  bool on_device = false;  // on the compiled graph's device; else host memory
};

// The elements a strided layout spans, relative to its data pointer: [low, high] inclusive
// (low <= 0). Empty tensors span nothing (high < low).
struct ElementSpan {
  int64_t low = 0, high = -1;
};
ElementSpan element_span(const TensorType& t);

// Element i (row-major) of `t` at `base` (host memory) copied to or from dense bytes.
void gather_elements(const TensorType& t, const std::byte* base, std::span<std::byte> dense);
void scatter_elements(const TensorType& t, std::span<const std::byte> dense, std::byte* base);

}  // namespace kiln
