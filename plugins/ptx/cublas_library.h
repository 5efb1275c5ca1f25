// cuBLAS, opened at run time when present (libcublas.so.13, .12, or under the toolkit):
// the ptx plugin's "mm" and "bmm" externs for f32, f64, f16 and bf16. Without it the plugin
// lists no externs and the core generates matmul kernels instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugins/kir_support/column_major_gemm.h"
#include "plugins/kir_support/dynamic_library.h"
#include "plugins/kir_support/matmul_call.h"
#include "plugins/ptx/cuda_driver.h"

namespace kiln::ptx {

class CublasLibrary {
 public:
  // Tries `path` ("" for the usual names and places; "off" to go without). `why` says what
  // happened when it did not open.
  static CublasLibrary open(const std::string& path, std::string& why);
  CublasLibrary() = default;
  // Moved into an empty one only (open's result): a moved-over object's handles are not
  // destroyed.
  CublasLibrary(CublasLibrary&& other) noexcept = default;
  CublasLibrary& operator=(CublasLibrary&& other) noexcept = default;
  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;
  ~CublasLibrary();

  bool available() const { return library_.loaded(); }
  // Destroys the handles, each after `use_device(its device)` makes its context current.
  template <class UseDevice>
  void release_handles(UseDevice use_device) {
    for (uint32_t d = 0; d < handles_.size(); ++d) {
      if (!handles_[d]) continue;
      use_device(d);
      destroy_(handles_[d]);
      handles_[d] = nullptr;
    }
  }
  const std::string& path() const { return library_.path(); }
  // The extern list entries it serves ("mm f32 f64 f16 bf16", "bmm ...").
  std::vector<std::string> extern_lines() const;
  // out[batch, m, n] = a @ b on `stream` (NULL: the legacy default stream), for the device's
  // slot `device` (a handle per device, made on first use); out's rows `out_row` elements
  // apart (0: n, contiguous). Throws std::runtime_error.
  void matmul(uint32_t device, const kir_support::MatmulCall& call, CUdeviceptr a, CUdeviceptr b,
              CUdeviceptr out, CUstream stream, int64_t out_row = 0);
  // Whether matmul honours its stream (cublasSetStream), as a capture needs.
  bool takes_streams() const { return set_stream_ != nullptr; }

 private:
  using Handle = struct cublasContext*;
  kir_support::DynamicLibrary library_;
  int (*create_)(Handle*) = nullptr;
  int (*destroy_)(Handle) = nullptr;
  int (*set_stream_)(Handle, CUstream) = nullptr;  // optional
  int (*gemm_)(Handle, int, int, int, int, int, const void*, const void*, int, int, long long,
               const void*, int, int, long long, const void*, void*, int, int, long long, int, int,
               int) = nullptr;
  std::vector<Handle> handles_;  // by device
};

}  // namespace kiln::ptx
