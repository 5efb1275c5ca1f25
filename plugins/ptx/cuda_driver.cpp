#include "plugins/ptx/cuda_driver.h"

#include <dlfcn.h>

namespace kiln::ptx {
namespace {

template <class F>
bool resolve(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

}  // namespace

std::string open_cuda_driver(CudaDriver& d, const std::function<void()>& before_init) {
  d.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d.library) return std::string("no CUDA driver (libcuda.so.1): ") + dlerror();
  bool ok = true;
  ok &= resolve(d.library, d.cuInit, "cuInit");
  ok &= resolve(d.library, d.cuDeviceGetCount, "cuDeviceGetCount");
  ok &= resolve(d.library, d.cuDeviceGet, "cuDeviceGet");
  ok &= resolve(d.library, d.cuDeviceGetName, "cuDeviceGetName");
  ok &= resolve(d.library, d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  ok &= resolve(d.library, d.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  ok &= resolve(d.library, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  ok &= resolve(d.library, d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  ok &= resolve(d.library, d.cuCtxSetCurrent, "cuCtxSetCurrent");
  ok &= resolve(d.library, d.cuCtxSynchronize, "cuCtxSynchronize");
  ok &= resolve(d.library, d.cuMemAlloc, "cuMemAlloc_v2");
  ok &= resolve(d.library, d.cuMemFree, "cuMemFree_v2");
  ok &= resolve(d.library, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  ok &= resolve(d.library, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  ok &= resolve(d.library, d.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  ok &= resolve(d.library, d.cuMemsetD8, "cuMemsetD8_v2");
  ok &= resolve(d.library, d.cuMemHostAlloc, "cuMemHostAlloc");
  ok &= resolve(d.library, d.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
  ok &= resolve(d.library, d.cuMemFreeHost, "cuMemFreeHost");
  ok &= resolve(d.library, d.cuModuleLoadData, "cuModuleLoadData");
  ok &= resolve(d.library, d.cuModuleUnload, "cuModuleUnload");
  ok &= resolve(d.library, d.cuModuleGetFunction, "cuModuleGetFunction");
  ok &= resolve(d.library, d.cuLaunchKernel, "cuLaunchKernel");
  ok &= resolve(d.library, d.cuEventCreate, "cuEventCreate");
  ok &= resolve(d.library, d.cuEventDestroy, "cuEventDestroy_v2");
  ok &= resolve(d.library, d.cuEventRecord, "cuEventRecord");
  ok &= resolve(d.library, d.cuEventSynchronize, "cuEventSynchronize");
  ok &= resolve(d.library, d.cuEventElapsedTime, "cuEventElapsedTime");
  ok &= resolve(d.library, d.cuGetErrorString, "cuGetErrorString");
  ok &= resolve(d.library, d.cuStreamCreate, "cuStreamCreate");
  ok &= resolve(d.library, d.cuStreamDestroy, "cuStreamDestroy_v2");
  ok &= resolve(d.library, d.cuStreamSynchronize, "cuStreamSynchronize");
  ok &= resolve(d.library, d.cuStreamWaitEvent, "cuStreamWaitEvent");
  ok &= resolve(d.library, d.cuEventQuery, "cuEventQuery");
  ok &= resolve(d.library, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  ok &= resolve(d.library, d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  ok &= resolve(d.library, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  resolve(d.library, d.cuMemcpy2DAsync, "cuMemcpy2DAsync_v2");     // optional
  resolve(d.library, d.cuFuncSetAttribute, "cuFuncSetAttribute");  // optional
  // Optional: without them the plugin imports no memory.
  if (!resolve(d.library, d.cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2") ||
      !resolve(d.library, d.cuIpcCloseMemHandle, "cuIpcCloseMemHandle") ||
      !resolve(d.library, d.cuMemGetAddressRange, "cuMemGetAddressRange_v2"))
    d.cuIpcOpenMemHandle = nullptr;
  // Optional: without them streams do not capture.
  if (!resolve(d.library, d.cuStreamBeginCapture, "cuStreamBeginCapture_v2") ||
      !resolve(d.library, d.cuStreamEndCapture, "cuStreamEndCapture") ||
      !resolve(d.library, d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags") ||
      !resolve(d.library, d.cuGraphLaunch, "cuGraphLaunch") ||
      !resolve(d.library, d.cuGraphExecDestroy, "cuGraphExecDestroy") ||
      !resolve(d.library, d.cuGraphDestroy, "cuGraphDestroy"))
    d.cuStreamBeginCapture = nullptr;
  // Optional: without them each module's PTX is assembled when it loads.
  if (!resolve(d.library, d.cuLinkCreate, "cuLinkCreate_v2") ||
      !resolve(d.library, d.cuLinkAddData, "cuLinkAddData_v2") ||
      !resolve(d.library, d.cuLinkComplete, "cuLinkComplete") ||
      !resolve(d.library, d.cuLinkDestroy, "cuLinkDestroy"))
    d.cuLinkCreate = nullptr;
  if (!ok) {
    close_cuda_driver(d);
    return "the CUDA driver lacks an entry point the plugin needs (driver too old?)";
  }
  if (before_init) before_init();
  if (const CUresult r = d.cuInit(0); r != 0) {
    const std::string why = "cuInit failed: " + cuda_error(d, r);
    close_cuda_driver(d);
    return why;
  }
  return "";
}

void close_cuda_driver(CudaDriver& d) {
  if (d.library) dlclose(d.library);
  d = CudaDriver{};
}

std::string cuda_error(const CudaDriver& d, CUresult r) {
  const char* text = nullptr;
  if (d.cuGetErrorString) d.cuGetErrorString(r, &text);
  return "CUDA error " + std::to_string(r) + (text ? std::string(": ") + text : "");
}

}  // namespace kiln::ptx
