// Products whose output rows are not a whole 16 bytes apart, such as GPT-2's 50257-word head in
// bf16, send cuBLAS (and rocBLAS) to their unaligned kernels, several times slower. Rows r,
// r + g, r + 2g, ... (g elements per 16 bytes) all start at the same place within 16 bytes, so
// each such set of rows, its columns started at the first 16-byte boundary, is an aligned
// product of its own with rows g * n apart, written where it belongs: no scratch copy. The few
// columns at either edge that the sets leave out come from two narrow products over all rows.
#pragma once

#include <cstdint>
#include <vector>

#include "plugins/kir_support/matmul_call.h"

namespace kiln::kir_support {

// One product of a call split by aligned_row_groups: `call` (batch 1) written at `out_offset`
// elements from the output's start, its rows `out_row` elements apart.
struct MatmulPiece {
  MatmulCall call;
  int64_t out_offset = 0, out_row = 0;
  bool aligned = false;  // its operands and output start 16 bytes apart, rows whole 16 bytes
};

// The pieces (the two edges first, then a row set per 16-byte phase) that together write
// every element of `c`'s contiguous output, or none where the split does not apply: output
// rows already whole 16 bytes, fewer than 2 elements per 16 bytes, fewer than two 16 bytes of
// columns, fewer than two rows per set, sizes past a BLAS library's int, A's rows not
// contiguous and 16 bytes apart,
// B's columns not contiguous and 16 bytes apart (a column shift then breaks B's alignment), or
// batches that do not stack into rows (B shared, A's batches one after another).
// Elements written by an edge and by a row set get the row set's value (it comes later).
std::vector<MatmulPiece> aligned_row_groups(const MatmulCall& c);

}  // namespace kiln::kir_support
