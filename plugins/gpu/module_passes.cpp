#include "plugins/gpu/module_passes.h"

#include <llvm/Passes/PassBuilder.h>

#include <algorithm>

#include "plugins/gpu/narrow_wide_integers.h"

namespace kiln::gpu {

void internalize_all_but(llvm::Module& m, const std::vector<std::string>& entries) {
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    if (std::find(entries.begin(), entries.end(), f.getName().str()) == entries.end())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
}

void optimize_o3(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
  // 64-bit integer operations on values that fit 32 bits, on 32 bits (after O3, whose
  // InstCombine would widen them back).
  narrow_wide_integers(m);
}

}  // namespace kiln::gpu
