// The 128-bit hash (XXH3) of KIR text, as 32 hex digits: the heart of every cache key.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

std::string kir_hash(std::string_view text);

}  // namespace kiln
