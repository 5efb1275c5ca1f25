// The GpuTarget for AMD GPUs: amdgcn intrinsics for ids and barriers, the code object's
// implicit arguments for block and grid sizes, ds_bpermute for shuffles (any lane from any
// lane, wave32 or wave64), address spaces 1 (global) and 3 (LDS), math from the ROCm device
// libraries (`__ocml_exp_f32`, ...).
#pragma once

#include "plugins/gpu/gpu_target.h"

namespace kiln::amdgpu {

class AmdgpuTarget final : public gpu::GpuTarget {
 public:
  explicit AmdgpuTarget(unsigned wave_width) : wave_width_(wave_width) {}
  std::string triple() const override { return "amdgcn-amd-amdhsa"; }
  std::string data_layout() const override;
  unsigned global_space() const override { return 1; }
  unsigned shared_space() const override { return 3; }
  unsigned warp_width() const override { return wave_width_; }
  llvm::Value* thread_id(llvm::IRBuilder<>& b) const override;
  llvm::Value* block_id(llvm::IRBuilder<>& b) const override;
  llvm::Value* block_dim(llvm::IRBuilder<>& b) const override;
  llvm::Value* grid_dim(llvm::IRBuilder<>& b) const override;
  void barrier(llvm::IRBuilder<>& b) const override;
  llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, unsigned mask) const override;
  llvm::Value* shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v, unsigned delta) const override;
  llvm::Value* shuffle_from(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Value* from) const override;
  llvm::FunctionCallee math(llvm::Module& m, const std::string& fn, llvm::Type* t) const override;
  llvm::FunctionCallee fast_exp2(llvm::Module& m) const override;
  void mark_kernel(llvm::Function& f, unsigned block_size) const override;

 private:
  llvm::Value* lane(llvm::IRBuilder<>& b) const;
  // `v` of lane `from` (i32): ds_bpermute addresses lanes in bytes.
  llvm::Value* permute(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Value* from) const;

  unsigned wave_width_;
};

}  // namespace kiln::amdgpu
