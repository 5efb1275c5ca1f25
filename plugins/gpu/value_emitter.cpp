#include "plugins/gpu/value_emitter.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <stdexcept>

#include "plugins/gpu/math_library.h"
#include "plugins/kir_support/kir_expr.h"

namespace kiln::gpu {

using kir::DType;
using kir_support::integer_literal;
using kir_support::linear_terms;
using llvm::Value;

namespace {

bool is_unsigned(DType d) {
  return d == DType::U8 || d == DType::Bool;
}

}  // namespace

ValueEmitter::ValueEmitter(llvm::IRBuilder<>& b, llvm::Module& m, const GpuTarget& target,
                           const kir::Kernel& k, std::map<std::string, Value*> buffers,
                           Value* status, llvm::IntegerType* index_type)
    : b_(b),
      m_(m),
      target_(target),
      k_(k),
      buffers_(std::move(buffers)),
      status_(status),
      index_type_(index_type) {}

llvm::Type* ValueEmitter::storage_type(DType d) const {
  auto& c = m_.getContext();
  switch (d) {
    case DType::Bool:
    case DType::I8:
    case DType::U8:
      return llvm::Type::getInt8Ty(c);
    case DType::I16:
      return llvm::Type::getInt16Ty(c);
    case DType::I32:
      return llvm::Type::getInt32Ty(c);
    case DType::I64:
      return llvm::Type::getInt64Ty(c);
    case DType::F16:
      return llvm::Type::getHalfTy(c);
    case DType::BF16:
      return llvm::Type::getBFloatTy(c);
    case DType::F32:
      return llvm::Type::getFloatTy(c);
    case DType::F64:
      return llvm::Type::getDoubleTy(c);
  }
  return nullptr;
}

llvm::Type* ValueEmitter::register_type(DType d) const {
  return d == DType::Bool ? llvm::Type::getInt1Ty(m_.getContext()) : storage_type(d);
}

DType ValueEmitter::dtype_of(int id) const {
  const kir::Op* op = k_.op(id);
  if (!op) throw std::runtime_error("unknown value %" + std::to_string(id));
  return op->dtype;
}

llvm::AllocaInst* ValueEmitter::slot(llvm::Type* t, const std::string& name) {
  llvm::BasicBlock& entry = function()->getEntryBlock();
  llvm::IRBuilder<> at(&entry, entry.begin());
  return at.CreateAlloca(t, nullptr, name);
}

Value* ValueEmitter::convert(Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = register_type(to);
  const bool ff = kir::is_float(from), tf = kir::is_float(to);
  if (to == DType::Bool) {
    return ff ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
              : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (ff && tf) {
    // half <-> bfloat through float; otherwise one extension or truncation.
    if (from != DType::F32 && from != DType::F64 && to != DType::F32 && to != DType::F64)
      v = b_.CreateFPExt(v, b_.getFloatTy());
    return v->getType()->getPrimitiveSizeInBits() < t->getPrimitiveSizeInBits()
               ? b_.CreateFPExt(v, t)
               : b_.CreateFPTrunc(v, t);
  }
  if (!ff && !tf) return b_.CreateIntCast(v, t, !is_unsigned(from));
  if (!ff) return is_unsigned(from) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t);
  // Float to integer: toward zero, saturating, NaN to 0 (as the reference converts).
  Value* wide =
      b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b_.getInt64Ty(), v->getType()}, {v});
  return b_.CreateTrunc(wide, t);
}

Value* ValueEmitter::constant(DType d, double value) {
  llvm::Type* t = register_type(d);
  if (kir::is_float(d)) return llvm::ConstantFP::get(t, value);
  if (d == DType::Bool) return b_.getInt1(value != 0);
  return llvm::ConstantInt::get(t, static_cast<uint64_t>(static_cast<int64_t>(value)), true);
}

Value* ValueEmitter::floor_div(Value* a, Value* d) {
  Value* q = b_.CreateSDiv(a, d);
  Value* r = b_.CreateSRem(a, d);
  Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero),
                   b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(d, zero)));
  return b_.CreateSelect(adjust, b_.CreateSub(q, llvm::ConstantInt::get(a->getType(), 1)), q);
}

Value* ValueEmitter::floor_mod(Value* a, Value* d) {
  Value* r = b_.CreateSRem(a, d);
  Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero),
                   b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(d, zero)));
  return b_.CreateSelect(adjust, b_.CreateAdd(r, d), r);
}

Value* ValueEmitter::index(const kir::Expr& e, const Scope& s) {
  switch (e.kind) {
    case kir::Expr::Const:
      return llvm::ConstantInt::get(index_type_, static_cast<uint64_t>(e.value), true);
    case kir::Expr::Var: {
      if (e.name[0] == 't') {
        auto it = s.values.find(std::stoi(e.name.substr(1)));
        if (it == s.values.end()) throw std::runtime_error("index names unknown value " + e.name);
        return b_.CreateSExtOrTrunc(it->second, index_type_);
      }
      auto it = s.vars.find(e.name);
      if (it == s.vars.end()) throw std::runtime_error("index names unknown variable " + e.name);
      return it->second;
    }
    case kir::Expr::Add:
    case kir::Expr::Mul: {
      Value* acc = index(e.operands.at(0), s);
      for (size_t i = 1; i < e.operands.size(); ++i) {
        Value* o = index(e.operands[i], s);
        acc = e.kind == kir::Expr::Add ? b_.CreateAdd(acc, o) : b_.CreateMul(acc, o);
      }
      return acc;
    }
    case kir::Expr::FloorDiv:
      return floor_div(index(e.operands.at(0), s), index(e.operands.at(1), s));
    case kir::Expr::Mod:
      return floor_mod(index(e.operands.at(0), s), index(e.operands.at(1), s));
    case kir::Expr::Min:
    case kir::Expr::Max:
      return b_.CreateBinaryIntrinsic(
          e.kind == kir::Expr::Min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax,
          index(e.operands.at(0), s), index(e.operands.at(1), s));
  }
  return llvm::ConstantInt::get(index_type_, 0);
}

void ValueEmitter::fail(int code) {
  b_.CreateAtomicCmpXchg(status_, b_.getInt32(0), b_.getInt32(static_cast<uint32_t>(code)),
                         llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic,
                         llvm::AtomicOrdering::Monotonic);
}

Value* ValueEmitter::check_index(Value* v, int64_t size) {
  Value* n = b_.getInt64(static_cast<uint64_t>(size));
  Value* w = b_.CreateSelect(b_.CreateICmpSLT(v, b_.getInt64(0)), b_.CreateAdd(v, n), v);
  Value* bad = b_.CreateOr(b_.CreateICmpSLT(w, b_.getInt64(0)), b_.CreateICmpSGE(w, n));
  llvm::Function* f = function();
  auto* report = llvm::BasicBlock::Create(m_.getContext(), "bad_index", f);
  auto* done = llvm::BasicBlock::Create(m_.getContext(), "index_ok", f);
  b_.CreateCondBr(bad, report, done);
  b_.SetInsertPoint(report);
  fail(1);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return b_.CreateSelect(bad, b_.getInt64(0), w);
}

int64_t ValueEmitter::coefficient(const kir::Expr& e, const std::string& var) {
  std::map<std::string, int64_t> terms;
  if (!linear_terms(e, 1, terms)) return -1;
  return terms.contains(var) ? terms.at(var) : 0;
}

unsigned ValueEmitter::alignment(const kir::Op& op, const Scope& s, DType d) const {
  const unsigned element = static_cast<unsigned>(kir::dtype_size(d));
  // Only the run's first element starts on the run's alignment.
  if (s.aligned_multiple <= 1 || s.lane != 0 || op.mask >= 0) return element;
  std::map<std::string, int64_t> terms;
  if (!linear_terms(op.index, 1, terms)) return element;
  for (const auto& [var, c] : terms) {
    if (var == s.aligned_var ? c != 1 : c % s.aligned_multiple != 0) return element;
  }
  if (!terms.contains(s.aligned_var)) return element;
  // Buffers start at least 64-byte aligned (driver allocations, arena slices).
  return static_cast<unsigned>(std::min<int64_t>(16, element * s.aligned_multiple));
}

Value* ValueEmitter::address(const kir::Op& op, const Scope& s, llvm::Type* element, Value* base) {
  std::map<std::string, int64_t> terms;
  if (s.lane == 0 || !s.lane_base || !linear_terms(op.index, 1, terms))
    return b_.CreateGEP(element, base, index(op.index, s));
  Scope first = s;
  first.vars[s.aligned_var] = s.lane_base;
  Value* at = b_.CreateGEP(element, base, index(op.index, first));
  const int64_t step = terms.contains(s.aligned_var) ? terms.at(s.aligned_var) * s.lane : 0;
  return step == 0
             ? at
             : b_.CreateGEP(element, at,
                            llvm::ConstantInt::get(index_type_, static_cast<uint64_t>(step), true));
}

Value* ValueEmitter::load(const kir::Op& op, Scope& s) {
  auto buf = buffers_.find(op.name);
  const kir::Buffer* kb = k_.buffer(op.name);
  if (buf == buffers_.end() || !kb || kb->dtype != op.dtype)
    throw std::runtime_error("load of " + op.name + " with a dtype its buffer does not have");
  llvm::Type* st = storage_type(op.dtype);
  auto read = [&] {
    Value* at = address(op, s, st, buf->second);
    Value* v = b_.CreateAlignedLoad(st, at, llvm::Align(alignment(op, s, op.dtype)));
    return op.dtype == DType::Bool ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
  };
  if (op.mask < 0) return read();
  // Masked: off-mask lanes read `other` and touch no memory.
  const double other = std::strtod(op.other.c_str(), nullptr);
  llvm::AllocaInst* result = slot(register_type(op.dtype), "masked");
  b_.CreateStore(kir::is_float(op.dtype) || op.dtype == DType::Bool
                     ? constant(op.dtype, other)
                     : constant(op.dtype, static_cast<double>(integer_literal(op.other))),
                 result);
  llvm::Function* f = function();
  auto* on = llvm::BasicBlock::Create(m_.getContext(), "masked_load", f);
  auto* done = llvm::BasicBlock::Create(m_.getContext(), "masked_done", f);
  b_.CreateCondBr(s.values.at(op.mask), on, done);
  b_.SetInsertPoint(on);
  b_.CreateStore(read(), result);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return b_.CreateLoad(register_type(op.dtype), result);
}

void ValueEmitter::store(const kir::Op& op, Scope& s) {
  auto buf = buffers_.find(op.name);
  const kir::Buffer* kb = k_.buffer(op.name);
  if (buf == buffers_.end() || !kb)
    throw std::runtime_error("store into unknown buffer " + op.name);
  if (dtype_of(op.args.at(0)) != kb->dtype)
    throw std::runtime_error("store into " + op.name + " of a value of another dtype");
  llvm::BasicBlock* done = nullptr;
  if (op.mask >= 0) {  // the address is computed, and the store made, only where the mask holds
    llvm::Function* f = b_.GetInsertBlock()->getParent();
    auto* on = llvm::BasicBlock::Create(m_.getContext(), "masked_store", f);
    done = llvm::BasicBlock::Create(m_.getContext(), "masked_stored", f);
    b_.CreateCondBr(s.values.at(op.mask), on, done);
    b_.SetInsertPoint(on);
  }
  Value* v = s.values.at(op.args.at(0));
  if (kb->dtype == DType::Bool) v = b_.CreateZExt(v, b_.getInt8Ty());
  llvm::Type* st = storage_type(kb->dtype);
  b_.CreateAlignedStore(v, address(op, s, st, buf->second),
                        llvm::Align(alignment(op, s, kb->dtype)));
  if (done) {
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }
}

Value* ValueEmitter::call(const std::string& fn, std::vector<Value*> args, llvm::Type* t) {
  llvm::FunctionCallee callee = target_.math(m_, fn, t);
  if (!callee) throw std::runtime_error("no " + fn + " in this target's math library");
  return b_.CreateCall(callee, args);
}

Value* ValueEmitter::unary(const std::string& name, Value* a, DType d) {
  const bool fp = kir::is_float(d);
  llvm::Type* t = a->getType();
  if (in_math_library(name) && math_arity(name) == 1) {
    if (!fp) throw std::runtime_error(name + " needs a floating dtype");
    return call(name, {a}, t);
  }
  auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, a); };
  if (name == "sqrt") return intrinsic(llvm::Intrinsic::sqrt);
  if (name == "rsqrt")
    return b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), intrinsic(llvm::Intrinsic::sqrt));
  if (name == "ceil" || name == "floor" || name == "round" || name == "trunc") {
    if (!fp) return a;
    return intrinsic(name == "ceil"    ? llvm::Intrinsic::ceil
                     : name == "floor" ? llvm::Intrinsic::floor
                     : name == "round" ? llvm::Intrinsic::roundeven
                                       : llvm::Intrinsic::trunc);
  }
  if (name == "isnan") return fp ? b_.CreateFCmpUNO(a, a) : b_.getFalse();
  if (name == "isinf") {
    return fp ? b_.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::fabs), llvm::ConstantFP::getInfinity(t))
              : b_.getFalse();
  }
  if (name == "neg") return fp ? b_.CreateFNeg(a) : b_.CreateNeg(a);
  if (name == "abs") {
    return fp ? intrinsic(llvm::Intrinsic::fabs)
              : b_.CreateSelect(b_.CreateICmpSLT(a, llvm::ConstantInt::get(t, 0)), b_.CreateNeg(a),
                                a);
  }
  if (name == "sign") {
    if (fp) {
      Value* zero = llvm::ConstantFP::get(t, 0.0);
      Value* pos = b_.CreateUIToFP(b_.CreateFCmpOLT(zero, a), t);
      Value* neg = b_.CreateUIToFP(b_.CreateFCmpOLT(a, zero), t);
      return b_.CreateFSub(pos, neg);
    }
    Value* zero = llvm::ConstantInt::get(t, 0);
    return b_.CreateSub(b_.CreateZExt(b_.CreateICmpSLT(zero, a), t),
                        b_.CreateZExt(b_.CreateICmpSLT(a, zero), t));
  }
  if (name == "relu") {
    if (!fp)
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, llvm::ConstantInt::get(t, 0));
    // Below zero becomes zero; NaN and -0.0 stay, as PyTorch's.
    Value* zero = llvm::ConstantFP::get(t, 0.0);
    return b_.CreateSelect(b_.CreateFCmpOLT(a, zero), zero, a);
  }
  if (name == "sigmoid") {
    Value* one = llvm::ConstantFP::get(t, 1.0);
    return b_.CreateFDiv(one, b_.CreateFAdd(one, call("exp", {b_.CreateFNeg(a)}, t)));
  }
  if (name == "reciprocal") return b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), a);
  if (name == "not") return b_.CreateICmpEQ(a, llvm::ConstantInt::get(t, 0));
  if (name == "bitwise_not") return b_.CreateNot(a);
  throw std::runtime_error("unknown unary op '" + name + "'");
}

Value* ValueEmitter::integer_division(const std::string& name, Value* a, Value* d,
                                      bool is_unsigned_operand) {
  llvm::Type* t = a->getType();
  Value* zero = llvm::ConstantInt::get(t, 0);
  Value* minus_one = llvm::ConstantInt::getSigned(t, -1);
  Value* by_zero = b_.CreateICmpEQ(d, zero);
  llvm::Function* f = function();
  auto* report = llvm::BasicBlock::Create(m_.getContext(), "division_by_zero", f);
  auto* done = llvm::BasicBlock::Create(m_.getContext(), "division_ok", f);
  b_.CreateCondBr(by_zero, report, done);
  b_.SetInsertPoint(report);
  fail(2);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  // A divisor of 0 (reported) or -1 (which may overflow) divides by 1 and is patched after.
  Value* special =
      b_.CreateOr(by_zero, is_unsigned_operand ? b_.getFalse() : b_.CreateICmpEQ(d, minus_one));
  Value* safe = b_.CreateSelect(special, llvm::ConstantInt::get(t, 1), d);
  Value* q = is_unsigned_operand ? b_.CreateUDiv(a, safe) : b_.CreateSDiv(a, safe);
  Value* r = is_unsigned_operand ? b_.CreateURem(a, safe) : b_.CreateSRem(a, safe);
  const bool floor = name == "floordiv" || name == "mod";
  Value* wrong_sign =
      b_.CreateAnd(b_.CreateICmpNE(r, zero),
                   b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(safe, zero)));
  const bool adjust = floor && !is_unsigned_operand;
  Value* result;
  if (name == "floordiv" || name == "truncdiv") {
    result =
        adjust ? b_.CreateSelect(wrong_sign, b_.CreateSub(q, llvm::ConstantInt::get(t, 1)), q) : q;
    result = b_.CreateSelect(
        b_.CreateAnd(b_.CreateICmpEQ(d, minus_one), b_.getInt1(!is_unsigned_operand)),
        b_.CreateNeg(a), result);
  } else {
    result = adjust ? b_.CreateSelect(wrong_sign, b_.CreateAdd(r, safe), r) : r;
    result = b_.CreateSelect(b_.CreateICmpEQ(d, minus_one), zero, result);
  }
  return b_.CreateSelect(by_zero, zero, result);
}

// Square and multiply, wrapping; a negative exponent is reported (and gives 0).
Value* ValueEmitter::integer_pow(Value* base, Value* exponent) {
  llvm::Type* t = base->getType();
  llvm::Function* f = function();
  auto& ctx = m_.getContext();
  Value* negative = b_.CreateICmpSLT(exponent, llvm::ConstantInt::get(t, 0));
  auto* report = llvm::BasicBlock::Create(ctx, "negative_power", f);
  auto* start = llvm::BasicBlock::Create(ctx, "power", f);
  b_.CreateCondBr(negative, report, start);
  b_.SetInsertPoint(report);
  fail(3);
  b_.CreateBr(start);
  b_.SetInsertPoint(start);
  llvm::AllocaInst* result = slot(t, "pow_result");
  llvm::AllocaInst* b = slot(t, "pow_base");
  llvm::AllocaInst* e = slot(t, "pow_exponent");
  b_.CreateStore(llvm::ConstantInt::get(t, 1), result);
  b_.CreateStore(base, b);
  b_.CreateStore(b_.CreateSelect(negative, llvm::ConstantInt::get(t, 0), exponent), e);
  auto* check = llvm::BasicBlock::Create(ctx, "pow_check", f);
  auto* step = llvm::BasicBlock::Create(ctx, "pow_step", f);
  auto* done = llvm::BasicBlock::Create(ctx, "pow_done", f);
  b_.CreateBr(check);
  b_.SetInsertPoint(check);
  Value* ev = b_.CreateLoad(t, e);
  b_.CreateCondBr(b_.CreateICmpSGT(ev, llvm::ConstantInt::get(t, 0)), step, done);
  b_.SetInsertPoint(step);
  Value* bv = b_.CreateLoad(t, b);
  Value* rv = b_.CreateLoad(t, result);
  Value* odd =
      b_.CreateICmpNE(b_.CreateAnd(ev, llvm::ConstantInt::get(t, 1)), llvm::ConstantInt::get(t, 0));
  b_.CreateStore(b_.CreateSelect(odd, b_.CreateMul(rv, bv), rv), result);
  b_.CreateStore(b_.CreateMul(bv, bv), b);
  b_.CreateStore(b_.CreateAShr(ev, llvm::ConstantInt::get(t, 1)), e);
  b_.CreateBr(check);
  b_.SetInsertPoint(done);
  return b_.CreateSelect(negative, llvm::ConstantInt::get(t, 0), b_.CreateLoad(t, result));
}

Value* ValueEmitter::binary(const std::string& name, Value* a, Value* c, DType d) {
  const bool fp = kir::is_float(d);
  llvm::Type* t = a->getType();
  if (name == "add") return fp ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
  if (name == "sub") return fp ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
  if (name == "mul") return fp ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
  if (name == "div") {
    if (!fp) throw std::runtime_error("div needs floating operands");
    return b_.CreateFDiv(a, c);
  }
  using P = llvm::CmpInst::Predicate;
  static const std::map<std::string, std::array<P, 3>> compare = {
      {"eq", {P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ}},
      {"ne", {P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE}},
      {"lt", {P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT}},
      {"le", {P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE}},
      {"gt", {P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT}},
      {"ge", {P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE}}};
  if (auto it = compare.find(name); it != compare.end())
    return b_.CreateCmp(it->second[fp ? 0 : is_unsigned(d) ? 2 : 1], a, c);
  if (name == "and") return b_.CreateAnd(a, c);
  if (name == "or") return b_.CreateOr(a, c);
  if (name == "xor") return b_.CreateXor(a, c);
  if (name == "max" || name == "min") {
    if (fp)
      return b_.CreateBinaryIntrinsic(
          name == "max" ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, c);
    const bool u = is_unsigned(d);
    return b_.CreateBinaryIntrinsic(name == "max"
                                        ? (u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax)
                                        : (u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin),
                                    a, c);
  }
  if (name == "pow") return fp ? call("pow", {a, c}, t) : integer_pow(a, c);
  if (name == "atan2") return call("atan2", {a, c}, t);
  if (fp && name == "fmod") return b_.CreateFRem(a, c);
  if (fp && name == "mod") {
    // Python's remainder: the sign of the divisor.
    Value* r = b_.CreateFRem(a, c);
    Value* zero = llvm::ConstantFP::get(t, 0.0);
    Value* fix =
        b_.CreateAnd(b_.CreateFCmpUNE(r, zero),
                     b_.CreateICmpNE(b_.CreateFCmpOLT(r, zero), b_.CreateFCmpOLT(c, zero)));
    return b_.CreateSelect(fix, b_.CreateFAdd(r, c), r);
  }
  if (fp && name == "truncdiv")
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b_.CreateFDiv(a, c));
  if (fp && name == "floordiv") {
    // PyTorch's float floor division, through fmod (1.0 // 0.1 == 9).
    Value* zero = llvm::ConstantFP::get(t, 0.0);
    Value* m = b_.CreateFRem(a, c);
    Value* div = b_.CreateFDiv(b_.CreateFSub(a, m), c);
    Value* fix =
        b_.CreateAnd(b_.CreateFCmpUNE(m, zero),
                     b_.CreateICmpNE(b_.CreateFCmpOLT(c, zero), b_.CreateFCmpOLT(m, zero)));
    div = b_.CreateSelect(fix, b_.CreateFSub(div, llvm::ConstantFP::get(t, 1.0)), div);
    Value* floored = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div);
    floored = b_.CreateSelect(
        b_.CreateFCmpOGT(b_.CreateFSub(div, floored), llvm::ConstantFP::get(t, 0.5)),
        b_.CreateFAdd(floored, llvm::ConstantFP::get(t, 1.0)), floored);
    Value* quotient = b_.CreateFDiv(a, c);
    Value* signed_zero = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, quotient);
    Value* result = b_.CreateSelect(b_.CreateFCmpOEQ(div, zero), signed_zero, floored);
    return b_.CreateSelect(b_.CreateFCmpOEQ(c, zero), quotient, result);
  }
  if (name == "floordiv" || name == "truncdiv" || name == "mod" || name == "fmod")
    return integer_division(name == "fmod" ? "truncmod" : name, a, c, is_unsigned(d));
  throw std::runtime_error("unknown binary op '" + name + "'");
}

Value* ValueEmitter::math(const kir::Op& op, Scope& s) {
  const DType operand = dtype_of(op.args.at(0));
  std::vector<Value*> args;
  for (int a : op.args) args.push_back(s.values.at(a));
  // Half precision computes in float and rounds back.
  const bool half = operand == DType::F16 || operand == DType::BF16;
  if (half)
    for (Value*& a : args) a = b_.CreateFPExt(a, b_.getFloatTy());
  Value* r = args.size() == 1 ? unary(op.name, args[0], half ? DType::F32 : operand)
             : args.size() == 2
                 ? binary(op.name, args[0], args[1], half ? DType::F32 : operand)
                 : throw std::runtime_error("math op '" + op.name + "' with " +
                                            std::to_string(args.size()) + " operands");
  if (half && r->getType()->isFloatTy()) r = b_.CreateFPTrunc(r, register_type(op.dtype));
  return r;
}

void ValueEmitter::emit(const kir::Op& op, Scope& s) {
  Value* v = nullptr;
  switch (op.kind) {
    case kir::OpKind::Load:
      v = load(op, s);
      break;
    case kir::OpKind::Store:
      store(op, s);
      return;
    case kir::OpKind::Scatter:
      scatter(op, s);
      return;
    case kir::OpKind::Const: {
      const double value = kir::is_float(op.dtype) || op.dtype == DType::Bool
                               ? std::strtod(op.literal.c_str(), nullptr)
                               : static_cast<double>(integer_literal(op.literal));
      if (!kir::is_float(op.dtype) && op.dtype != DType::Bool) {
        v = llvm::ConstantInt::get(register_type(op.dtype),
                                   static_cast<uint64_t>(integer_literal(op.literal)), true);
      } else {
        v = constant(op.dtype, value);
      }
      break;
    }
    case kir::OpKind::Index:
      v = b_.CreateIntCast(index(op.index, s), register_type(op.dtype), true);
      break;
    case kir::OpKind::Cast:
      v = convert(s.values.at(op.args.at(0)), dtype_of(op.args.at(0)), op.dtype);
      break;
    case kir::OpKind::Where:
      v = b_.CreateSelect(s.values.at(op.args.at(0)), s.values.at(op.args.at(1)),
                          s.values.at(op.args.at(2)));
      break;
    case kir::OpKind::CheckIndex:
      v = check_index(b_.CreateSExtOrTrunc(s.values.at(op.args.at(0)), b_.getInt64Ty()), op.number);
      v = b_.CreateIntCast(v, register_type(op.dtype), true);
      break;
    case kir::OpKind::Math:
      v = math(op, s);
      break;
    case kir::OpKind::Reduce:
    case kir::OpKind::Extract:
    case kir::OpKind::Scan:
      throw std::runtime_error("reduce, extract and scan belong to the reduction skeleton");
  }
  s.values[op.id] = v;
}

}  // namespace kiln::gpu
