// The "mm" and "bmm" externs: OpenBLAS sgemm/dgemm when the dtype and strides allow it
// (row-major with unit stride on one side of each operand), otherwise a plain loop that
// accumulates floats in double and integers in wrapping int64.
#pragma once

#include <vector>

#include "plugins/kir_support/matmul_call.h"

namespace kiln::cpu {

// buffers: a, b, out, spanning call.buffer_bytes().
void matmul(const std::vector<void*>& buffers, const kir_support::MatmulCall& call);

}  // namespace kiln::cpu
