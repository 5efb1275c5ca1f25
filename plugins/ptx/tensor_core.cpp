#include "plugins/ptx/tensor_core.h"

#include <llvm/IR/InlineAsm.h>

namespace kiln::ptx::tensor_core {

using llvm::Value;

Value* inline_asm(llvm::IRBuilder<>& b, llvm::Type* result, const std::string& text,
                  const std::string& constraints, const std::vector<Value*>& args,
                  bool reads_memory) {
  std::vector<llvm::Type*> types;
  for (Value* a : args) types.push_back(a->getType());
  auto* type = llvm::FunctionType::get(result, types, false);
  return b.CreateCall(type, llvm::InlineAsm::get(type, text, constraints, reads_memory), args);
}

namespace {

Quad unpack(llvm::IRBuilder<>& b, Value* r) {
  Quad out;
  for (unsigned i = 0; i < 4; ++i) out[i] = b.CreateExtractValue(r, i);
  return out;
}

llvm::StructType* four(llvm::IRBuilder<>& b, llvm::Type* t) {
  return llvm::StructType::get(b.getContext(), {t, t, t, t});
}

Quad mma(llvm::IRBuilder<>& b, const std::string& shape_and_types, const Quad& a, Value* b0,
         Value* b1, const Quad& acc) {
  return unpack(b, inline_asm(b, four(b, b.getFloatTy()),
                              "mma.sync.aligned." + shape_and_types +
                                  " {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
                              "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
                              {a[0], a[1], a[2], a[3], b0, b1, acc[0], acc[1], acc[2], acc[3]}));
}

}  // namespace

const char* half_name(kir::DType dtype) {
  return dtype == kir::DType::BF16 ? "bf16" : "f16";
}

Quad mma_m16n8k16(llvm::IRBuilder<>& b, kir::DType dtype, const Quad& a, Value* b0, Value* b1,
                  const Quad& acc) {
  const std::string t = half_name(dtype);
  return mma(b, "m16n8k16.row.col.f32." + t + "." + t + ".f32", a, b0, b1, acc);
}

Quad mma_m16n8k8_tf32(llvm::IRBuilder<>& b, const Quad& a, Value* b0, Value* b1, const Quad& acc) {
  return mma(b, "m16n8k8.row.col.f32.tf32.tf32.f32", a, b0, b1, acc);
}

Value* tf32(llvm::IRBuilder<>& b, Value* x) {
  return inline_asm(b, b.getInt32Ty(), "cvt.rna.tf32.f32 $0, $1;", "=r,f", {x});
}

Quad load_matrices(llvm::IRBuilder<>& b, Value* shared_address, bool transposed) {
  return unpack(b, inline_asm(b, four(b, b.getInt32Ty()),
                              std::string("ldmatrix.sync.aligned.m8n8.x4") +
                                  (transposed ? ".trans" : "") + ".shared.b16 {$0,$1,$2,$3}, [$4];",
                              "=r,=r,=r,=r,r", {shared_address}, true));
}

Value* shared_address(llvm::IRBuilder<>& b, Value* pointer) {
  return b.CreateTrunc(b.CreatePtrToInt(pointer, b.getInt64Ty()), b.getInt32Ty());
}

void copy_async(llvm::IRBuilder<>& b, Value* to, Value* from, int bytes, Value* source_bytes) {
  // .cg (L2 only) takes 16-byte copies alone; smaller ones go through .ca.
  const std::string text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") +
                           ".shared.global [$0], [$1], " + std::to_string(bytes);
  if (!source_bytes) {
    inline_asm(b, b.getVoidTy(), text + ";", "r,l", {to, from}, true);
    return;
  }
  inline_asm(b, b.getVoidTy(), text + ", $2;", "r,l,r", {to, from, source_bytes}, true);
}

void commit_copies(llvm::IRBuilder<>& b) {
  inline_asm(b, b.getVoidTy(), "cp.async.commit_group;", "", {}, true);
}

void wait_copies(llvm::IRBuilder<>& b, int pending) {
  inline_asm(
      b, b.getVoidTy(),
      pending < 0 ? "cp.async.wait_all;" : "cp.async.wait_group " + std::to_string(pending) + ";",
      "", {}, true);
}

Value* pack(llvm::IRBuilder<>& b, kir::DType dtype, Value* low, Value* high) {
  return inline_asm(b, b.getInt32Ty(),
                    std::string("cvt.rn.") + half_name(dtype) + "x2.f32 $0, $1, $2;", "=r,f,f",
                    {high, low});
}

namespace {

// A 16-byte-aligned array of `bytes` in shared memory; dynamic: sized at launch (an external
// declaration of no size, which NVPTX prints as `.extern .shared`).
llvm::GlobalVariable* shared_bytes(llvm::Module& m, const NvptxTarget& target,
                                   const std::string& name, int64_t bytes, bool dynamic) {
  auto* type = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()),
                                    dynamic ? 0 : static_cast<uint64_t>(bytes));
  auto* g = new llvm::GlobalVariable(
      m, type, false,
      dynamic ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
      dynamic ? nullptr : llvm::UndefValue::get(type), name, nullptr,
      llvm::GlobalValue::NotThreadLocal, target.shared_space());
  g->setAlignment(llvm::Align(16));
  return g;
}

}  // namespace

llvm::GlobalVariable* shared_array(llvm::Module& m, const NvptxTarget& target,
                                   const std::string& name, int64_t bytes) {
  return shared_bytes(m, target, name, bytes, false);
}

llvm::GlobalVariable* dynamic_shared_array(llvm::Module& m, const NvptxTarget& target,
                                           const std::string& name) {
  return shared_bytes(m, target, name, 0, true);
}

Value* discard_slot(llvm::IRBuilder<>& b, llvm::Module& m, const NvptxTarget& target,
                    const std::string& name, int64_t threads, int64_t bytes, Value* thread) {
  llvm::GlobalVariable* slots = shared_array(m, target, name, threads * bytes);
  Value* offset =
      b.CreateMul(b.CreateZExt(thread, b.getInt64Ty()), b.getInt64(static_cast<uint64_t>(bytes)));
  return b.CreateAddrSpaceCast(b.CreateGEP(b.getInt8Ty(), slots, offset),
                               llvm::PointerType::get(m.getContext(), 0));
}

}  // namespace kiln::ptx::tensor_core
