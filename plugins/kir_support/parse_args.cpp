#include "plugins/kir_support/parse_args.h"

#include <kiln/plugin.hpp>
#include <string_view>

namespace kiln::kir_support {

std::vector<kir::Kernel> parse_kir_argument(const char* text, size_t size) {
  using kiln::sdk::Failure;
  if (!text) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "no KIR text");
  kir::ParseResult parsed = kir::parse(std::string_view(text, size));
  if (!parsed.ok()) throw Failure(KILN_STATUS_INVALID_ARGUMENT, "bad KIR: " + parsed.error);
  return std::move(parsed.kernels);
}

}  // namespace kiln::kir_support
