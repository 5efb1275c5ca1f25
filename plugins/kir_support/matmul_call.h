// The "mm" and "bmm" extern calls as the plugins receive them (plugin-abi.md): three buffers
// (A, B, the contiguous [batch, m, n] output) and 13 integer parameters, read and checked
// once for every plugin, and the row-major BLAS layout of an operand when one exists.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/kir.hpp"
#include "kiln/plugin.h"

namespace kiln::kir_support {

struct MatmulOperand {
  int64_t offset = 0, batch = 0, row = 0, col = 0;  // element strides
};

struct MatmulCall {
  kir::DType dtype = kir::DType::F32;
  bool tf32 = false;  // f32 products may be rounded to TF32 (dtype parameter kExternTf32)
  int64_t batch = 0, m = 0, n = 0, k = 0;
  MatmulOperand a, b;
  // Bytes each buffer (A, B, output) must span for these sizes and strides.
  std::vector<int64_t> buffer_bytes() const;
};

// Throws std::invalid_argument naming the problem: not 13 parameters, an unknown dtype code (a
// DType's, or kir::kExternTf32), a negative size, stride or offset.
MatmulCall read_matmul_call(const std::vector<int64_t>& params);
// The same from an extern_call's scalars (all integers, or std::invalid_argument).
MatmulCall read_matmul_call(const kiln_launch_args& args);

// A row-major BLAS view of an operand with `rows` x `cols`: element (r, c) at r * ld + c, or
// at c * ld + r when `transposed`.
struct BlasLayout {
  bool transposed = false;
  int64_t ld = 0;
};

// None when neither stride is 1 or the leading dimension would be too small.
std::optional<BlasLayout> row_major_layout(const MatmulOperand& o, int64_t rows, int64_t cols);

}  // namespace kiln::kir_support
