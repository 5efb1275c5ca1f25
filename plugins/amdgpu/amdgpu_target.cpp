#include "plugins/amdgpu/amdgpu_target.h"

#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "plugins/gpu/math_library.h"

namespace kiln::amdgpu {

std::string AmdgpuTarget::data_layout() const {
  return "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
         "p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-"
         "v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";
}

llvm::Value* AmdgpuTarget::thread_id(llvm::IRBuilder<>& b) const {
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workitem_id_x, {}, {});
}
llvm::Value* AmdgpuTarget::block_id(llvm::IRBuilder<>& b) const {
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_workgroup_id_x, {}, {});
}

// Code object v5's hidden kernel arguments: hidden_block_count_x (u32) at byte 0,
// hidden_group_size_x (u16) at byte 12.
llvm::Value* AmdgpuTarget::block_dim(llvm::IRBuilder<>& b) const {
  llvm::Value* args = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_implicitarg_ptr, {}, {});
  llvm::Value* at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), args, 12);
  llvm::LoadInst* size = b.CreateAlignedLoad(b.getInt16Ty(), at, llvm::Align(4));
  size->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return b.CreateZExt(size, b.getInt32Ty());
}
llvm::Value* AmdgpuTarget::grid_dim(llvm::IRBuilder<>& b) const {
  llvm::Value* args = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_implicitarg_ptr, {}, {});
  llvm::LoadInst* count = b.CreateAlignedLoad(b.getInt32Ty(), args, llvm::Align(4));
  count->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return count;
}

// s_barrier alone orders no memory: LDS written before it must be visible after it, so the
// workgroup-scope fences around it make it a barrier for memory as well.
void AmdgpuTarget::barrier(llvm::IRBuilder<>& b) const {
  llvm::LLVMContext& c = b.getContext();
  b.CreateFence(llvm::AtomicOrdering::Release, c.getOrInsertSyncScopeID("workgroup"));
  b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
  b.CreateFence(llvm::AtomicOrdering::Acquire, c.getOrInsertSyncScopeID("workgroup"));
}

llvm::Value* AmdgpuTarget::lane(llvm::IRBuilder<>& b) const {
  llvm::Value* lo = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {},
                                      {b.getInt32(0xffffffffu), b.getInt32(0)});
  if (wave_width_ == 32) return lo;
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {b.getInt32(0xffffffffu), lo});
}

llvm::Value* AmdgpuTarget::permute(llvm::IRBuilder<>& b, llvm::Value* v, llvm::Value* from) const {
  return b.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {b.CreateShl(from, 2), v});
}

llvm::Value* AmdgpuTarget::shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, unsigned mask) const {
  return permute(b, v, b.CreateXor(lane(b), b.getInt32(mask)));
}

llvm::Value* AmdgpuTarget::shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v, unsigned delta) const {
  llvm::Value* me = lane(b);
  llvm::Value* below = b.CreateICmpULT(me, b.getInt32(delta));
  return permute(b, v, b.CreateSelect(below, me, b.CreateSub(me, b.getInt32(delta))));
}

llvm::Value* AmdgpuTarget::shuffle_from(llvm::IRBuilder<>& b, llvm::Value* v,
                                        llvm::Value* from) const {
  return permute(b, v, from);
}

llvm::FunctionCallee AmdgpuTarget::math(llvm::Module& m, const std::string& fn,
                                        llvm::Type* t) const {
  if (!gpu::in_math_library(fn) || !(t->isFloatTy() || t->isDoubleTy())) return {};
  const std::string name = "__ocml_" + fn + (t->isFloatTy() ? "_f32" : "_f64");
  std::vector<llvm::Type*> params(gpu::math_arity(fn), t);
  return m.getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
}

llvm::FunctionCallee AmdgpuTarget::fast_exp2(llvm::Module& m) const {
  return llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::amdgcn_exp2,
                                         {llvm::Type::getFloatTy(m.getContext())});
}

void AmdgpuTarget::mark_kernel(llvm::Function& f, unsigned block_size) const {
  f.setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  f.addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(block_size));
  // Every launch is whole blocks: the backend may drop partial-workgroup handling.
  f.addFnAttr("uniform-work-group-size", "true");
}

}  // namespace kiln::amdgpu
