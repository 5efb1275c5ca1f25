// KIR kernels to an AMDGPU code object: one LLVM module per batch (gpu::emit_kernel for each
// kernel), the ROCm device libraries' ocml linked when a kernel calls the math library, the O3
// pipeline of the AMDGPU target machine, the backend's relocatable object, then lld's
// `-shared` link into the HSACO the HIP runtime loads.
#pragma once

#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/gpu/tuning_config.h"

namespace kiln::amdgpu {

struct AmdgpuOptions {
  std::string arch = "gfx90a";  // the device's ISA name
  // Lanes per wave: 0 for the ISA's own (64 on gfx9, 32 on gfx10 and later). gfx10+ hardware
  // can run wave64, but ds_bpermute stays within a 32-lane half there, so 64 is refused.
  unsigned wave = 0;
  std::string device_libs;  // the folder of ocml.bc; "" searches (find_device_libs)
  gpu::TuningConfig tuning;
};

struct AmdgpuOutput {
  std::string llvm_ir;   // the optimized module, before code generation
  std::string assembly;  // the backend's assembly (with `want_assembly`)
  std::string hsaco;     // the linked code object
};

// The wave width a kernel for `options` runs with.
unsigned wave_width(const AmdgpuOptions& options);

// Throws std::runtime_error naming the kernel or the step and the reason.
AmdgpuOutput compile_to_hsaco(const std::vector<kir::Kernel>& kernels, const AmdgpuOptions& options,
                              bool want_assembly = false);

// Whether LLVM's AMDGPU backend knows `arch` ("gfx90a", "gfx1100", ...).
bool known_arch(const std::string& arch);

}  // namespace kiln::amdgpu
