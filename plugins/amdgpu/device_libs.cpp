#include "plugins/amdgpu/device_libs.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/TargetParser/TargetParser.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace kiln::amdgpu {
namespace {

// ocml's switches, as the oclc_*.bc control files would set them: IEEE denormals, no fast
// math, correctly rounded f32 square roots.
void define_controls(llvm::Module& m, const std::string& arch) {
  const llvm::AMDGPU::IsaVersion isa = llvm::AMDGPU::getIsaVersion(arch);
  const uint32_t version = isa.Major * 1000 + isa.Minor * 100 + isa.Stepping;
  auto* i8 = llvm::Type::getInt8Ty(m.getContext());
  auto* i32 = llvm::Type::getInt32Ty(m.getContext());
  const std::vector<std::pair<const char*, llvm::Constant*>> controls = {
      {"__oclc_ISA_version", llvm::ConstantInt::get(i32, version)},
      {"__oclc_unsafe_math_opt", llvm::ConstantInt::get(i8, 0)},
      {"__oclc_finite_only_opt", llvm::ConstantInt::get(i8, 0)},
      {"__oclc_daz_opt", llvm::ConstantInt::get(i8, 0)},
      {"__oclc_correctly_rounded_sqrt32", llvm::ConstantInt::get(i8, 1)},
      {"__oclc_wavefrontsize64", llvm::ConstantInt::get(i8, isa.Major >= 10 ? 0 : 1)},
  };
  for (const auto& [name, value] : controls) {
    llvm::GlobalVariable* g = m.getGlobalVariable(name);
    if (!g) continue;  // what ocml's linked functions do not read
    g->setInitializer(value);
    g->setConstant(true);
    g->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

}  // namespace

std::string find_device_libs(const std::string& beside) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KILN_ROCM_DEVICE_LIBS")) candidates.emplace_back(env);
  if (const char* rocm = std::getenv("ROCM_PATH")) {
    candidates.push_back(std::string(rocm) + "/amdgcn/bitcode");
    candidates.push_back(std::string(rocm) + "/lib/llvm/lib/clang/amdgcn/bitcode");
  }
  candidates.emplace_back("/opt/rocm/amdgcn/bitcode");
  candidates.emplace_back("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
  candidates.emplace_back("/usr/lib/amdgcn/bitcode");
  if (!beside.empty()) candidates.push_back(beside + "/amdgcn/bitcode");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c + "/ocml.bc", ec)) return c;
  }
  return "";
}

bool calls_ocml(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__ocml_")) return true;
  return false;
}

void link_ocml(llvm::Module& m, const std::string& folder, const std::string& arch) {
  if (folder.empty())
    throw std::runtime_error(
        "a kernel calls the math library but no ROCm device libraries (ocml.bc) were found "
        "(install rocm-device-libs or set KILN_ROCM_DEVICE_LIBS)");
  const std::string path = folder + "/ocml.bc";
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, m.getContext());
  if (!lib) throw std::runtime_error("cannot read '" + path + "': " + diag.getMessage().str());
  lib->setTargetTriple(m.getTargetTriple());
  lib->setDataLayout(m.getDataLayout());
  if (llvm::Linker::linkModules(m, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw std::runtime_error("linking '" + path + "' failed");
  define_controls(m, arch);
}

}  // namespace kiln::amdgpu
