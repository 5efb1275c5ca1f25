// A product with unaligned output rows split into aligned row sets and two edge products: the
// pieces, run one after another by a plain loop, must write every output element with the
// whole product's value, and the row sets must be what an aligned BLAS kernel takes.
#include "plugins/kir_support/aligned_row_groups.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "plugins/kir_support/column_major_gemm.h"

namespace kiln::kir_support {
namespace {

// out[r * out_row + j] (from out_offset) = sum_k a * b, as a BLAS library would write it.
void run_piece(const MatmulPiece& p, const std::vector<double>& a, const std::vector<double>& b,
               std::vector<double>& out) {
  const MatmulCall& c = p.call;
  ASSERT_EQ(c.batch, 1);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int64_t q = 0; q < c.k; ++q) {
        sum += a.at(c.a.offset + i * c.a.row + q * c.a.col) *
               b.at(c.b.offset + q * c.b.row + j * c.b.col);
      }
      out.at(p.out_offset + i * p.out_row + j) = sum;
    }
  }
}

// [batch, m, k] rows of A `a_row` apart from `a_offset`, and B the [n, k] weight of a linear
// layer read transposed (columns `b_col` apart from `b_offset`), shared by the batches.
MatmulCall linear(kir::DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t a_row,
                  int64_t a_offset, int64_t b_col, int64_t b_offset) {
  MatmulCall c;
  c.dtype = dtype;
  c.batch = batch;
  c.m = m;
  c.n = n;
  c.k = k;
  c.a = {a_offset, m * a_row, a_row, 1};
  c.b = {b_offset, 0, 1, b_col};
  return c;
}

// Splits `c`, runs the pieces on random small integers (exact in doubles) into a poisoned
// output, and compares every element with the whole product.
void expect_split_matches(const MatmulCall& c) {
  const std::vector<MatmulPiece> pieces = aligned_row_groups(c);
  ASSERT_FALSE(pieces.empty());
  std::mt19937 rng(static_cast<uint32_t>(c.n * 131 + c.m * 7 + c.k));
  std::uniform_int_distribution<int> small(-4, 4);
  const std::vector<int64_t> bytes = c.buffer_bytes();
  const int64_t size = kir::dtype_size(c.dtype);
  std::vector<double> a(static_cast<size_t>(bytes[0] / size)),
      b(static_cast<size_t>(bytes[1] / size));
  for (double& v : a) v = small(rng);
  for (double& v : b) v = small(rng);
  const int64_t rows = c.batch * c.m;
  std::vector<double> out(static_cast<size_t>(rows * c.n), -1e300);
  for (const MatmulPiece& p : pieces) run_piece(p, a, b, out);
  for (int64_t t = 0; t < c.batch; ++t) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t q = 0; q < c.k; ++q) {
          sum += a[c.a.offset + t * c.a.batch + i * c.a.row + q * c.a.col] *
                 b[c.b.offset + t * c.b.batch + q * c.b.row + j * c.b.col];
        }
        ASSERT_EQ(out[(t * c.m + i) * c.n + j], sum)
            << "batch " << t << " row " << i << " column " << j;
      }
    }
  }
  const int64_t per = 16 / size;
  int sets = 0;
  for (const MatmulPiece& p : pieces) {
    if (!p.aligned) {
      EXPECT_EQ(p.call.n, per);  // the edges stay narrow
      continue;
    }
    ++sets;
    EXPECT_GE(p.call.m, 2);
    EXPECT_EQ(p.out_offset * size % 16, 0);
    EXPECT_EQ(p.out_row * size % 16, 0);
    EXPECT_EQ(p.call.n % per, 0);
    // What the library is handed: both operands' starts and leading dimensions whole 16 bytes.
    const ColumnMajorGemm g = column_major_gemm(p.call, "test");
    EXPECT_EQ(g.first_offset_bytes % 16, 0);
    EXPECT_EQ(g.second_offset_bytes % 16, 0);
    EXPECT_EQ(g.ld_first * size % 16, 0);
    EXPECT_EQ(g.ld_second * size % 16, 0);
  }
  EXPECT_EQ(sets, per);
}

TEST(AlignedRowGroups, Bf16HeadOfOddWidth) {
  // GPT-2's head in small: 50257 % 8 == 1, like 25 % 8.
  expect_split_matches(linear(kir::DType::BF16, 1, 19, 25, 8, 8, 0, 8, 0));
}

TEST(AlignedRowGroups, EveryWidthPhaseAndRowCount) {
  for (int64_t n = 17; n < 32; ++n) {
    if (n % 8 == 0) continue;
    for (int64_t m : {16, 17, 23, 31}) {
      SCOPED_TRACE("n " + std::to_string(n) + " m " + std::to_string(m));
      expect_split_matches(linear(kir::DType::F16, 1, m, n, 5, 16, 0, 8, 0));
    }
  }
}

TEST(AlignedRowGroups, OneProductTerm) {
  expect_split_matches(linear(kir::DType::BF16, 1, 21, 27, 1, 8, 0, 8, 0));
}

TEST(AlignedRowGroups, BatchesOfOneRowStackByTheirBatchStride) {
  // As the lowering gives them: a size-1 row dim has stride 0.
  MatmulCall c = linear(kir::DType::BF16, 20, 1, 19, 8, 8, 0, 8, 0);
  c.a = {0, 16, 0, 1};
  expect_split_matches(c);
}

TEST(AlignedRowGroups, F32AndF64) {
  expect_split_matches(linear(kir::DType::F32, 1, 13, 11, 4, 4, 0, 4, 0));
  expect_split_matches(linear(kir::DType::F64, 1, 5, 7, 6, 6, 0, 6, 0));
}

TEST(AlignedRowGroups, OffsetsAndPaddedRowsOfTheOperands) {
  // A's rows 24 apart from element 16, B's columns 16 apart from element 8.
  expect_split_matches(linear(kir::DType::BF16, 1, 17, 21, 12, 24, 16, 16, 8));
}

TEST(AlignedRowGroups, BatchesStackIntoRows) {
  expect_split_matches(linear(kir::DType::BF16, 4, 5, 19, 8, 8, 0, 8, 0));
}

TEST(AlignedRowGroups, LeavesCallsItCannotAlign) {
  const MatmulCall head = linear(kir::DType::BF16, 1, 19, 25, 8, 8, 0, 8, 0);
  EXPECT_FALSE(aligned_row_groups(head).empty());
  MatmulCall c = head;
  c.n = 24;  // rows already whole 16 bytes
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = head;
  c.n = 15;  // under two 16 bytes of columns
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = head;
  c.m = 15;  // a set of one row
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = linear(kir::DType::BF16, 20, 1, 19, 8, 8, 0, 8, 0);
  c.a = {0, 0, 0, 1};  // one row of A broadcast over the batches
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = head;
  c.a.row = 12;  // A's rows not 16 bytes apart
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = head;
  c.a.offset = 3;
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = head;
  c.b = {0, 0, 25, 1};  // B row-major: a column shift misaligns it
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = head;
  c.b.col = 12;
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = linear(kir::DType::BF16, 2, 19, 25, 8, 8, 0, 8, 0);
  c.b.batch = 200;  // a B per batch: batches do not stack
  EXPECT_TRUE(aligned_row_groups(c).empty());
  c = linear(kir::DType::F64, 1, 5, 7, 6, 6, 0, 6, 0);
  c.dtype = kir::DType::I64;  // 8-byte elements: 2 per 16 bytes, still split
  EXPECT_FALSE(aligned_row_groups(c).empty());
}

}  // namespace
}  // namespace kiln::kir_support
