// The row-major matmul call as the column-major GEMM that cuBLAS and rocBLAS are given: b first,
// sizes (n, m, k), each operand's transposition and leading dimension from its strides.
#include "plugins/kir_support/column_major_gemm.h"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>

namespace kiln::kir_support {
namespace {

MatmulCall call(int64_t batch, int64_t m, int64_t n, int64_t k) {
  MatmulCall c;
  c.dtype = kir::DType::F32;
  c.batch = batch;
  c.m = m;
  c.n = n;
  c.k = k;
  c.a = {0, m * k, k, 1};  // [batch, m, k], rows of k
  c.b = {0, k * n, n, 1};  // [batch, k, n], rows of n
  return c;
}

TEST(ColumnMajorGemm, ContiguousOperandsSwapAndKeepTheirRows) {
  const ColumnMajorGemm g = column_major_gemm(call(3, 5, 7, 11), "lib");
  EXPECT_EQ(g.m, 7);
  EXPECT_EQ(g.n, 5);
  EXPECT_EQ(g.k, 11);
  EXPECT_FALSE(g.transpose_first);
  EXPECT_FALSE(g.transpose_second);
  EXPECT_EQ(g.ld_first, 7);
  EXPECT_EQ(g.ld_second, 11);
  EXPECT_EQ(g.ld_out, 7);
  EXPECT_EQ(g.stride_first, 11 * 7);
  EXPECT_EQ(g.stride_second, 5 * 11);
  EXPECT_EQ(g.stride_out, 5 * 7);
  EXPECT_EQ(g.batch, 3);
}

TEST(ColumnMajorGemm, TransposedViewsAndOffsetsInBytes) {
  MatmulCall c = call(1, 5, 7, 11);
  c.dtype = kir::DType::F64;
  c.a = {3, 0, 1, 5};   // a = x^T for x [11, 5]: steps 1 down a column
  c.b = {2, 0, 1, 13};  // b [11, 7] read from columns 13 apart
  const ColumnMajorGemm g = column_major_gemm(c, "lib");
  EXPECT_TRUE(g.transpose_first);
  EXPECT_TRUE(g.transpose_second);
  EXPECT_EQ(g.ld_first, 13);
  EXPECT_EQ(g.ld_second, 5);
  EXPECT_EQ(g.first_offset_bytes, 2 * 8);
  EXPECT_EQ(g.second_offset_bytes, 3 * 8);
}

TEST(ColumnMajorGemm, RefusesWhatNoLibraryTakesByName) {
  MatmulCall strided = call(1, 5, 7, 11);
  strided.a = {0, 0, 22, 2};  // no unit stride
  try {
    column_major_gemm(strided, "rocBLAS");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rocBLAS: an operand has no unit stride");
  }
  MatmulCall huge = call(1, int64_t{INT_MAX} + 1, 7, 11);
  EXPECT_THROW(column_major_gemm(huge, "cuBLAS"), std::runtime_error);
}

}  // namespace
}  // namespace kiln::kir_support
