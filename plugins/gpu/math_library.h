// The functions a GPU target's math library supplies (libdevice's __nv_*, ocml's __ocml_*),
// by the name KIR gives them: the generator calls them, each target names them its own way.
#pragma once

#include <string>

namespace kiln::gpu {

// Whether `fn` ("exp", "atan2", ...) comes from the math library.
bool in_math_library(const std::string& fn);

// How many arguments library function `fn` takes (1, or 2 for pow and atan2).
unsigned math_arity(const std::string& fn);

}  // namespace kiln::gpu
