// The ops that may touch a complex64 value: those complex lowering knows how to rewrite into
// real ops on f32 pairs. Graph building refuses a complex operand anywhere else, naming the op.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

bool has_complex_form(std::string_view op);
// All of them, in name order, for messages and tests.
const std::vector<std::string>& complex_form_ops();

}  // namespace kiln
