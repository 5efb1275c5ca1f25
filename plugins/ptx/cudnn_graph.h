// Forward convolutions through cuDNN's graph (backend) API, the one eager PyTorch uses: each
// shape's execution plan is built once (heuristic mode A's engine configurations whose numerics
// the dtype allows; given a timer, the fastest of the first few that finalize, timed on the
// call's own buffers, else the first) and run with one
// cudnnBackendExecute per call. The legacy API's calls took 40-250 us of host time per
// convolution on the H200 (their plans are rebuilt inside cuDNN); x may have any strides
// (cuDNN's engines transpose NCHW to channels-last themselves, as in eager).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugins/kir_support/conv_call.h"
#include "plugins/kir_support/dynamic_library.h"
#include "plugins/ptx/cuda_driver.h"

namespace kiln::ptx {

class CudnnGraph {
 public:
  // Binds the backend API's six calls from `library`; false when it lacks one (cuDNN 8.0 or
  // older), and then no call here is made.
  bool bind(const kir_support::DynamicLibrary& library);
  bool bound() const { return execute_ != nullptr; }
  // Runs x * w -> y on `handle`'s stream with `workspace(bytes)` for the plan's scratch.
  // Returns false (and runs nothing) when cuDNN has no engine for the call that keeps the
  // dtype's precision or refuses to plan it; throws std::runtime_error when running fails.
  using Handle = void*;
  // A call's `tf32` lets f32 take engines that multiply on TF32 tensor cores. `time_ms(work)`,
  // when given, runs `work` on the handle's stream and returns the milliseconds it took.
  using Timer = std::function<float(const std::function<void()>&)>;
  bool forward(Handle handle, const kir_support::ConvCall& c, void* x, void* w, void* y,
               const std::function<CUdeviceptr(size_t)>& workspace, const Timer& time_ms);
  // Destroys every plan (before the handles they were built with).
  void release();

 private:
  using Desc = void*;
  struct Owned;
  struct Plan;
  // Every engine (up to `limit`) that keeps the dtype's precision and finalizes, in the
  // heuristic's order.
  std::vector<std::shared_ptr<Plan>> build(Handle handle, const kir_support::ConvCall& c,
                                           const int64_t alignment[3], size_t limit);
  // The fastest of `candidates` on the call's buffers; null when none ran.
  std::shared_ptr<Plan> fastest(Handle handle, std::vector<std::shared_ptr<Plan>> candidates,
                                void* const pointers[3],
                                const std::function<CUdeviceptr(size_t)>& workspace,
                                const Timer& time_ms) const;
  // The call's pointers and `plan`'s workspace, as cudnnBackendExecute takes them.
  std::unique_ptr<Owned> variant_pack(const Plan& plan, void* const pointers[3],
                                      const std::function<CUdeviceptr(size_t)>& workspace) const;
  void execute(Handle handle, const Plan& plan, const Owned& pack) const;
  Desc make(int type) const;
  void set(Desc d, int name, int type, int64_t count, const void* values) const;
  void finalize(Desc d, const char* what) const;
  void check(int status, const char* what) const;
  int (*create_)(int, Desc*) = nullptr;
  int (*destroy_)(Desc) = nullptr;
  int (*set_)(Desc, int, int, int64_t, const void*) = nullptr;
  int (*get_)(Desc, int, int, int64_t, int64_t*, void*) = nullptr;
  int (*finalize_)(Desc) = nullptr;
  int (*execute_)(Handle, Desc, Desc) = nullptr;
  const char* (*error_string_)(int) = nullptr;
  // By handle, call and pointer alignments; null where no engine serves the call.
  std::map<std::string, std::shared_ptr<Plan>> plans_;
};

}  // namespace kiln::ptx
