// The code half of the cpp_openmp ABI table: supports, compile, load, launch and the
// mm/bmm externs.
#pragma once

#include <string>

#include "plugin_state.h"

namespace kiln::cpu {

void add_code_functions(kiln_plugin_api& api);
// Compiler version, flags, thread count and codegen version: what the generated code
// depends on besides the KIR.
std::string compiler_fingerprint(const kiln_plugin& plugin);

}  // namespace kiln::cpu
