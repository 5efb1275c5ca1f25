// The Core ATen ops kiln does not implement, and why: some cannot be part of a static,
// functional kiln graph by nature (how they run instead is part of the reason), others are
// not implemented yet. Errors for graphs that use them, and `kiln ops`, say the reason.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

struct Unsupported {
  bool by_nature = false;
  std::string reason;  // empty: not listed
};

Unsupported unsupported_reason(std::string_view op);

}  // namespace kiln
