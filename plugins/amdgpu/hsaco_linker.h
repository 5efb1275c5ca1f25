// The last step of an AMDGPU compile: the backend's relocatable ELF object to the shared
// object (HSACO) the HIP runtime loads, through lld linked in as a library (`ld.lld -shared`).
#pragma once

#include <string>

namespace kiln::amdgpu {

// Throws std::runtime_error with lld's messages when the link fails.
std::string link_hsaco(const std::string& object);

}  // namespace kiln::amdgpu
