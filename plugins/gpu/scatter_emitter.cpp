// KIR `scatter`: a value combined into memory that other iterations may also name. Integer
// sums, max/min and f32/f64 sums are one atomic read-modify-write; everything else (half
// sums, products, float max/min, which must propagate NaN as the reference does) is a
// compare-and-swap loop on the element's bits. LLVM widens 8- and 16-bit atomics where the
// target has none.
#include "plugins/gpu/value_emitter.h"

namespace kiln::gpu {

using kir::DType;
using llvm::Value;

namespace {

bool is_unsigned_int(DType d) {
  return d == DType::U8;
}

}  // namespace

// The combined value of `old` and `v` (register values of dtype `d`), as the reference
// computes it: half precision in float, max/min through NaN.
Value* ValueEmitter::combined(const std::string& combine, Value* old, Value* v, DType d) {
  const bool half = d == DType::F16 || d == DType::BF16;
  if (half) {
    old = b_.CreateFPExt(old, b_.getFloatTy());
    v = b_.CreateFPExt(v, b_.getFloatTy());
  }
  const DType math = half ? DType::F32 : d;
  Value* r = combine == "sum"    ? binary("add", old, v, math)
             : combine == "prod" ? binary("mul", old, v, math)
                                 : binary(combine, old, v, math);
  return half ? b_.CreateFPTrunc(r, register_type(d)) : r;
}

void ValueEmitter::scatter(const kir::Op& op, Scope& s) {
  auto buf = buffers_.find(op.name);
  const kir::Buffer* kb = k_.buffer(op.name);
  if (buf == buffers_.end() || !kb)
    throw std::runtime_error("scatter into unknown buffer " + op.name);
  const DType d = kb->dtype;
  if (dtype_of(op.args.at(0)) != d)
    throw std::runtime_error("scatter into " + op.name + " of a value of another dtype");
  llvm::Type* st = storage_type(d);
  const auto align = llvm::Align(static_cast<uint64_t>(kir::dtype_size(d)));
  const auto order = llvm::AtomicOrdering::Monotonic;
  auto write = [&] {
    Value* v = s.values.at(op.args.at(0));
    if (d == DType::Bool) v = b_.CreateZExt(v, b_.getInt8Ty());
    Value* at = b_.CreateGEP(st, buf->second, index(op.index, s));
    if (op.combine == "store") {
      b_.CreateAlignedStore(v, at, align);
      return;
    }
    using Rmw = llvm::AtomicRMWInst;
    std::optional<Rmw::BinOp> rmw;
    if (d == DType::Bool) {
      rmw = op.combine == "sum" || op.combine == "max" ? Rmw::Or : Rmw::And;
    } else if (!kir::is_float(d)) {
      const bool u = is_unsigned_int(d);
      if (op.combine == "sum") rmw = Rmw::Add;
      if (op.combine == "max") rmw = u ? Rmw::UMax : Rmw::Max;
      if (op.combine == "min") rmw = u ? Rmw::UMin : Rmw::Min;
    } else if (op.combine == "sum" && (d == DType::F32 || d == DType::F64)) {
      rmw = Rmw::FAdd;
    }
    if (rmw) {
      b_.CreateAtomicRMW(*rmw, at, v, align, order);
      return;
    }
    // Compare and swap on the bits until no other thread changed them in between.
    llvm::Type* bits = b_.getIntNTy(static_cast<unsigned>(8 * kir::dtype_size(d)));
    llvm::LoadInst* first = b_.CreateAlignedLoad(bits, at, align);
    first->setAtomic(order);
    llvm::BasicBlock* entry = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(m_.getContext(), "scatter_retry", function());
    auto* swap = llvm::BasicBlock::Create(m_.getContext(), "scatter_swap", function());
    auto* done = llvm::BasicBlock::Create(m_.getContext(), "scatter_done", function());
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* seen = b_.CreatePHI(bits, 2);
    seen->addIncoming(first, entry);
    Value* next = b_.CreateBitCast(combined(op.combine, b_.CreateBitCast(seen, st), v, d), bits);
    b_.CreateCondBr(b_.CreateICmpEQ(next, seen), done, swap);
    b_.SetInsertPoint(swap);
    Value* result = b_.CreateAtomicCmpXchg(at, seen, next, align, order, order);
    seen->addIncoming(b_.CreateExtractValue(result, 0), swap);
    b_.CreateCondBr(b_.CreateExtractValue(result, 1), done, loop);
    b_.SetInsertPoint(done);
  };
  if (op.mask < 0) {
    write();
    return;
  }
  auto* on = llvm::BasicBlock::Create(m_.getContext(), "masked_scatter", function());
  auto* after = llvm::BasicBlock::Create(m_.getContext(), "masked_scattered", function());
  b_.CreateCondBr(s.values.at(op.mask), on, after);
  b_.SetInsertPoint(on);
  write();
  b_.CreateBr(after);
  b_.SetInsertPoint(after);
}

}  // namespace kiln::gpu
