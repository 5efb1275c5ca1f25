#include "core/lower/library_call_signature.h"

#include <kiln/kir.hpp>

namespace kiln {

std::string library_call_signature(const LoopKernel& call) {
  std::string s = call.extern_name;
  for (const auto& [key, value] : call.attrs) {
    if (key.find("offset") != std::string::npos) continue;
    s += " " + key + "=";
    // The dtype by name: "tf32" for f32 allowed TF32 products (a choice of its own).
    s += key == "dtype" ? std::string(kir::extern_dtype_name(value)) : std::to_string(value);
  }
  return s;
}

}  // namespace kiln
