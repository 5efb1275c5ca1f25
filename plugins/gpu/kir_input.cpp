#include "plugins/gpu/kir_input.h"

#include <fstream>
#include <iostream>
#include <sstream>

namespace kiln::gpu {

std::optional<std::vector<kir::Kernel>> read_kir_input(const std::string& path,
                                                       const std::string& tool) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) {
      std::cerr << tool << ": cannot read " << path << "\n";
      return std::nullopt;
    }
    text << in.rdbuf();
  }
  auto parsed = kir::parse(text.str());
  if (!parsed.error.empty()) {
    std::cerr << tool << ": bad KIR: " << parsed.error << "\n";
    return std::nullopt;
  }
  return std::move(parsed.kernels);
}

}  // namespace kiln::gpu
