// The KIR a GPU code generator tool reads: a file, or "-" for stdin. For kiln-ptx-codegen and
// kiln-amdgpu-codegen.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/kir.hpp"

namespace kiln::gpu {

// The kernels of `path`; none after printing "TOOL: why" to stderr (unreadable, bad KIR).
std::optional<std::vector<kir::Kernel>> read_kir_input(const std::string& path,
                                                       const std::string& tool);

}  // namespace kiln::gpu
