#include "plugins/kir_support/extern_params.h"

#include <stdexcept>
#include <string>

#include "kiln/plugin.hpp"

namespace kiln::kir_support {

std::vector<int64_t> integer_params(const kiln_launch_args& args) {
  std::vector<int64_t> params;
  for (size_t i = 0; i < args.num_scalars; ++i) {
    const auto s = kiln::sdk::read_array_element(args.scalars, i);
    if (s.type != KILN_SCALAR_INT) throw std::invalid_argument("parameters are integers");
    params.push_back(s.int_value);
  }
  return params;
}

ExternDtype read_extern_dtype(int64_t code) {
  if (code == kir::kExternTf32) return {kir::DType::F32, true};
  if (code < 0 || code > static_cast<int64_t>(kir::DType::F64))
    throw std::invalid_argument("unknown dtype code " + std::to_string(code));
  return {static_cast<kir::DType>(code), false};
}

}  // namespace kiln::kir_support
