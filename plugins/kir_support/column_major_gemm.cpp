#include "plugins/kir_support/column_major_gemm.h"

#include <climits>
#include <stdexcept>

namespace kiln::kir_support {

ColumnMajorGemm column_major_gemm(const MatmulCall& c, const std::string& library) {
  for (int64_t v : {c.batch, c.m, c.n, c.k})
    if (v > INT_MAX) throw std::runtime_error(library + ": a size exceeds 2^31 - 1");
  const auto lb = row_major_layout(c.b, c.k, c.n);
  const auto la = row_major_layout(c.a, c.m, c.k);
  if (!la || !lb || la->ld > INT_MAX || lb->ld > INT_MAX)
    throw std::runtime_error(library + ": an operand has no unit stride");
  const int64_t esize = kir::dtype_size(c.dtype);
  ColumnMajorGemm g;
  g.transpose_first = lb->transposed;
  g.transpose_second = la->transposed;
  g.m = static_cast<int>(c.n);
  g.n = static_cast<int>(c.m);
  g.k = static_cast<int>(c.k);
  g.ld_first = static_cast<int>(lb->ld);
  g.ld_second = static_cast<int>(la->ld);
  g.ld_out = static_cast<int>(c.n);
  g.stride_first = c.b.batch;
  g.stride_second = c.a.batch;
  g.stride_out = c.m * c.n;
  g.first_offset_bytes = c.b.offset * esize;
  g.second_offset_bytes = c.a.offset * esize;
  g.batch = static_cast<int>(c.batch);
  return g;
}

}  // namespace kiln::kir_support
