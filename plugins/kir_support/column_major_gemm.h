// A row-major matmul call as the column-major strided-batched GEMM of cuBLAS and rocBLAS take
// it: row-major out = a @ b is column-major out^T = b^T @ a^T, so the library's first operand
// is b and its sizes are (n, m, k).
#pragma once

#include <cstdint>
#include <string>

#include "plugins/kir_support/matmul_call.h"

namespace kiln::kir_support {

struct ColumnMajorGemm {
  bool transpose_first = false, transpose_second = false;  // of b and of a
  int m = 0, n = 0, k = 0;                                 // the library's: (n, m, k)
  int ld_first = 0, ld_second = 0, ld_out = 0;
  int64_t stride_first = 0, stride_second = 0, stride_out = 0;  // between batch entries
  int64_t first_offset_bytes = 0, second_offset_bytes = 0;
  int batch = 0;
};

// Throws std::runtime_error, naming `library`, for sizes over 2^31 - 1 or an operand with no
// unit stride.
ColumnMajorGemm column_major_gemm(const MatmulCall& c, const std::string& library);

}  // namespace kiln::kir_support
