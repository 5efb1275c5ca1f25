// Random ops shared between their references and lowerings.
#pragma once

#include <cstdint>

namespace kiln {

// native_dropout keeps an element whose uniform word's top 24 bits lie below this.
int64_t dropout_threshold(double p);

}  // namespace kiln
