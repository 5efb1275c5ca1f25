// kiln-cpu-codegen [--vector-width N] KIR_FILE|-: prints the C++ the cpp_openmp plugin generates
// for a kir/1 text, without compiling it. Golden tests of the generated code run through it.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "plugins/cpp_openmp/codegen.h"

int main(int argc, char** argv) {
  // Fixed options, so the golden text does not depend on this machine's core count or ISA.
  kiln::cpu::CodegenOptions options;
  options.threads = 4;
  if (argc == 4 && std::string(argv[1]) == "--vector-width") {
    options.vector_width = std::atoi(argv[2]);
    argv += 2;
    argc -= 2;
  }
  if (argc != 2) {
    std::cerr << "usage: kiln-cpu-codegen [--vector-width N] KIR_FILE (or - for standard input)\n";
    return 2;
  }
  std::stringstream text;
  if (std::string(argv[1]) == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(argv[1]);
    if (!in) {
      std::cerr << "kiln-cpu-codegen: cannot read " << argv[1] << "\n";
      return 1;
    }
    text << in.rdbuf();
  }
  const kiln::kir::ParseResult parsed = kiln::kir::parse(text.str());
  if (!parsed.ok()) {
    std::cerr << "kiln-cpu-codegen: bad KIR: " << parsed.error << "\n";
    return 1;
  }
  try {
    std::cout << kiln::cpu::generate_source(parsed.kernels, options);
  } catch (const std::exception& e) {
    std::cerr << "kiln-cpu-codegen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
