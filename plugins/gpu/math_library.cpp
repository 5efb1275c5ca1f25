#include "plugins/gpu/math_library.h"

#include <set>

namespace kiln::gpu {

bool in_math_library(const std::string& fn) {
  static const std::set<std::string> functions = {
      "sin",   "cos", "tan",   "asin", "acos",  "atan", "sinh",  "cosh", "tanh", "asinh", "acosh",
      "atanh", "exp", "expm1", "log",  "log1p", "log2", "log10", "erf",  "pow",  "atan2"};
  return functions.contains(fn);
}

unsigned math_arity(const std::string& fn) {
  return fn == "pow" || fn == "atan2" ? 2 : 1;
}

}  // namespace kiln::gpu
