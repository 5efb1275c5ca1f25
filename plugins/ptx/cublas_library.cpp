#include "plugins/ptx/cublas_library.h"

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "plugins/ptx/handle_stream.h"

namespace kiln::ptx {
namespace {

// Values of cuBLAS's and CUDA's enums (cublas_api.h, library_types.h).
constexpr int kOpN = 0, kOpT = 1;
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;
constexpr int kCompute32F = 68, kCompute32FFastTf32 = 77, kCompute64F = 70;
constexpr int kGemmDefault = -1;

std::vector<std::string> candidates(const std::string& path) {
  if (!path.empty()) return {path};
  std::vector<std::string> out = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(env))
      out.push_back(std::string(home) + "/lib64/libcublas.so");
  }
  out.push_back("/usr/local/cuda/lib64/libcublas.so");
  out.push_back("/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so");
  return out;
}

int data_type(kir::DType d) {
  switch (d) {
    case kir::DType::F32:
      return kR32F;
    case kir::DType::F64:
      return kR64F;
    case kir::DType::F16:
      return kR16F;
    case kir::DType::BF16:
      return kR16BF;
    default:
      throw std::runtime_error(std::string("cuBLAS has no ") + kir::dtype_name(d) + " matmul");
  }
}

}  // namespace

CublasLibrary CublasLibrary::open(const std::string& path, std::string& why) {
  CublasLibrary lib;
  if (path == "off") {
    why = "turned off by the plugin's cublas option";
    return lib;
  }
  lib.library_ = kir_support::DynamicLibrary::open(
      candidates(path),
      [&](const kir_support::DynamicLibrary& l) {
        if (!l.symbol("cublasSetStream_v2", lib.set_stream_)) lib.set_stream_ = nullptr;
        return l.symbol("cublasCreate_v2", lib.create_) &&
               l.symbol("cublasDestroy_v2", lib.destroy_) &&
               l.symbol("cublasGemmStridedBatchedEx", lib.gemm_);
      },
      why);
  return lib;
}

CublasLibrary::~CublasLibrary() {
  for (Handle h : handles_)
    if (h) destroy_(h);
}

std::vector<std::string> CublasLibrary::extern_lines() const {
  if (!available()) return {};
  return {"mm f32 f64 f16 bf16 tf32", "bmm f32 f64 f16 bf16 tf32"};
}

void CublasLibrary::matmul(uint32_t device, const kir_support::MatmulCall& c, CUdeviceptr a,
                           CUdeviceptr b, CUdeviceptr out, CUstream stream, int64_t out_row) {
  const int type = data_type(c.dtype);
  if (c.batch == 0 || c.m == 0 || c.n == 0) return;
  kir_support::ColumnMajorGemm g = kir_support::column_major_gemm(c, "cuBLAS");
  if (out_row > 0) {
    if (out_row < c.n || out_row > INT32_MAX)
      throw std::runtime_error("cuBLAS: output rows " + std::to_string(out_row) + " apart");
    g.ld_out = static_cast<int>(out_row);
    g.stride_out = out_row * c.m;
  }
  if (handles_.size() <= device) handles_.resize(device + 1, nullptr);
  if (!handles_[device] && create_(&handles_[device]) != 0)
    throw std::runtime_error("cublasCreate failed");
  const HandleOnStream<Handle> on_stream(set_stream_, handles_[device], stream);
  if (on_stream.status() != 0) throw std::runtime_error("cublasSetStream failed");
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = c.dtype == kir::DType::F64;
  const auto at = [](CUdeviceptr base, int64_t bytes) {
    return reinterpret_cast<const void*>(base + static_cast<uint64_t>(bytes));
  };
  const int status = gemm_(
      handles_[device], g.transpose_first ? kOpT : kOpN, g.transpose_second ? kOpT : kOpN, g.m, g.n,
      g.k, f64 ? static_cast<const void*>(&one_d) : &one_f, at(b, g.first_offset_bytes), type,
      g.ld_first, g.stride_first, at(a, g.second_offset_bytes), type, g.ld_second, g.stride_second,
      f64 ? static_cast<const void*>(&zero_d) : &zero_f, reinterpret_cast<void*>(out), type,
      g.ld_out, g.stride_out, g.batch,
      f64 ? kCompute64F : (c.tf32 ? kCompute32FFastTf32 : kCompute32F), kGemmDefault);
  if (status != 0)
    throw std::runtime_error("cublasGemmStridedBatchedEx failed with status " +
                             std::to_string(status));
}

}  // namespace kiln::ptx
