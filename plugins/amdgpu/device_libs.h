// The ROCm device libraries (ocml.bc and friends): where they are, and how ocml is linked into
// a kernel module with the control constants it reads (ISA version, denormal and rounding
// modes) defined by the plugin, so no per-ISA control file is needed: gfx942 and gfx1100 work
// with libraries older than those ISAs.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

namespace kiln::amdgpu {

// KILN_ROCM_DEVICE_LIBS, then ROCm's and Debian's usual folders, then `beside` (a plugin's
// own folder); "" when no folder holds ocml.bc.
std::string find_device_libs(const std::string& beside = "");

// Whether `m` calls into ocml.
bool calls_ocml(const llvm::Module& m);

// Links what `m` needs from `folder`/ocml.bc and defines the oclc control constants for
// `arch`. Throws std::runtime_error naming the file and the reason.
void link_ocml(llvm::Module& m, const std::string& folder, const std::string& arch);

}  // namespace kiln::amdgpu
