#include "plugins/ptx/nvptx_target.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>

#include "plugins/gpu/math_library.h"

namespace kiln::ptx {

std::string NvptxTarget::data_layout() const {
  return "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";
}

llvm::Value* NvptxTarget::thread_id(llvm::IRBuilder<>& b) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
}
llvm::Value* NvptxTarget::block_id(llvm::IRBuilder<>& b) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {});
}
llvm::Value* NvptxTarget::block_dim(llvm::IRBuilder<>& b) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {}, {});
}
llvm::Value* NvptxTarget::grid_dim(llvm::IRBuilder<>& b) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, {}, {});
}
void NvptxTarget::barrier(llvm::IRBuilder<>& b) const {
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

llvm::Value* NvptxTarget::shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, unsigned mask) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                           {b.getInt32(0xffffffffu), v, b.getInt32(mask), b.getInt32(0x1f)});
}

// PTX shfl's last operand: 0x1f clamps idx/bfly sources to the warp; 0 is up's lower bound.
llvm::Value* NvptxTarget::shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v, unsigned delta) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                           {b.getInt32(0xffffffffu), v, b.getInt32(delta), b.getInt32(0)});
}

llvm::Value* NvptxTarget::shuffle_from(llvm::IRBuilder<>& b, llvm::Value* v,
                                       llvm::Value* from) const {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                           {b.getInt32(0xffffffffu), v, from, b.getInt32(0x1f)});
}

llvm::FunctionCallee NvptxTarget::math(llvm::Module& m, const std::string& fn,
                                       llvm::Type* t) const {
  if (!gpu::in_math_library(fn) || !(t->isFloatTy() || t->isDoubleTy())) return {};
  const std::string name = "__nv_" + fn + (t->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> params(gpu::math_arity(fn), t);
  return m.getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
}

llvm::FunctionCallee NvptxTarget::fast_exp2(llvm::Module& m) const {
  return llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::nvvm_ex2_approx_ftz_f);
}

void NvptxTarget::mark_kernel(llvm::Function& f, unsigned block_size) const {
  llvm::LLVMContext& c = f.getContext();
  llvm::NamedMDNode* md = f.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  auto* i32 = llvm::Type::getInt32Ty(c);
  md->addOperand(
      llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(c, "kernel"),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, 1))}));
  md->addOperand(
      llvm::MDNode::get(c, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(c, "maxntidx"),
                            llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, block_size))}));
}

}  // namespace kiln::ptx
