#include "plugins/amdgpu/rocblas_library.h"

#include <cstdlib>
#include <stdexcept>

#include "plugins/kir_support/column_major_gemm.h"

namespace kiln::amdgpu {
namespace {

// Values of rocBLAS's enums (rocblas-types.h).
constexpr int kOpN = 111, kOpT = 112;
constexpr int kF16 = 150, kF32 = 151, kF64 = 152, kBF16 = 168;
constexpr int kAlgoStandard = 0;

std::vector<std::string> candidates(const std::string& path) {
  if (!path.empty()) return {path};
  std::vector<std::string> out = {"librocblas.so.4", "librocblas.so.3", "librocblas.so"};
  if (const char* rocm = std::getenv("ROCM_PATH"))
    out.push_back(std::string(rocm) + "/lib/librocblas.so");
  out.push_back("/opt/rocm/lib/librocblas.so");
  return out;
}

int data_type(kir::DType d) {
  switch (d) {
    case kir::DType::F32:
      return kF32;
    case kir::DType::F64:
      return kF64;
    case kir::DType::F16:
      return kF16;
    case kir::DType::BF16:
      return kBF16;
    default:
      throw std::runtime_error(std::string("rocBLAS has no ") + kir::dtype_name(d) + " matmul");
  }
}

}  // namespace

RocblasLibrary RocblasLibrary::open(const std::string& path, std::string& why) {
  RocblasLibrary lib;
  if (path == "off") {
    why = "turned off by the plugin's rocblas option";
    return lib;
  }
  lib.library_ = kir_support::DynamicLibrary::open(
      candidates(path),
      [&](const kir_support::DynamicLibrary& l) {
        return l.symbol("rocblas_create_handle", lib.create_) &&
               l.symbol("rocblas_destroy_handle", lib.destroy_) &&
               l.symbol("rocblas_gemm_strided_batched_ex", lib.gemm_);
      },
      why);
  return lib;
}

RocblasLibrary::~RocblasLibrary() {
  for (Handle h : handles_)
    if (h) destroy_(h);
}

std::vector<std::string> RocblasLibrary::extern_lines() const {
  if (!available()) return {};
  return {"mm f32 f64 f16 bf16", "bmm f32 f64 f16 bf16"};
}

void RocblasLibrary::matmul(uint32_t device, const kir_support::MatmulCall& c, uint64_t a,
                            uint64_t b, uint64_t out) {
  const int type = data_type(c.dtype);
  if (c.batch == 0 || c.m == 0 || c.n == 0) return;
  const kir_support::ColumnMajorGemm g = kir_support::column_major_gemm(c, "rocBLAS");
  if (handles_.size() <= device) handles_.resize(device + 1, nullptr);
  if (!handles_[device] && create_(&handles_[device]) != 0)
    throw std::runtime_error("rocblas_create_handle failed");
  // Half types accumulate in f32 (alpha and beta then f32 too); f64 in f64.
  const bool f64 = c.dtype == kir::DType::F64;
  const int compute = f64 ? kF64 : kF32;
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const auto at = [](uint64_t base, int64_t bytes) {
    return reinterpret_cast<const void*>(base + static_cast<uint64_t>(bytes));
  };
  void* d = reinterpret_cast<void*>(out);
  // C and D are the same buffer with beta 0: D = A B.
  const int status = gemm_(
      handles_[device], g.transpose_first ? kOpT : kOpN, g.transpose_second ? kOpT : kOpN, g.m, g.n,
      g.k, f64 ? static_cast<const void*>(&one_d) : &one_f, at(b, g.first_offset_bytes), type,
      g.ld_first, g.stride_first, at(a, g.second_offset_bytes), type, g.ld_second, g.stride_second,
      f64 ? static_cast<const void*>(&zero_d) : &zero_f, d, type, g.ld_out, g.stride_out, d, type,
      g.ld_out, g.stride_out, g.batch, compute, kAlgoStandard, 0, 0);
  if (status != 0)
    throw std::runtime_error("rocblas_gemm_strided_batched_ex failed with status " +
                             std::to_string(status));
}

}  // namespace kiln::amdgpu
