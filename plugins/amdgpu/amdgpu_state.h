// The state of one amdgpu plugin instance, shared by its source files.
#pragma once

#include <kiln/plugin.hpp>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "plugins/amdgpu/amdgpu_compiler.h"
#include "plugins/amdgpu/hip_runtime.h"
#include "plugins/amdgpu/rocblas_library.h"
#include "plugins/kir_support/device_memory.h"
#include "plugins/kir_support/memory_functions.h"

namespace kiln::amdgpu {

struct Device {
  int ordinal = 0;
  std::string name;
  std::string arch;  // "gfx90a"; "" when the topology did not say
  kiln::sdk::PropertyList properties;
};

}  // namespace kiln::amdgpu

struct kiln_plugin {
  kiln::sdk::HostLog log;
  kiln::amdgpu::HipRuntime hip;
  std::string no_runtime;  // why there are no devices ("" when HIP opened)
  std::vector<kiln::amdgpu::Device> devices;
  std::string device_libs;
  std::string arch = "auto";  // "auto": each device's own ISA
  unsigned wave = 0;          // 0: the ISA's own width
  kiln::gpu::TuningConfig tuning;
  std::string fingerprint;
  // The matmul externs: rocBLAS, opened on first need (a graph with a matmul).
  kiln::amdgpu::RocblasLibrary rocblas;
  std::string rocblas_option;  // the plugin's `rocblas` option ("" searches, "off")
  bool rocblas_tried = false;
  std::mutex rocblas_mutex;  // guards the three above (handles are made on first use)
  kiln::amdgpu::RocblasLibrary& matmul_library();
  std::mutex mutex;  // guards `pending`
  // Executables with launches whose error words have not been read since the last wait.
  std::set<kiln_executable*> pending;
  kiln::kir_support::DeviceMemory memory;  // allocations and the host's registrations

  // Makes `device` current on this thread; throws when it does not exist.
  kiln::amdgpu::Device& use(uint32_t device);
  // Throws with HIP's message when `r` is an error.
  void check(kiln::amdgpu::hipError r, const std::string& what) const;
  // The compiler's options for `device`.
  kiln::amdgpu::AmdgpuOptions options_for(uint32_t device);
};

namespace kiln::amdgpu {
void add_code_functions(kiln_plugin_api& api);
void add_extern_functions(kiln_plugin_api& api);
// Waits for `device` (current on this thread) and throws, naming the kernel, the first error
// a kernel launched there reported since the last wait.
void finish_launches(kiln_plugin& p, uint32_t device);
}  // namespace kiln::amdgpu
