// lld's ELF driver initializes every LLVM target it was built with, for link-time optimization
// of bitcode inputs. The plugin links only object files for AMDGPU and carries only the AMDGPU
// backend (registered by the compiler), so the other targets' entry points do nothing here.
// They stay local to the plugin (hidden visibility and the version script).

#define KILN_NO_TARGET(T)                            \
  extern "C" void LLVMInitialize##T##TargetInfo() {} \
  extern "C" void LLVMInitialize##T##Target() {}     \
  extern "C" void LLVMInitialize##T##TargetMC() {}   \
  extern "C" void LLVMInitialize##T##AsmPrinter() {} \
  extern "C" void LLVMInitialize##T##AsmParser() {}

KILN_NO_TARGET(AArch64)
KILN_NO_TARGET(ARM)
KILN_NO_TARGET(AVR)
KILN_NO_TARGET(BPF)
KILN_NO_TARGET(Hexagon)
KILN_NO_TARGET(Lanai)
KILN_NO_TARGET(LoongArch)
KILN_NO_TARGET(M68k)
KILN_NO_TARGET(MSP430)
KILN_NO_TARGET(Mips)
KILN_NO_TARGET(NVPTX)
KILN_NO_TARGET(PowerPC)
KILN_NO_TARGET(RISCV)
KILN_NO_TARGET(Sparc)
KILN_NO_TARGET(SystemZ)
KILN_NO_TARGET(VE)
KILN_NO_TARGET(WebAssembly)
KILN_NO_TARGET(X86)
KILN_NO_TARGET(XCore)
KILN_NO_TARGET(Xtensa)
// The AMDGPU assembly parser: only bitcode inputs with inline assembly would need it.
extern "C" void LLVMInitializeAMDGPUAsmParser() {}

// LLVM's LTO, built with Polly linked into its tools, registers Polly's passes: none here.
#include <llvm/Passes/PassPlugin.h>
llvm::PassPluginLibraryInfo getPollyPluginInfo();
llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "no-polly", "0", [](llvm::PassBuilder&) {}};
}
