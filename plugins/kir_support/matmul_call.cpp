#include "plugins/kir_support/matmul_call.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "plugins/kir_support/extern_params.h"

namespace kiln::kir_support {

std::vector<int64_t> MatmulCall::buffer_bytes() const {
  const int64_t esize = kir::dtype_size(dtype);
  auto extent = [&](const MatmulOperand& o, int64_t rows, int64_t cols) {
    if (batch == 0 || rows == 0 || cols == 0) return int64_t{0};
    return (o.offset + (batch - 1) * o.batch + (rows - 1) * o.row + (cols - 1) * o.col + 1) * esize;
  };
  return {extent(a, m, k), extent(b, k, n), batch * m * n * esize};
}

MatmulCall read_matmul_call(const std::vector<int64_t>& p) {
  if (p.size() != 13)
    throw std::invalid_argument("takes 13 parameters, got " + std::to_string(p.size()));
  const ExternDtype dtype = read_extern_dtype(p[0]);
  if (std::any_of(p.begin() + 1, p.end(), [](int64_t v) { return v < 0; }))
    throw std::invalid_argument("negative size, stride or offset");
  MatmulCall c;
  c.dtype = dtype.dtype;
  c.tf32 = dtype.tf32;
  c.batch = p[1], c.m = p[2], c.n = p[3], c.k = p[4];
  c.a = {p[5], p[6], p[7], p[8]};
  c.b = {p[9], p[10], p[11], p[12]};
  return c;
}

MatmulCall read_matmul_call(const kiln_launch_args& args) {
  return read_matmul_call(integer_params(args));
}

std::optional<BlasLayout> row_major_layout(const MatmulOperand& o, int64_t rows, int64_t cols) {
  if (o.col == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : o.row;
    if (ld >= std::max<int64_t>(cols, 1)) return BlasLayout{false, ld};
  }
  if (o.row == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : o.col;
    if (ld >= std::max<int64_t>(rows, 1)) return BlasLayout{true, ld};
  }
  return std::nullopt;
}

}  // namespace kiln::kir_support
