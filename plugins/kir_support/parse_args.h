// The KIR text a plugin receives through the ABI, parsed, or a kiln::sdk::Failure
// (INVALID_ARGUMENT) that names the line and the reason.
#pragma once

#include <cstddef>
#include <vector>

#include "kiln/kir.hpp"

namespace kiln::kir_support {

std::vector<kir::Kernel> parse_kir_argument(const char* text, size_t size);

}  // namespace kiln::kir_support
