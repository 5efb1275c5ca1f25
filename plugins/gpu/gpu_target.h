// What the shared KIR -> LLVM IR code generator needs from a GPU: ids, barriers, warp
// shuffles, the warp width, address spaces and math library calls. The NVPTX target (ptx
// plugin) and the AMDGPU target (amdgpu plugin) implement it; nothing vendor-specific lives
// outside them.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <string>

namespace kiln::gpu {

class GpuTarget {
 public:
  virtual ~GpuTarget() = default;
  virtual std::string triple() const = 0;
  virtual std::string data_layout() const = 0;
  virtual unsigned global_space() const = 0;  // where kernel buffers live
  virtual unsigned shared_space() const = 0;  // per-block scratch
  virtual unsigned warp_width() const = 0;    // 32 (NVIDIA) or 64 (most AMD)
  // i32 values: this thread in its block, this block, threads per block, blocks.
  virtual llvm::Value* thread_id(llvm::IRBuilder<>& b) const = 0;
  virtual llvm::Value* block_id(llvm::IRBuilder<>& b) const = 0;
  virtual llvm::Value* block_dim(llvm::IRBuilder<>& b) const = 0;
  virtual llvm::Value* grid_dim(llvm::IRBuilder<>& b) const = 0;
  virtual void barrier(llvm::IRBuilder<>& b) const = 0;
  // The i32 `v` of lane (this lane xor `mask`) in the warp: a butterfly step, after which
  // every lane can hold the warp's combined value.
  virtual llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, unsigned mask) const = 0;
  // The i32 `v` of lane (this lane - `delta`); lanes below `delta` get their own (scans).
  virtual llvm::Value* shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v, unsigned delta) const = 0;
  // The i32 `v` of lane `from` (an i32, any value below the warp width) in every lane.
  virtual llvm::Value* shuffle_from(llvm::IRBuilder<>& b, llvm::Value* v,
                                    llvm::Value* from) const = 0;
  // The math library's `fn` (one of math_library_functions()) for float or double `t`; null
  // if none.
  virtual llvm::FunctionCallee math(llvm::Module& m, const std::string& fn,
                                    llvm::Type* t) const = 0;
  // The hardware's approximate 2^x on f32 (a few ulps; subnormal results may flush to 0):
  // sums of many exp terms (online softmax) need no more.
  virtual llvm::FunctionCallee fast_exp2(llvm::Module& m) const = 0;
  // Marks `f` as a kernel entry launched with `block_size` threads per block.
  virtual void mark_kernel(llvm::Function& f, unsigned block_size) const = 0;
};

}  // namespace kiln::gpu
