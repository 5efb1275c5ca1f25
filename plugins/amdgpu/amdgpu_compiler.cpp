#include "plugins/amdgpu/amdgpu_compiler.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/TargetParser.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "plugins/amdgpu/amdgpu_target.h"
#include "plugins/amdgpu/device_libs.h"
#include "plugins/amdgpu/hsaco_linker.h"
#include "plugins/gpu/kernel_emitter.h"
#include "plugins/gpu/module_passes.h"

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
}

namespace kiln::amdgpu {
namespace {

// LLVM's target registry is process-wide; registering AMDGPU once is all it needs.
void register_amdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

const llvm::Target& amdgpu_target(const std::string& triple) {
  register_amdgpu();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw std::runtime_error("AMDGPU target: " + error);
  return *target;
}

// gfx10 and later choose their wave width; gfx9 and older run wave64 only.
bool chooses_wave_width(const std::string& arch) {
  return llvm::AMDGPU::getIsaVersion(arch).Major >= 10;
}

std::string wave_feature(const AmdgpuOptions& o) {
  return wave_width(o) == 64 ? "+wavefrontsize64" : "+wavefrontsize32";
}

std::unique_ptr<llvm::TargetMachine> target_machine(const std::string& triple,
                                                    const AmdgpuOptions& o) {
  if (!known_arch(o.arch))
    throw std::runtime_error("LLVM's AMDGPU backend does not know the ISA '" + o.arch + "'");
  if (o.wave != 0 && o.wave != 32 && o.wave != 64)
    throw std::runtime_error("a wave is 32 or 64 lanes, not " + std::to_string(o.wave));
  if (wave_width(o) == 32 && !chooses_wave_width(o.arch))
    throw std::runtime_error(o.arch + " runs wave64 only");
  // ds_bpermute reaches only the lane's own 32-lane half of a gfx10+ wave64: the shuffles
  // would need v_permlane64 across the halves, which the generator does not emit yet.
  if (wave_width(o) == 64 && chooses_wave_width(o.arch))
    throw std::runtime_error(o.arch +
                             " runs the generated kernels as wave32 only (wave64 "
                             "shuffles across the halves of a gfx10+ wave are not generated)");
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(amdgpu_target(triple).createTargetMachine(
      triple, o.arch, wave_feature(o), options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw std::runtime_error("AMDGPU target machine for " + o.arch + " not available");
  return tm;
}

std::string emit(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    throw std::runtime_error("the AMDGPU target cannot emit this file type");
  pm.run(m);
  return bytes.str().str();
}

}  // namespace

unsigned wave_width(const AmdgpuOptions& options) {
  if (options.wave != 0) return options.wave;
  return chooses_wave_width(options.arch) ? 32 : 64;
}

bool known_arch(const std::string& arch) {
  const llvm::Target& target = amdgpu_target("amdgcn-amd-amdhsa");
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target.createMCSubtargetInfo("amdgcn-amd-amdhsa", arch, ""));
  return info && arch.rfind("gfx", 0) == 0 && info->isCPUStringValid(arch);
}

AmdgpuOutput compile_to_hsaco(const std::vector<kir::Kernel>& kernels, const AmdgpuOptions& options,
                              bool want_assembly) {
  const AmdgpuTarget target(wave_width(options));
  auto tm = target_machine(target.triple(), options);
  llvm::LLVMContext context;
  auto m = std::make_unique<llvm::Module>("kiln", context);
  m->setTargetTriple(target.triple());
  m->setDataLayout(tm->createDataLayout());
  // Code object v5: the layout of the implicit arguments block_dim and grid_dim read.
  m->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", uint32_t{500});
  std::vector<std::string> entries;
  for (const kir::Kernel& k : kernels) {
    if (k.kind == "extern") continue;
    gpu::emit_kernel(*m, target, k, options.tuning);
    entries.push_back(k.name);
  }
  if (calls_ocml(*m)) {
    link_ocml(*m, options.device_libs.empty() ? find_device_libs() : options.device_libs,
              options.arch);
    // Only the kernels stay visible, so the optimizer drops what ocml brought unused.
    gpu::internalize_all_but(*m, entries);
  }
  // ocml's functions are built for no ISA in particular: they take the kernels' ISA.
  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", options.arch);
    f.addFnAttr("target-features", wave_feature(options));
  }
  gpu::optimize_o3(*m, *tm);
  AmdgpuOutput out;
  llvm::raw_string_ostream ir(out.llvm_ir);
  m->print(ir, nullptr);
  if (want_assembly) {
    // Code generation changes the module: the assembly comes from a copy's own run.
    auto again = target_machine(target.triple(), options);
    out.assembly = emit(*llvm::CloneModule(*m), *again, llvm::CodeGenFileType::AssemblyFile);
  }
  out.hsaco = link_hsaco(emit(*m, *tm, llvm::CodeGenFileType::ObjectFile));
  return out;
}

}  // namespace kiln::amdgpu
