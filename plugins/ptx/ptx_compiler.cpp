#include "plugins/ptx/ptx_compiler.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "plugins/gpu/kernel_emitter.h"
#include "plugins/gpu/module_passes.h"
#include "plugins/ptx/attention_kernel.h"
#include "plugins/ptx/nvptx_target.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace kiln::ptx {
namespace {

// LLVM's target registry is process-wide; registering NVPTX once is all it needs.
void register_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> target_machine(const std::string& triple,
                                                    const std::string& arch) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw std::runtime_error("NVPTX target: " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, arch, "+ptx80", options, std::nullopt, std::nullopt,
                                  llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw std::runtime_error("NVPTX target machine for " + arch + " not available");
  return tm;
}

bool calls_libdevice(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

void link_libdevice(llvm::Module& m, const std::string& path) {
  if (path.empty())
    throw std::runtime_error(
        "a kernel calls the math library but no libdevice.10.bc was found "
        "(set KILN_LIBDEVICE)");
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, m.getContext());
  if (!lib)
    throw std::runtime_error("cannot read libdevice '" + path + "': " + diag.getMessage().str());
  lib->setTargetTriple(m.getTargetTriple());
  lib->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw std::runtime_error("linking libdevice '" + path + "' failed");
}

}  // namespace

std::string find_libdevice(const std::string& beside) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KILN_LIBDEVICE")) candidates.emplace_back(env);
  if (const char* home = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(home) + "/nvvm/libdevice/libdevice.10.bc");
  candidates.emplace_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  candidates.emplace_back("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc");
  if (!beside.empty()) candidates.push_back(beside + "/libdevice.10.bc");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  return "";
}

namespace {

// An empty module for `tm`'s target.
std::unique_ptr<llvm::Module> new_module(llvm::LLVMContext& context, const NvptxTarget& target,
                                         const llvm::TargetMachine& tm) {
  auto m = std::make_unique<llvm::Module>("kiln", context);
  m->setTargetTriple(target.triple());
  m->setDataLayout(tm.createDataLayout());
  return m;
}

// `m` optimized and assembled.
PtxOutput emit_ptx(llvm::Module& m, llvm::TargetMachine& tm) {
  gpu::optimize_o3(m, tm);
  PtxOutput out;
  llvm::raw_string_ostream ir(out.llvm_ir);
  m.print(ir, nullptr);
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw std::runtime_error("the NVPTX target cannot emit assembly");
  pm.run(m);
  out.ptx = text.str().str();
  return out;
}

}  // namespace

PtxOutput compile_to_ptx(const std::vector<kir::Kernel>& kernels, const PtxOptions& options) {
  register_nvptx();
  const NvptxTarget target;
  auto tm = target_machine(target.triple(), options.arch);
  llvm::LLVMContext context;
  auto m = new_module(context, target, *tm);
  // libdevice asks __nvvm_reflect whether denormals flush to zero: they do not.
  m->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  std::vector<std::string> entries;
  for (const kir::Kernel& k : kernels) {
    if (k.kind == "extern") continue;
    gpu::emit_kernel(*m, target, k, options.tuning);
    entries.push_back(k.name);
  }
  if (calls_libdevice(*m)) {
    link_libdevice(*m, options.libdevice.empty() ? find_libdevice() : options.libdevice);
    // Only the kernels stay visible, so the optimizer drops what libdevice brought unused.
    gpu::internalize_all_but(*m, entries);
  }
  return emit_ptx(*m, *tm);
}

namespace {

// A module of one kernel that `emit` adds, for `arch`.
template <typename Emit>
PtxOutput compile_one_kernel(const std::string& arch, const Emit& emit) {
  register_nvptx();
  const NvptxTarget target;
  auto tm = target_machine(target.triple(), arch);
  llvm::LLVMContext context;
  auto m = new_module(context, target, *tm);
  emit(*m, target);
  return emit_ptx(*m, *tm);
}

}  // namespace

PtxOutput compile_attention_to_ptx(const kir_support::AttentionCall& call,
                                   const AttentionTiling& tiling, const std::string& arch) {
  return compile_one_kernel(arch, [&](llvm::Module& m, const NvptxTarget& target) {
    emit_attention_kernel(m, target, call, tiling);
  });
}

PtxOutput compile_conv_to_ptx(const ConvKernelSpec& spec, const std::string& arch) {
  return compile_one_kernel(
      arch, [&](llvm::Module& m, const NvptxTarget& target) { emit_conv_kernel(m, target, spec); });
}

}  // namespace kiln::ptx
