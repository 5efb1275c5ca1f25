#include "plugins/kir_support/extern_params.h"

#include <stdexcept>

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

}  // namespace kiln::kir_support
