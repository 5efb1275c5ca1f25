#include "core/lower/library_call_signature.h"

namespace kiln {

std::string library_call_signature(const LoopKernel& call) {
  std::string s = call.extern_name;
  for (const auto& [key, value] : call.attrs) {
    if (key.find("offset") != std::string::npos) continue;
    s += " " + key + "=";
    s +=
        key == "dtype" ? std::string(dtype_name(static_cast<DType>(value))) : std::to_string(value);
  }
  return s;
}

}  // namespace kiln
