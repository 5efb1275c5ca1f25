// kiln-amdgpu-codegen: KIR (a file, or - for stdin) to the optimized LLVM IR, the assembly or
// the code object (HSACO) the amdgpu plugin generates, without a GPU. For golden tests, for
// checking code objects with llvm-readobj, and for reading generated code.
#include <fstream>
#include <iostream>
#include <string>

#include "plugins/amdgpu/amdgpu_compiler.h"
#include "plugins/gpu/kir_input.h"

namespace {

int usage() {
  std::cerr << "usage: kiln-amdgpu-codegen [--emit llvm|asm|hsaco] [--arch gfx90a] [--wave 32|64] "
               "[--device-libs DIR] [--config \"block_size=N ...\"] [-o FILE] FILE.kir|-\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string emit = "asm", path, output;
  kiln::amdgpu::AmdgpuOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--emit" && has_value) {
      emit = argv[++i];
    } else if (a == "--arch" && has_value) {
      options.arch = argv[++i];
    } else if (a == "--wave" && has_value) {
      const std::string lanes = argv[++i];
      if (lanes != "32" && lanes != "64") return usage();
      options.wave = lanes == "32" ? 32 : 64;
    } else if (a == "--device-libs" && has_value) {
      options.device_libs = argv[++i];
    } else if (a == "-o" && has_value) {
      output = argv[++i];
    } else if (a == "--config" && has_value) {
      try {
        options.tuning = kiln::gpu::parse_tuning(argv[++i], options.tuning);
      } catch (const std::invalid_argument& e) {
        std::cerr << "kiln-amdgpu-codegen: " << e.what() << "\n";
        return 2;
      }
    } else if (path.empty()) {
      path = a;
    } else {
      return usage();
    }
  }
  if (path.empty() || (emit != "llvm" && emit != "asm" && emit != "hsaco")) return usage();
  const auto kernels = kiln::gpu::read_kir_input(path, "kiln-amdgpu-codegen");
  if (!kernels) return 1;
  try {
    const auto out = kiln::amdgpu::compile_to_hsaco(*kernels, options, emit == "asm");
    const std::string& bytes = emit == "llvm"  ? out.llvm_ir
                               : emit == "asm" ? out.assembly
                                               : out.hsaco;
    if (output.empty()) {
      std::cout << bytes;
    } else {
      std::ofstream f(output, std::ios::binary);
      f << bytes;
      if (!f) {
        std::cerr << "kiln-amdgpu-codegen: cannot write " << output << "\n";
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "kiln-amdgpu-codegen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
