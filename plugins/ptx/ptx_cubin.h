// PTX assembled into the device's own code (a cubin) by the driver's JIT when a unit
// compiles: the core compiles units in parallel and keeps artifacts in its kernel cache, while
// cuModuleLoadData of PTX assembles at load, one unit after another, in every process that
// loads it before the driver's own cache has it.
#pragma once

#include <string>

#include "plugins/ptx/cuda_driver.h"

namespace kiln::ptx {

// The cubin for the current context's device, or "" with `why` set (a driver without the
// linker's entry points, or the JIT's error log).
std::string assemble_cubin(const CudaDriver& cuda, const std::string& ptx, std::string& why);

}  // namespace kiln::ptx
