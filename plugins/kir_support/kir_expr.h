// Small readings of KIR text the code generators share: linear index expressions and
// integer constants.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kiln/kir.hpp"

namespace kiln::kir_support {

// Adds scale * (coefficients of e) to `terms` (var -> factor, "" -> constant); false when `e`
// is not linear (floordiv, mod, min, max).
bool linear_terms(const kir::Expr& e, int64_t scale, std::map<std::string, int64_t>& terms);

// An integer constant of KIR text as the reference converts it: a float text truncates
// toward zero, NaN gives 0, out-of-range values saturate; exact integers past 2^53 survive.
int64_t integer_literal(const std::string& text);

}  // namespace kiln::kir_support
