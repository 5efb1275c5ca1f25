#include "plugins/kir_support/aligned_row_groups.h"

#include <climits>

namespace kiln::kir_support {

namespace {

bool whole_16_bytes(int64_t elements, int64_t size) {
  return elements * size % 16 == 0;
}

}  // namespace

std::vector<MatmulPiece> aligned_row_groups(const MatmulCall& c) {
  const int64_t size = kir::dtype_size(c.dtype), per = 16 / size;
  if (per < 2 || c.n % per == 0 || c.n < 2 * per || c.k == 0) return {};
  // Batches stack into rows when B is shared and A's batches follow one another (one row
  // each: the batch stride is the row stride).
  int64_t a_row = c.a.row;
  if (c.batch > 1) {
    if (c.b.batch != 0) return {};
    if (c.m == 1)
      a_row = c.a.batch;
    else if (c.a.batch != c.m * c.a.row)
      return {};
  }
  const int64_t rows = c.batch * c.m;
  // Two rows a set at least (a set of one row has no row stride to align), rows and columns
  // that do not overlap, and sizes a BLAS library takes as int.
  if (rows < 2 * per || a_row < c.k || c.b.col < c.k || per * c.n > INT_MAX ||
      per * a_row > INT_MAX || rows > INT_MAX || c.k > INT_MAX)
    return {};
  const bool a_rows =
      (c.a.col == 1 || c.k == 1) && whole_16_bytes(a_row, size) && whole_16_bytes(c.a.offset, size);
  const bool b_columns =
      c.b.row == 1 && whole_16_bytes(c.b.col, size) && whole_16_bytes(c.b.offset, size);
  if (!a_rows || !b_columns) return {};

  MatmulCall all = c;
  all.batch = 1;
  all.m = rows;
  all.a.row = a_row;
  all.a.batch = all.b.batch = 0;
  std::vector<MatmulPiece> pieces;
  for (const int64_t first : {int64_t{0}, c.n - per}) {
    MatmulPiece edge{all, first, c.n, false};
    edge.call.n = per;
    edge.call.b.offset += first * c.b.col;
    pieces.push_back(edge);
  }
  for (int64_t phase = 0; phase < per; ++phase) {
    // Row `phase` starts phase * n elements in; its first 16-byte boundary is `skip` further.
    const int64_t skip = (per - (phase * c.n) % per) % per;
    MatmulPiece set{all, phase * c.n + skip, per * c.n, true};
    set.call.m = (rows - phase + per - 1) / per;
    set.call.n = (c.n - skip) / per * per;
    set.call.a.offset += phase * a_row;
    set.call.a.row *= per;
    set.call.b.offset += skip * c.b.col;
    pieces.push_back(set);
  }
  return pieces;
}

}  // namespace kiln::kir_support
