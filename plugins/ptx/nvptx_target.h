// The GpuTarget for NVIDIA GPUs: NVVM intrinsics for ids, barriers and shuffles, address
// spaces 1 (global) and 3 (shared), warp width 32, math from libdevice (`__nv_expf`, ...).
#pragma once

#include "plugins/gpu/gpu_target.h"

namespace kiln::ptx {

class NvptxTarget final : public gpu::GpuTarget {
 public:
  std::string triple() const override { return "nvptx64-nvidia-cuda"; }
  std::string data_layout() const override;
  unsigned global_space() const override { return 1; }
  unsigned shared_space() const override { return 3; }
  unsigned warp_width() const override { return 32; }
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
};

}  // namespace kiln::ptx
