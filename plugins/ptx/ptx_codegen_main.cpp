// kiln-ptx-codegen: KIR (a file, or - for stdin) to the optimized LLVM IR or the PTX the ptx
// plugin generates, without a GPU. For golden tests and for reading generated code.
#include <fstream>
#include <iostream>
#include <string>

#include "plugins/gpu/kir_input.h"
#include "plugins/ptx/ptx_compiler.h"

int main(int argc, char** argv) {
  std::string emit = "ptx", path;
  kiln::ptx::PtxOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--emit" && i + 1 < argc) {
      emit = argv[++i];
    } else if (a == "--arch" && i + 1 < argc) {
      options.arch = argv[++i];
    } else if (a == "--libdevice" && i + 1 < argc) {
      options.libdevice = argv[++i];
    } else if (a == "--config" && i + 1 < argc) {
      try {
        options.tuning = kiln::gpu::parse_tuning(argv[++i], options.tuning);
      } catch (const std::invalid_argument& e) {
        std::cerr << "kiln-ptx-codegen: " << e.what() << "\n";
        return 2;
      }
    } else if (path.empty()) {
      path = a;
    } else {
      std::cerr << "usage: kiln-ptx-codegen [--emit llvm|ptx] [--arch sm_90] [--libdevice F] "
                   "[--config \"block_size=N ...\"] FILE.kir|-\n";
      return 2;
    }
  }
  if (path.empty() || (emit != "llvm" && emit != "ptx")) {
    std::cerr << "usage: kiln-ptx-codegen [--emit llvm|ptx] [--arch sm_90] FILE.kir|-\n";
    return 2;
  }
  const auto kernels = kiln::gpu::read_kir_input(path, "kiln-ptx-codegen");
  if (!kernels) return 1;
  try {
    const auto out = kiln::ptx::compile_to_ptx(*kernels, options);
    std::cout << (emit == "llvm" ? out.llvm_ir : out.ptx);
  } catch (const std::exception& e) {
    std::cerr << "kiln-ptx-codegen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
