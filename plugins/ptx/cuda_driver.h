// The CUDA driver API, opened at run time (dlopen of libcuda.so.1): no link-time CUDA
// dependency, so the plugin loads on any machine and reports no devices where no driver is.
// Only the entry points the plugin uses are declared, with the driver's own types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace kiln::ptx {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUlinkState = struct CUlinkState_st*;
// CU_IPC_HANDLE_SIZE bytes naming another process's allocation (passed by value).
struct CUipcMemHandle {
  char reserved[64];
};

// CUDA_MEMCPY2D: a copy of `Height` rows of `WidthInBytes`, each row `srcPitch` /
// `dstPitch` bytes after the one before.
struct Memcpy2D {
  size_t srcXInBytes = 0, srcY = 0;
  int srcMemoryType = 0;
  const void* srcHost = nullptr;
  CUdeviceptr srcDevice = 0;
  void* srcArray = nullptr;
  size_t srcPitch = 0;
  size_t dstXInBytes = 0, dstY = 0;
  int dstMemoryType = 0;
  void* dstHost = nullptr;
  CUdeviceptr dstDevice = 0;
  void* dstArray = nullptr;
  size_t dstPitch = 0;
  size_t WidthInBytes = 0, Height = 0;
};

// Attributes the plugin reads (values of the driver's CUdevice_attribute).
enum CudaAttribute : int {
  kMaxThreadsPerBlock = 1,
  kSharedMemoryPerBlock = 8,
  kClockRateKHz = 13,
  kMultiprocessorCount = 16,
  kMemoryClockRateKHz = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kSharedMemoryPerBlockOptin = 97,  // with kMaxDynamicSharedBytes set on the kernel
};

struct CudaDriver {
  void* library = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  // Streams and asynchronous copies (ABI 1.2).
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuEventQuery)(CUevent) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  // Optional: NULL where the driver lacks it (then kernels keep the driver's default).
  CUresult (*cuFuncSetAttribute)(CUfunction, int attribute, int value) = nullptr;
  // Optional: NULL where the driver lacks it (then products' rows are not padded).
  CUresult (*cuMemcpy2DAsync)(const Memcpy2D*, CUstream) = nullptr;
  // Memory other processes share (ABI 1.3); optional: NULL where the driver lacks them.
  CUresult (*cuIpcOpenMemHandle)(CUdeviceptr*, CUipcMemHandle, unsigned) = nullptr;
  CUresult (*cuIpcCloseMemHandle)(CUdeviceptr) = nullptr;
  CUresult (*cuMemGetAddressRange)(CUdeviceptr*, size_t*, CUdeviceptr) = nullptr;
  // Stream capture and graph replay (ABI 1.4); optional: NULL where the driver lacks them.
  CUresult (*cuStreamBeginCapture)(CUstream, int mode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  // The driver's JIT as a linker (PTX -> cubin); optional: NULL where the driver lacks them
  // (then PTX is assembled when a module loads).
  CUresult (*cuLinkCreate)(unsigned, int* options, void** values, CUlinkState*) = nullptr;
  CUresult (*cuLinkAddData)(CUlinkState, int type, void* data, size_t bytes, const char* name,
                            unsigned, int* options, void** values) = nullptr;
  CUresult (*cuLinkComplete)(CUlinkState, void** cubin, size_t* bytes) = nullptr;
  CUresult (*cuLinkDestroy)(CUlinkState) = nullptr;
};

// CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, in percent of the most shared memory.
inline constexpr int kPreferredSharedCarveout = 9;
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: a kernel's opt-in past 48 KB.
inline constexpr int kMaxDynamicSharedBytes = 8;

// CU_MEMORYTYPE_DEVICE, for Memcpy2D's memory types.
inline constexpr int kMemoryTypeDevice = 2;

// CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: a call on the capturing thread that could touch the
// capture's work without being part of it (a wait, an allocation) fails instead.
inline constexpr int kCaptureModeThreadLocal = 1;
// CU_STREAM_NON_BLOCKING: a stream not ordered with the legacy default stream.
inline constexpr unsigned kStreamNonBlocking = 1;

// CU_EVENT_DISABLE_TIMING: an event that only orders work (cheaper to record and wait on).
inline constexpr unsigned kEventDisableTiming = 2;

// cuEventQuery's answer while the work before the event runs.
inline constexpr CUresult kCudaErrorNotReady = 600;

// Opens the driver and initializes it. Returns "" on success, else why no driver is usable
// (the plugin then reports no devices). `before_init` runs once the driver library is
// there, before its (slow) initialization.
std::string open_cuda_driver(CudaDriver& d, const std::function<void()>& before_init = {});
void close_cuda_driver(CudaDriver& d);

// "CUDA_ERROR_...: text" for a failed call.
std::string cuda_error(const CudaDriver& d, CUresult r);

}  // namespace kiln::ptx
