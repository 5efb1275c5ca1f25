// cuDNN, opened at run time when present (libcudnn.so.9: the toolkit does not ship it; the
// nvidia-cudnn wheels and distributions do): the ptx plugin's "conv2d" extern and its two
// backward calls (kir_support/conv_call.h) for f32, f16 and bf16. f32 runs without TF32 (FMA math:
// the reference's precision), half types on tensor cores with f32 accumulation. Forward calls
// go through the graph API (cudnn_graph.h), the gradients and any forward call it has no
// engine for through the legacy API. Without it the
// plugin lists no conv2d and the core generates kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plugins/kir_support/conv_call.h"
#include "plugins/kir_support/dynamic_library.h"
#include "plugins/ptx/cuda_driver.h"
#include "plugins/ptx/cudnn_graph.h"

namespace kiln::ptx {

class CudnnLibrary {
 public:
  // Tries `path` ("" for libcudnn.so.9 on the loader's path; "off" to go without). `why` says
  // what happened when it did not open.
  static CudnnLibrary open(const std::string& path, std::string& why);
  CudnnLibrary() = default;
  // Moved into an empty one only (open's result), like CublasLibrary.
  CudnnLibrary(CudnnLibrary&& other) noexcept = default;
  CudnnLibrary& operator=(CudnnLibrary&& other) noexcept = default;
  CudnnLibrary(const CudnnLibrary&) = delete;
  CudnnLibrary& operator=(const CudnnLibrary&) = delete;
  ~CudnnLibrary() = default;  // handles and plans go in release_handles (contexts needed)

  bool available() const { return library_.loaded(); }
  // Gradients only from algorithms that give the same bits every run (ALGO_1: no atomics).
  void set_deterministic(bool on) { deterministic_ = on; }
  const std::string& path() const { return library_.path(); }
  std::vector<std::string> extern_lines() const;
  // Destroys the handles, each after `use_device(its device)` makes its context current.
  void release_handles(const std::function<void(uint32_t)>& use_device);
  // The call's product in `direction` (a, b -> out in the call's buffer order: x, w -> y;
  // dy, w -> dx; x, dy -> dw) on `stream` (NULL: the legacy default stream) for device slot
  // `device`; `workspace(bytes)` gives device memory of at least that size; `time_ms` (may be
  // empty: then the heuristic's first engine) times work on `stream`, to choose among cuDNN's
  // engines on a forward shape's first call. Throws std::runtime_error.
  void run(kir_support::ConvDirection direction, uint32_t device, const kir_support::ConvCall& call,
           CUdeviceptr a, CUdeviceptr b, CUdeviceptr out,
           const std::function<CUdeviceptr(size_t)>& workspace, CUstream stream,
           const CudnnGraph::Timer& time_ms);
  // Whether run honours its stream (cudnnSetStream), as a capture needs.
  bool takes_streams() const { return set_stream_ != nullptr; }

 private:
  using Handle = void*;
  using Desc = void*;
  struct AlgoPerf {  // cudnnConvolutionFwdAlgoPerf_t
    int algo, status;
    float time;
    size_t memory;
    int determinism, math_type, reserved[3];
  };
  kir_support::DynamicLibrary library_;
  CudnnGraph graph_;  // forward calls, where the library has the graph API
  bool deterministic_ = false;
  int (*create_)(Handle*) = nullptr;
  int (*destroy_)(Handle) = nullptr;
  int (*set_stream_)(Handle, CUstream) = nullptr;  // optional
  const char* (*error_string_)(int) = nullptr;
  int (*create_tensor_)(Desc*) = nullptr;
  int (*set_tensor_)(Desc, int, int, int, int, int, int, int, int, int) = nullptr;
  int (*destroy_tensor_)(Desc) = nullptr;
  int (*create_filter_)(Desc*) = nullptr;
  int (*set_filter_)(Desc, int, int, int, int, int, int) = nullptr;
  int (*destroy_filter_)(Desc) = nullptr;
  int (*create_conv_)(Desc*) = nullptr;
  int (*set_conv_)(Desc, int, int, int, int, int, int, int, int) = nullptr;
  int (*set_groups_)(Desc, int) = nullptr;
  int (*set_math_)(Desc, int) = nullptr;
  int (*destroy_conv_)(Desc) = nullptr;
  int (*find_algorithm_)(Handle, Desc, Desc, Desc, Desc, int, int*, AlgoPerf*) = nullptr;
  int (*workspace_size_)(Handle, Desc, Desc, Desc, Desc, int, size_t*) = nullptr;
  int (*forward_)(Handle, const void*, Desc, const void*, Desc, const void*, Desc, int, void*,
                  size_t, const void*, Desc, void*) = nullptr;
  // The backward ones take their descriptors in the order the calls below pass them.
  int (*find_data_algorithm_)(Handle, Desc, Desc, Desc, Desc, int, int*, AlgoPerf*) = nullptr;
  int (*data_workspace_size_)(Handle, Desc, Desc, Desc, Desc, int, size_t*) = nullptr;
  int (*backward_data_)(Handle, const void*, Desc, const void*, Desc, const void*, Desc, int, void*,
                        size_t, const void*, Desc, void*) = nullptr;
  int (*find_filter_algorithm_)(Handle, Desc, Desc, Desc, Desc, int, int*, AlgoPerf*) = nullptr;
  int (*filter_workspace_size_)(Handle, Desc, Desc, Desc, Desc, int, size_t*) = nullptr;
  int (*backward_filter_)(Handle, const void*, Desc, const void*, Desc, const void*, Desc, int,
                          void*, size_t, const void*, Desc, void*) = nullptr;
  // A convolution's descriptors, its algorithm (the fastest cuDNN timed) and workspace size,
  // made once per device and shape: cuDNN plans again for every new descriptor.
  struct Plan {
    Desc x = nullptr, y = nullptr, w = nullptr, conv = nullptr;
    int algo = -1;
    size_t workspace = 0;
  };
  Plan plan(kir_support::ConvDirection direction, uint32_t device, const kir_support::ConvCall& c,
            int type);
  void destroy(Plan& p);
  void check(int status, const char* what) const;
  std::vector<Handle> handles_;        // by device
  std::map<std::string, Plan> plans_;  // by device and call
};

}  // namespace kiln::ptx
