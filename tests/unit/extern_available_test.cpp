// Which extern calls a plugin's extern list covers: a bare name covers every dtype, a name
// followed by dtypes only those (a GPU BLAS has no integer matmul).
#include <gtest/gtest.h>

#include <kiln/kir.hpp>
#include <utility>

#include "core/lower/matmul_kernel.h"

namespace kiln {
namespace {

LoopKernel mm_call(DType dtype) {
  LoopKernel k;
  k.kind = LoopKernelKind::Extern;
  k.extern_name = "mm";
  k.attrs = {{"dtype", static_cast<int64_t>(dtype)}};
  return k;
}

TEST(ExternAvailable, BareNameCoversEveryDtype) {
  EXPECT_TRUE(extern_available({"mm", "bmm"}, mm_call(DType::F32)));
  EXPECT_TRUE(extern_available({"mm"}, mm_call(DType::I64)));
  EXPECT_FALSE(extern_available({"bmm"}, mm_call(DType::F32)));
  EXPECT_FALSE(extern_available({}, mm_call(DType::F32)));
}

TEST(ExternAvailable, DtypesLimitTheName) {
  const std::vector<std::string> blas = {"mm f32 f16 bf16 f64", "bmm f32"};
  EXPECT_TRUE(extern_available(blas, mm_call(DType::BF16)));
  EXPECT_TRUE(extern_available(blas, mm_call(DType::F64)));
  EXPECT_FALSE(extern_available(blas, mm_call(DType::I32)));
  LoopKernel b = mm_call(DType::F16);
  b.extern_name = "bmm";
  EXPECT_FALSE(extern_available(blas, b));
}

TEST(ExternAvailable, UncoveredDtypesBecomeGeneratedKernels) {
  LoopProgram p;
  p.kernels = {mm_call(DType::F32), mm_call(DType::I64)};
  p.kernels[1].extern_inputs = {0, 1};
  p.kernels[1].extern_outputs = {2};
  EXPECT_EQ(generate_missing_matmuls(p, {"mm f32"}), 1);
  EXPECT_EQ(p.kernels[0].kind, LoopKernelKind::Extern);
  EXPECT_EQ(p.kernels[1].kind, LoopKernelKind::Reduction);
}

// A call allowed TF32 products (kExternTf32) is a library's only where it lists tf32;
// elsewhere it is an f32 call, to the library or a generated kernel.
TEST(ExternAvailable, TF32CallsFallBackToF32) {
  LoopKernel call = mm_call(DType::F32);
  call.attrs[0].second = kir::kExternTf32;
  EXPECT_TRUE(extern_available({"mm f32 tf32"}, call));
  EXPECT_FALSE(extern_available({"mm f32"}, call));
  EXPECT_FALSE(extern_available({"mm"}, call)) << "a bare name: every dtype, not tf32";
  EXPECT_TRUE(extern_available({"mm tf32"}, "mm", kir::kExternTf32));
  call.extern_inputs = {0, 1};
  call.extern_outputs = {2};
  for (auto [line, kind] :
       {std::pair{"mm f32 tf32", LoopKernelKind::Extern},
        std::pair{"mm f32", LoopKernelKind::Extern}, std::pair{"mm", LoopKernelKind::Extern},
        std::pair{"mm bf16", LoopKernelKind::Reduction}}) {
    LoopProgram p;
    p.kernels = {call};
    generate_missing_matmuls(p, {line});
    EXPECT_EQ(p.kernels[0].kind, kind) << line;
    const bool kept = std::string(line) == "mm f32 tf32";
    if (kind == LoopKernelKind::Extern)
      EXPECT_EQ(extern_attr(p.kernels[0], "dtype"), kept ? kir::kExternTf32 : 8) << line;
    else
      EXPECT_EQ(p.kernels[0].body.at(0).dtype, DType::F32);  // the generated kernel's loads
  }
}

TEST(ExternAvailable, OperandsWithoutAUnitStrideBecomeGeneratedKernels) {
  LoopKernel call = mm_call(DType::F32);
  call.extern_inputs = {0, 1};
  call.extern_outputs = {2};
  // a [3, 4] row-major, b [4, 5] transposed (column-major): both fit a BLAS.
  call.attrs = {{"dtype", 0},
                {"batch", 1},
                {"m", 3},
                {"n", 5},
                {"k", 4},
                {"a_offset", 0},
                {"a_batch_stride", 12},
                {"a_row_stride", 4},
                {"a_col_stride", 1},
                {"b_offset", 0},
                {"b_batch_stride", 20},
                {"b_row_stride", 1},
                {"b_col_stride", 4}};
  EXPECT_TRUE(library_layout(call));
  LoopProgram p;
  p.kernels = {call};
  EXPECT_EQ(generate_missing_matmuls(p, {"mm"}), 0);
  // Every other column of a: strides (8, 2), no unit stride.
  call.attrs[7].second = 8;
  call.attrs[8].second = 2;
  EXPECT_FALSE(library_layout(call));
  // Overlapping rows (row stride 2 < 4 columns) are no BLAS matrix either.
  call.attrs[7].second = 2;
  call.attrs[8].second = 1;
  EXPECT_FALSE(library_layout(call));
  p.kernels = {call};
  EXPECT_EQ(generate_missing_matmuls(p, {"mm"}), 1);
  EXPECT_EQ(p.kernels[0].kind, LoopKernelKind::Reduction);
}

}  // namespace
}  // namespace kiln
