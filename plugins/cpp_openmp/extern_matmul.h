// The "mm" and "bmm" externs: OpenBLAS sgemm/dgemm when the dtype and strides allow it
// (row-major with unit stride on one side of each operand), otherwise a plain loop that
// accumulates floats in double and integers in wrapping int64.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::cpu {

// params: dtype, batch, m, n, k, then (offset, batch, row, col strides) of a and of b,
// as core/lower/matmul_lowering.cpp documents. buffers: a, b, out.
void matmul(const std::vector<void*>& buffers, const std::vector<int64_t>& params);

}  // namespace kiln::cpu
