#include "plugins/amdgpu/hip_runtime.h"

#include <dlfcn.h>

#include <vector>

namespace kiln::amdgpu {
namespace {

template <class F>
bool resolve(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

bool resolve_all(HipRuntime& h) {
  bool ok = true;
  ok &= resolve(h.library, h.hipInit, "hipInit");
  ok &= resolve(h.library, h.hipGetDeviceCount, "hipGetDeviceCount");
  ok &= resolve(h.library, h.hipSetDevice, "hipSetDevice");
  ok &= resolve(h.library, h.hipDeviceGetName, "hipDeviceGetName");
  ok &= resolve(h.library, h.hipDeviceGetAttribute, "hipDeviceGetAttribute");
  ok &= resolve(h.library, h.hipDeviceTotalMem, "hipDeviceTotalMem");
  ok &= resolve(h.library, h.hipDeviceSynchronize, "hipDeviceSynchronize");
  ok &= resolve(h.library, h.hipMalloc, "hipMalloc");
  ok &= resolve(h.library, h.hipFree, "hipFree");
  ok &= resolve(h.library, h.hipMemcpyHtoD, "hipMemcpyHtoD");
  ok &= resolve(h.library, h.hipMemcpyDtoH, "hipMemcpyDtoH");
  ok &= resolve(h.library, h.hipMemcpyDtoD, "hipMemcpyDtoD");
  ok &= resolve(h.library, h.hipMemset, "hipMemset");
  ok &= resolve(h.library, h.hipHostMalloc, "hipHostMalloc");
  ok &= resolve(h.library, h.hipHostGetDevicePointer, "hipHostGetDevicePointer");
  ok &= resolve(h.library, h.hipHostFree, "hipHostFree");
  ok &= resolve(h.library, h.hipModuleLoadData, "hipModuleLoadData");
  ok &= resolve(h.library, h.hipModuleUnload, "hipModuleUnload");
  ok &= resolve(h.library, h.hipModuleGetFunction, "hipModuleGetFunction");
  ok &= resolve(h.library, h.hipModuleLaunchKernel, "hipModuleLaunchKernel");
  ok &= resolve(h.library, h.hipEventCreate, "hipEventCreate");
  ok &= resolve(h.library, h.hipEventDestroy, "hipEventDestroy");
  ok &= resolve(h.library, h.hipEventRecord, "hipEventRecord");
  ok &= resolve(h.library, h.hipEventSynchronize, "hipEventSynchronize");
  ok &= resolve(h.library, h.hipEventElapsedTime, "hipEventElapsedTime");
  ok &= resolve(h.library, h.hipGetErrorString, "hipGetErrorString");
  return ok;
}

}  // namespace

std::string open_hip_runtime(HipRuntime& h, const std::string& path) {
  const std::vector<std::string> names =
      // Sonames first: a HIP the process already loaded (a framework's) is the one matched.
      path.empty()
          ? std::vector<std::string>{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                     "libamdhip64.so", "/opt/rocm/lib/libamdhip64.so"}
          : std::vector<std::string>{path};
  std::string why;
  for (const std::string& name : names) {
    // Kept mapped: the HIP runtime's teardown on dlclose is not to be relied on.
    h.library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h.library) break;
    if (why.empty()) why = dlerror();
  }
  if (!h.library) return "no HIP runtime (libamdhip64.so): " + why;
  if (!resolve_all(h)) {
    close_hip_runtime(h);
    return "the HIP runtime lacks an entry point the plugin needs (ROCm too old?)";
  }
  if (const hipError r = h.hipInit(0); r != 0) {
    const std::string failed = "hipInit failed: " + hip_error(h, r);
    close_hip_runtime(h);
    return failed;
  }
  return "";
}

void close_hip_runtime(HipRuntime& h) {
  if (h.library) dlclose(h.library);
  h = HipRuntime{};
}

std::string hip_error(const HipRuntime& h, hipError r) {
  const char* text = h.hipGetErrorString ? h.hipGetErrorString(r) : nullptr;
  return std::string(text ? text : "unknown HIP error") + " (" + std::to_string(r) + ")";
}

}  // namespace kiln::amdgpu
