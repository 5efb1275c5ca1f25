// rocBLAS, opened at run time when present (librocblas.so.4, .3, or under ROCm): the amdgpu
// plugin's "mm" and "bmm" externs for f32, f64, f16 and bf16 (f32 accumulation for the half
// types). Without it the plugin lists no externs and the core generates matmul kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugins/kir_support/dynamic_library.h"
#include "plugins/kir_support/matmul_call.h"

namespace kiln::amdgpu {

class RocblasLibrary {
 public:
  // Tries `path` ("" for the usual names and places; "off" to go without). `why` says what
  // happened when it did not open.
  static RocblasLibrary open(const std::string& path, std::string& why);
  RocblasLibrary() = default;
  // Moved into an empty one only (open's result): a moved-over object's handles are not
  // destroyed.
  RocblasLibrary(RocblasLibrary&& other) noexcept = default;
  RocblasLibrary& operator=(RocblasLibrary&& other) noexcept = default;
  RocblasLibrary(const RocblasLibrary&) = delete;
  RocblasLibrary& operator=(const RocblasLibrary&) = delete;
  ~RocblasLibrary();

  bool available() const { return library_.loaded(); }
  // Destroys the handles, each after `use_device(its device)` makes its device current.
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
  // out[batch, m, n] = a @ b on the current device's null stream, with the handle of slot
  // `device` (made on first use, on the current device). Throws std::runtime_error.
  void matmul(uint32_t device, const kir_support::MatmulCall& call, uint64_t a, uint64_t b,
              uint64_t out);

 private:
  using Handle = struct _rocblas_handle*;
  kir_support::DynamicLibrary library_;
  int (*create_)(Handle*) = nullptr;
  int (*destroy_)(Handle) = nullptr;
  int (*gemm_)(Handle, int, int, int, int, int, const void*, const void*, int, int, int64_t,
               const void*, int, int, int64_t, const void*, const void*, int, int, int64_t, void*,
               int, int, int64_t, int, int, int, int32_t, uint32_t) = nullptr;
  std::vector<Handle> handles_;  // by device
};

}  // namespace kiln::amdgpu
