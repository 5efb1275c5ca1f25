// The plugin's own kernels for extern calls (fused attention, convolutions): offered where every
// device has their tensor-core instructions, compiled through LLVM for a call's shape on its
// first use on a device, kept until the plugin goes.
#include <cstdlib>
#include <kiln/plugin.hpp>
#include <stdexcept>

#include "plugins/ptx/ptx_state.h"

namespace kiln::ptx {

using kiln::sdk::Failure;

bool has_tensor_cores(const kiln_plugin& p) {
  if (p.devices.empty()) return false;
  const auto sm = [](const std::string& arch) {
    return arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0;
  };
  if (p.arch != "auto") return sm(p.arch) >= 80;
  for (const Device& d : p.devices)
    if (sm(d.arch) < 80) return false;
  return true;
}

const CallKernels::Loaded& load_call_kernel(
    kiln_plugin& p, CallKernels& kernels, uint32_t device, const std::string& key,
    const char* entry, const std::function<std::string(const std::string& arch)>& compile,
    const kiln_stream* stream, const std::string& name, int dynamic_shared_bytes,
    const char* second_entry) {
  const auto at = std::make_pair(device, key);
  if (auto it = kernels.loaded.find(at); it != kernels.loaded.end()) return it->second;
  refuse_in_capture(stream, "extern " + name + " (its first call compiles the kernel)");
  std::string ptx;
  try {
    ptx = compile(p.arch_for(device));
  } catch (const std::exception& e) {
    throw Failure(KILN_STATUS_UNIMPLEMENTED, name + ": " + e.what());
  }
  CallKernels::Loaded loaded;
  p.check(p.cuda.cuModuleLoadData(&loaded.module, ptx.c_str()), name + ": cuModuleLoadData");
  for (const auto& [function, name_of] :
       {std::pair{&loaded.function, entry}, std::pair{&loaded.second, second_entry}}) {
    if (!name_of) continue;
    if (const CUresult r = p.cuda.cuModuleGetFunction(function, loaded.module, name_of)) {
      p.cuda.cuModuleUnload(loaded.module);
      p.check(r, name + ": cuModuleGetFunction(" + name_of + ")");
    }
  }
  // The kernels keep tens of KB of shared memory per block: the largest carveout lets several
  // blocks share an SM (a preference: where the driver declines it, the kernel still runs).
  if (p.cuda.cuFuncSetAttribute)
    p.cuda.cuFuncSetAttribute(loaded.function, kPreferredSharedCarveout, 100);
  if (dynamic_shared_bytes > 48 * 1024) {  // the kernel's opt-in: past 48 KB a launch fails
    const CUresult r = p.cuda.cuFuncSetAttribute
                           ? p.cuda.cuFuncSetAttribute(loaded.function, kMaxDynamicSharedBytes,
                                                       dynamic_shared_bytes)
                           : CUresult{1};
    if (r) {
      p.cuda.cuModuleUnload(loaded.module);
      p.check(r, name + ": cuFuncSetAttribute(" + std::to_string(dynamic_shared_bytes) +
                     " bytes of dynamic shared memory)");
    }
  }
  return kernels.loaded[at] = loaded;
}

void release_call_kernels(kiln_plugin& p, CallKernels& kernels) {
  for (const auto& [key, loaded] : kernels.loaded)
    if (p.cuda.cuCtxSetCurrent(p.devices[key.first].context) == 0)
      p.cuda.cuModuleUnload(loaded.module);
  kernels.loaded.clear();
}

}  // namespace kiln::ptx
