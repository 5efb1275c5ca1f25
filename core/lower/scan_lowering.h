// A scan along one dim: one Reduction kernel over the other dims whose reduction walks the dim
// in order with a running sum, product, max or min (a KIR scan), O(n) per line. cumsum,
// cumprod, masked_scatter (positions of the selected elements) and embedding_bag (bag numbers)
// use it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/lower/lower_context.h"

namespace kiln {

// The element at coordinates `at` (over the scanned shape).
using ScanElement = std::function<int(KernelBuilder& kb, const std::vector<Expr>& at)>;
// Receives the kernel, the coordinates of its element over the scanned shape and the running
// value up to and including it, in the accumulation dtype; stores and emits it.
using ScanFinish = std::function<void(KernelBuilder& kb, const std::vector<Expr>& at, int so_far)>;

// `kind`: one of kScanKinds.
void scan(NodeLowering& n, const std::string& kind, const Shape& sizes, size_t dim, DType acc,
          const ScanElement& element, const ScanFinish& finish);

}  // namespace kiln
