#include "plugins/ptx/conv_split.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>

namespace kiln::ptx {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t steps_of(const kir_support::ConvCall& call, const ConvTile& tile) {
  const int64_t per_step = tile.step_bytes / kir::dtype_size(call.dtype);
  return ceil_div(call.r * call.s * (call.c / call.groups), per_step);
}

}  // namespace

int64_t conv_splits(const kir_support::ConvCall& call, const ConvTile& tile,
                    int64_t multiprocessors) {
  // Measured on the H100 (bench/conv_tiles.py, bench/results/2026-12-06-conv-tiles/): the
  // partial sums' traffic and the second kernel cost more than they give back once the
  // blocks are one per multiprocessor (ResNet's 28x28 stage, 196 blocks, 1.1-1.3x slower
  // split in 2) or the parts are short (bf16 14x14 stage, 72 steps: no faster in 3).
  constexpr int64_t kMinSteps = 40, kMaxSplits = 16;
  const int64_t blocks = conv_blocks(call, tile);
  if (blocks <= 0 || blocks >= multiprocessors) return 1;
  // conv_kernel_spec caps it further to what 32-bit indices and one launch take.
  return std::max<int64_t>(std::min({ceil_div(2 * multiprocessors, blocks),
                                     steps_of(call, tile) / kMinSteps, kMaxSplits}),
                           1);
}

int64_t conv_steps(const ConvKernelSpec& spec) {
  return steps_of(spec.call, spec.tile);
}

int64_t conv_partial_bytes(const ConvKernelSpec& spec) {
  const kir_support::ConvCall& c = spec.call;
  return spec.splits > 1 ? spec.splits * c.n * c.out_h * c.out_w * c.k * 4 : 0;
}

int64_t conv_partial_stride(const ConvKernelSpec& spec, bool channel) {
  const kir_support::ConvCall& c = spec.call;
  const bool channels_last = c.y_stride[1] == 1;
  const int64_t positions = c.n * c.out_h * c.out_w;
  if (channels_last) return channel ? 1 : c.k;
  return channel ? positions : 1;
}

int64_t conv_finish_blocks(const ConvKernelSpec& spec) {
  const kir_support::ConvCall& c = spec.call;
  return ceil_div(c.n * c.out_h * c.out_w * c.k, kConvFinishThreads);
}

void emit_conv_finish_kernel(llvm::Module& m, const NvptxTarget& target,
                             const ConvKernelSpec& spec) {
  const kir_support::ConvCall& c = spec.call;
  llvm::LLVMContext& ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr}, false),
                                    llvm::GlobalValue::ExternalLinkage, kConvFinishKernel, m);
  target.mark_kernel(*fn, kConvFinishThreads);
  llvm::Value *y = fn->getArg(0), *partials = fn->getArg(1);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* body = llvm::BasicBlock::Create(ctx, "element", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  // y's indices in 32 bits where the kernel's are (spec.index32); the partial sums' always.
  llvm::Type* ix = spec.index32 ? b.getInt32Ty() : b.getInt64Ty();
  const auto k = [&](int64_t v) { return llvm::ConstantInt::get(ix, static_cast<uint64_t>(v)); };
  const int64_t positions = c.n * c.out_h * c.out_w, total = positions * c.k;
  llvm::Value* block = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {});
  llvm::Value* e =
      b.CreateAdd(b.CreateMul(block, b.getInt32(kConvFinishThreads)), target.thread_id(b));
  b.CreateCondBr(b.CreateICmpULT(e, b.getInt32(static_cast<uint32_t>(total))), body, done);

  b.SetInsertPoint(body);
  llvm::Value* sum = nullptr;
  for (int64_t s = 0; s < spec.splits; ++s) {  // in order: the same sum every run
    llvm::Value* at = b.CreateAdd(e, b.getInt32(static_cast<uint32_t>(s * total)));
    llvm::Value* address = b.CreateGEP(b.getFloatTy(), partials, b.CreateZExt(at, b.getInt64Ty()));
    llvm::Value* part = b.CreateAlignedLoad(b.getFloatTy(), address, llvm::Align(4));
    sum = sum ? b.CreateFAdd(sum, part) : part;
  }
  llvm::Value* element = b.CreateZExtOrTrunc(e, ix);
  const bool channels_last = conv_partial_stride(spec, true) == 1;
  llvm::Value* channel =
      channels_last ? b.CreateURem(element, k(c.k)) : b.CreateUDiv(element, k(positions));
  llvm::Value* position =
      channels_last ? b.CreateUDiv(element, k(c.k)) : b.CreateURem(element, k(positions));
  const int64_t per_image = c.out_h * c.out_w;
  llvm::Value* image = b.CreateUDiv(position, k(per_image));
  llvm::Value* p = b.CreateURem(position, k(per_image));
  llvm::Value* index = b.CreateAdd(
      b.CreateAdd(b.CreateMul(image, k(c.y_stride[0])), b.CreateMul(channel, k(c.y_stride[1]))),
      b.CreateAdd(b.CreateMul(b.CreateUDiv(p, k(c.out_w)), k(c.y_stride[2])),
                  b.CreateMul(b.CreateURem(p, k(c.out_w)), k(c.y_stride[3]))));
  llvm::Type* type = c.dtype == kir::DType::BF16  ? b.getBFloatTy()
                     : c.dtype == kir::DType::F16 ? b.getHalfTy()
                                                  : b.getFloatTy();
  llvm::Value* value = type == b.getFloatTy() ? sum : b.CreateFPTrunc(sum, type);
  const int64_t size = kir::dtype_size(c.dtype);
  b.CreateAlignedStore(value, b.CreateGEP(type, y, b.CreateZExt(index, b.getInt64Ty())),
                       llvm::Align(static_cast<uint64_t>(size)));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

}  // namespace kiln::ptx
