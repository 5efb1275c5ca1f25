// What both GPU compilers do to a module between generating it and code generation: only the
// kernels stay visible (so what a math library brought and no kernel uses is dropped), then
// LLVM's O3 pipeline for the target machine.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <string>
#include <vector>

namespace kiln::gpu {

// Gives every defined function but the `entries` internal linkage.
void internalize_all_but(llvm::Module& m, const std::vector<std::string>& entries);

// The O3 module pipeline with `tm`'s analyses, then narrow_wide_integers.
void optimize_o3(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace kiln::gpu
