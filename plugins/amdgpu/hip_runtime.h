// The HIP runtime, opened at run time (dlopen of libamdhip64.so): no link-time ROCm
// dependency, so the plugin loads on any machine and reports no devices where ROCm or an AMD
// GPU is absent. Only the entry points the plugin uses are declared, with HIP's own types.
#pragma once

#include <cstddef>
#include <string>

namespace kiln::amdgpu {

using hipError = int;
using hipDeviceptr = void*;
using hipModule = struct ihipModule_t*;
using hipFunction = struct ihipModuleSymbol_t*;
using hipStream = struct ihipStream_t*;
using hipEvent = struct ihipEvent_t*;

// Attributes the plugin reads (values of HIP's hipDeviceAttribute_t since ROCm 5).
enum HipAttribute : int {
  kClockRateKHz = 5,
  kL2CacheSize = 19,
  kMaxThreadsPerBlock = 56,
  kMemoryBusWidth = 59,
  kMemoryClockRateKHz = 60,
  kMultiprocessorCount = 63,
  kMaxSharedMemoryPerBlock = 74,
  kWarpSize = 87,
};

struct HipRuntime {
  void* library = nullptr;
  hipError (*hipInit)(unsigned) = nullptr;
  hipError (*hipGetDeviceCount)(int*) = nullptr;
  hipError (*hipSetDevice)(int) = nullptr;
  hipError (*hipDeviceGetName)(char*, int, int) = nullptr;
  hipError (*hipDeviceGetAttribute)(int*, int, int) = nullptr;
  hipError (*hipDeviceTotalMem)(size_t*, int) = nullptr;
  hipError (*hipDeviceSynchronize)() = nullptr;
  hipError (*hipMalloc)(void**, size_t) = nullptr;
  hipError (*hipFree)(void*) = nullptr;
  hipError (*hipMemcpyHtoD)(hipDeviceptr, const void*, size_t) = nullptr;
  hipError (*hipMemcpyDtoH)(void*, hipDeviceptr, size_t) = nullptr;
  hipError (*hipMemcpyDtoD)(hipDeviceptr, hipDeviceptr, size_t) = nullptr;
  hipError (*hipMemset)(void*, int, size_t) = nullptr;
  hipError (*hipHostMalloc)(void**, size_t, unsigned) = nullptr;
  hipError (*hipHostGetDevicePointer)(void**, void*, unsigned) = nullptr;
  hipError (*hipHostFree)(void*) = nullptr;
  hipError (*hipModuleLoadData)(hipModule*, const void*) = nullptr;
  hipError (*hipModuleUnload)(hipModule) = nullptr;
  hipError (*hipModuleGetFunction)(hipFunction*, hipModule, const char*) = nullptr;
  hipError (*hipModuleLaunchKernel)(hipFunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, hipStream, void**, void**) = nullptr;
  hipError (*hipEventCreate)(hipEvent*) = nullptr;
  hipError (*hipEventDestroy)(hipEvent) = nullptr;
  hipError (*hipEventRecord)(hipEvent, hipStream) = nullptr;
  hipError (*hipEventSynchronize)(hipEvent) = nullptr;
  hipError (*hipEventElapsedTime)(float*, hipEvent, hipEvent) = nullptr;
  const char* (*hipGetErrorString)(hipError) = nullptr;
};

// Opens the runtime (`path`, or the usual names when "") and initializes it. Returns "" on
// success, else why no runtime is usable (the plugin then reports no devices).
std::string open_hip_runtime(HipRuntime& h, const std::string& path = "");
void close_hip_runtime(HipRuntime& h);

// HIP's text for a failed call, with its number.
std::string hip_error(const HipRuntime& h, hipError r);

}  // namespace kiln::amdgpu
