// A scan along one dim: one Reduction kernel over the other dims whose reduction walks the dim
// in order with a running sum or product (a KIR scan), O(n) per line. Few long lines (a
// vocabulary per sample, one flattened mask) would leave a GPU idle on one walk per line, so
// those are cut into segments: each segment's total, the totals scanned per line, then every
// segment scanned from the totals before it (two reads of the input instead of one). cumsum,
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
// Receives the kernel, the coordinates of its element over the scanned shape, the running
// value up to and including it (in the accumulation dtype) and the mask its stores take (-1:
// none; a segment past the line's end computes clamped elements and stores nothing); stores
// and emits it.
using ScanFinish =
    std::function<void(KernelBuilder& kb, const std::vector<Expr>& at, int so_far, int mask)>;

// `kind`: "sum" or "prod".
void scan(NodeLowering& n, const std::string& kind, const Shape& sizes, size_t dim, DType acc,
          const ScanElement& element, const ScanFinish& finish);

}  // namespace kiln
