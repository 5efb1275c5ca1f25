// kiln-cpu-codegen [--vector-width N] [--config LINE] [--tuning-space] KIR_FILE|-: prints the
// C++ the cpp_openmp plugin generates for a kir/1 text (under a tuning config line), without
// compiling it, or each kernel's tuning space. Golden tests of the generated code run
// through it.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "plugins/cpp_openmp/codegen.h"
#include "plugins/cpp_openmp/tuning_space.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-cpu-codegen [--vector-width N] [--config LINE] [--tuning-space] KIR_FILE (or - "
    "for standard input)\n";

}  // namespace

int main(int argc, char** argv) {
  // Fixed options, so the golden text does not depend on this machine's core count or ISA.
  kiln::cpu::CodegenOptions options;
  options.threads = 4;
  constexpr int kNativeLanes = 8;
  std::string config, file;
  bool space = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--vector-width" && i + 1 < argc) {
      options.vector_width = std::atoi(argv[++i]);
    } else if (arg == "--config" && i + 1 < argc) {
      config = argv[++i];
    } else if (arg == "--tuning-space") {
      space = true;
    } else if (file.empty() && (arg == "-" || arg[0] != '-')) {
      file = arg;
    } else {
      std::cerr << kUsage;
      return 2;
    }
  }
  if (file.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "kiln-cpu-codegen: cannot read " << file << "\n";
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
    options = kiln::cpu::apply_tuning(config, options, options.threads);
    if (!space) {
      std::cout << kiln::cpu::generate_source(parsed.kernels, options);
      return 0;
    }
    for (const kiln::kir::Kernel& k : parsed.kernels) {
      std::cout << "space " << k.name << "\n"
                << kiln::cpu::tuning_space_text(k, options, kNativeLanes);
    }
  } catch (const std::exception& e) {
    std::cerr << "kiln-cpu-codegen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
