#include "plugins/gpu/reduce_state.h"

#include <llvm/IR/Intrinsics.h>

#include <limits>
#include <stdexcept>

namespace kiln::gpu {

using llvm::Value;

namespace {

// The sum of a non-empty `terms` as a tree of adds: short chains, rounding that grows with
// log n.
Value* pairwise_sum(llvm::IRBuilder<>& b, std::vector<Value*> terms) {
  for (size_t width = terms.size(); width > 1; width = (width + 1) / 2) {
    for (size_t i = 0; i < width / 2; ++i) terms[i] = b.CreateFAdd(terms[2 * i], terms[2 * i + 1]);
    if (width % 2 == 1) terms[width / 2] = terms[width - 1];
  }
  return terms[0];
}

}  // namespace

size_t state_fields(const std::string& kind) {
  if (kind == kOnlineSoftmax) return 2;
  if (kind == "argmax" || kind == "argmin" || kind == "welford") return 3;
  return 1;
}

std::vector<Value*> welford_of(llvm::IRBuilder<>& b, const std::vector<Value*>& values,
                               Value* masked, size_t masked_from, llvm::Type* t) {
  auto fp = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto counted = [&](size_t j, Value* v) {
    return masked && j >= masked_from ? b.CreateSelect(masked, v, fp(0)) : v;
  };
  auto total = [&](std::vector<Value*> terms) {
    return terms.empty() ? fp(0) : pairwise_sum(b, std::move(terms));
  };
  std::vector<Value*> terms;
  for (size_t j = 0; j < values.size(); ++j) terms.push_back(counted(j, values[j]));
  Value* sum = total(terms);
  const size_t whole = masked ? masked_from : values.size();
  Value* count = fp(static_cast<double>(whole));
  if (masked)
    count = b.CreateFAdd(
        count, b.CreateSelect(masked, fp(static_cast<double>(values.size() - whole)), fp(0)));
  Value* mean = b.CreateSelect(b.CreateFCmpOEQ(count, fp(0)), fp(0), b.CreateFDiv(sum, count));
  for (size_t j = 0; j < values.size(); ++j) {
    Value* d = b.CreateFSub(values[j], mean);
    terms[j] = counted(j, b.CreateFMul(d, d));
  }
  return {mean, total(terms), count};
}

ReduceState::ReduceState(llvm::IRBuilder<>& b, const std::string& kind, kir::DType operand,
                         llvm::Type* type, llvm::FunctionCallee exp, llvm::FunctionCallee exp2)
    : b_(b), kind_(kind), exp_(exp), exp2_(exp2), has_exp2_(exp2.getCallee() != nullptr) {
  float_ = kir::is_float(operand);
  unsigned_ = operand == kir::DType::U8 || operand == kir::DType::Bool;
  if (kind == "sum" || kind == "prod" || kind == "max" || kind == "min" || kind == "any") {
    types_ = {type};
  } else if (kind == "argmax" || kind == "argmin") {
    types_ = {type, b.getInt64Ty(), b.getInt1Ty()};
  } else if (kind == kOnlineSoftmax) {
    if (!float_ || !exp) throw std::runtime_error("an online softmax needs floats and exp");
    types_ = {type, type};
  } else if (kind == "welford") {
    if (!float_) throw std::runtime_error("welford needs a floating operand");
    types_ = {type, type, type};
  } else {
    throw std::runtime_error("unknown reduction '" + kind + "'");
  }
}

// Welford's divisions, approximated (arcp, afn): a correctly rounded division costs more than
// the rest of an update, and every thread combines states ten times per row; the result
// stays within a few ulps, far inside the f32 tolerance of a variance.
Value* ReduceState::fast_div(Value* a, Value* d) const {
  auto* q = llvm::cast<llvm::Instruction>(b_.CreateFDiv(a, d));
  q->setHasAllowReciprocal(true);
  q->setHasApproxFunc(true);
  return q;
}

Value* ReduceState::scale(Value* a, Value* m) const {
  return b_.CreateSelect(b_.CreateFCmpOEQ(a, m), llvm::ConstantFP::get(types_[0], 1.0),
                         b_.CreateCall(exp_, {b_.CreateFSub(a, m)}));
}

std::vector<Value*> ReduceState::identity() const {
  llvm::Type* t = types_[0];
  auto fp = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto in = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true); };
  const unsigned bits = t->isIntegerTy() ? t->getIntegerBitWidth() : 0;
  if (kind_ == "sum" || kind_ == "any") return {float_ ? fp(0) : in(0)};
  if (kind_ == "prod") return {float_ ? fp(1) : in(1)};
  if (kind_ == "max") {
    if (float_) return {fp(-std::numeric_limits<double>::infinity())};
    return {unsigned_ ? in(0) : llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits))};
  }
  if (kind_ == "min") {
    if (float_) return {fp(std::numeric_limits<double>::infinity())};
    return {unsigned_ ? llvm::ConstantInt::get(t, llvm::APInt::getMaxValue(bits))
                      : llvm::ConstantInt::get(t, llvm::APInt::getSignedMaxValue(bits))};
  }
  if (kind_ == "welford") return {fp(0), fp(0), fp(0)};
  if (kind_ == kOnlineSoftmax) return {fp(-std::numeric_limits<double>::infinity()), fp(0)};
  return {float_ ? fp(0) : in(0), b_.getInt64(0), b_.getFalse()};  // argmax/argmin: unseen
}

std::vector<Value*> ReduceState::accumulate(const std::vector<Value*>& s, Value* x,
                                            Value* position) const {
  if (kind_ == "welford") {
    Value* count = b_.CreateFAdd(s[2], llvm::ConstantFP::get(types_[0], 1.0));
    Value* d = b_.CreateFSub(x, s[0]);
    Value* mean = b_.CreateFAdd(s[0], fast_div(d, count));
    Value* m2 = b_.CreateFAdd(s[1], b_.CreateFMul(d, b_.CreateFSub(x, mean)));
    return {mean, m2, count};
  }
  if (kind_ == kOnlineSoftmax) {
    // One exp per element: a new max rescales the sum by exp(old - new) and adds 1, else
    // exp(x - max) adds. As the two-pass sum of exp(x - max(x)): a -inf adds nothing (even
    // to a max of -inf: such a row's softmax is NaN through x - max), a +inf makes the sum
    // NaN (inf - inf; combine keeps it so), and a NaN propagates through the exp.
    llvm::Type* t = types_[0];
    const double inf = std::numeric_limits<double>::infinity();
    Value* grows = b_.CreateFCmpOGT(x, s[0]);
    Value* e = b_.CreateCall(
        exp_, {b_.CreateSelect(grows, b_.CreateFSub(s[0], x), b_.CreateFSub(x, s[0]))});
    e = b_.CreateSelect(b_.CreateFCmpOEQ(x, llvm::ConstantFP::get(t, -inf)),
                        llvm::ConstantFP::get(t, 0.0), e);
    Value* sum =
        b_.CreateSelect(grows, b_.CreateFAdd(b_.CreateFMul(s[1], e), llvm::ConstantFP::get(t, 1.0)),
                        b_.CreateFAdd(s[1], e));
    sum = b_.CreateSelect(b_.CreateFCmpOEQ(x, llvm::ConstantFP::get(t, inf)),
                          llvm::ConstantFP::getNaN(t), sum);
    return {b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, s[0], x), sum};
  }
  if (kind_ == "argmax" || kind_ == "argmin") return combine(s, {x, position, b_.getTrue()});
  return combine(s, {x});
}

bool ReduceState::takes_runs() const {
  return kind_ == kOnlineSoftmax && types_[0]->isFloatTy() && has_exp2_;
}

Value* ReduceState::fast_exp(Value* d) const {
  return b_.CreateCall(exp2_,
                       {b_.CreateFMul(d, llvm::ConstantFP::get(types_[0], 1.4426950408889634))});
}

std::vector<Value*> ReduceState::accumulate_run(const std::vector<Value*>& s,
                                                const std::vector<Value*>& xs) const {
  if (!takes_runs() || xs.empty())
    throw std::logic_error("accumulate_run: not an f32 online softmax over a run");
  // As accumulate, element by element: the run's max first (NaN wins), the sum rescaled by
  // exp(old - new) unless the max stayed (both -inf included), then exp(x - max) per element.
  // A -inf adds nothing: while the max is -inf, the terms are taken against 0 instead (each
  // exp(-inf)); a +inf gives inf - inf, a NaN sum.
  llvm::Type* t = types_[0];
  const double inf = std::numeric_limits<double>::infinity();
  Value* m = s[0];
  for (Value* x : xs) m = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, m, x);
  Value* against = b_.CreateSelect(b_.CreateFCmpOEQ(m, llvm::ConstantFP::get(t, -inf)),
                                   llvm::ConstantFP::get(t, 0.0), m);
  std::vector<Value*> terms;
  for (Value* x : xs) terms.push_back(fast_exp(b_.CreateFSub(x, against)));
  Value* kept = b_.CreateSelect(b_.CreateFCmpOEQ(s[0], m), s[1],
                                b_.CreateFMul(s[1], fast_exp(b_.CreateFSub(s[0], m))));
  return {m, b_.CreateFAdd(kept, pairwise_sum(b_, std::move(terms)))};
}

std::vector<Value*> ReduceState::combine(const std::vector<Value*>& a,
                                         const std::vector<Value*>& c) const {
  using llvm::Intrinsic::ID;
  if (kind_ == "sum") return {float_ ? b_.CreateFAdd(a[0], c[0]) : b_.CreateAdd(a[0], c[0])};
  if (kind_ == "prod") return {float_ ? b_.CreateFMul(a[0], c[0]) : b_.CreateMul(a[0], c[0])};
  if (kind_ == "any") return {b_.CreateOr(a[0], c[0])};
  if (kind_ == "max" || kind_ == "min") {
    const bool max = kind_ == "max";
    const ID id = float_      ? (max ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum)
                  : unsigned_ ? (max ? llvm::Intrinsic::umax : llvm::Intrinsic::umin)
                              : (max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
    return {b_.CreateBinaryIntrinsic(id, a[0], c[0])};
  }
  if (kind_ == kOnlineSoftmax) {
    Value* m = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a[0], c[0]);
    return {
        m, b_.CreateFAdd(b_.CreateFMul(a[1], scale(a[0], m)), b_.CreateFMul(c[1], scale(c[0], m)))};
  }
  if (kind_ == "welford") {
    Value* n = b_.CreateFAdd(a[2], c[2]);
    Value* zero = llvm::ConstantFP::get(types_[0], 0.0);
    Value* safe_n =
        b_.CreateSelect(b_.CreateFCmpOEQ(n, zero), llvm::ConstantFP::get(types_[0], 1.0), n);
    Value* d = b_.CreateFSub(c[0], a[0]);
    Value* inv_n = fast_div(llvm::ConstantFP::get(types_[0], 1.0), safe_n);
    Value* mean = b_.CreateFAdd(a[0], b_.CreateFMul(d, b_.CreateFMul(c[2], inv_n)));
    Value* m2 = b_.CreateFAdd(
        b_.CreateFAdd(a[1], c[1]),
        b_.CreateFMul(b_.CreateFMul(b_.CreateFMul(d, d), b_.CreateFMul(a[2], c[2])), inv_n));
    // An empty side leaves the other as it was.
    Value* a_empty = b_.CreateFCmpOEQ(a[2], zero);
    Value* c_empty = b_.CreateFCmpOEQ(c[2], zero);
    std::vector<Value*> out = {mean, m2, n};
    for (size_t f = 0; f < 2; ++f)
      out[f] = b_.CreateSelect(a_empty, c[f], b_.CreateSelect(c_empty, a[f], out[f]));
    return out;
  }
  // argmax / argmin: NaN wins, then the extreme, then the lower position; unseen loses.
  const bool max = kind_ == "argmax";
  Value* a_nan = float_ ? b_.CreateFCmpUNO(a[0], a[0]) : b_.getFalse();
  Value* c_nan = float_ ? b_.CreateFCmpUNO(c[0], c[0]) : b_.getFalse();
  Value* c_better = float_ ? (max ? b_.CreateFCmpOGT(c[0], a[0]) : b_.CreateFCmpOLT(c[0], a[0]))
                           : (max ? b_.CreateICmpSGT(c[0], a[0]) : b_.CreateICmpSLT(c[0], a[0]));
  Value* a_better = float_ ? (max ? b_.CreateFCmpOGT(a[0], c[0]) : b_.CreateFCmpOLT(a[0], c[0]))
                           : (max ? b_.CreateICmpSGT(a[0], c[0]) : b_.CreateICmpSLT(a[0], c[0]));
  Value* c_earlier = b_.CreateICmpSLT(c[1], a[1]);
  // Both NaN or equal: the earlier; one NaN: that one; else the better.
  Value* tie = b_.CreateAnd(b_.CreateNot(c_better), b_.CreateNot(a_better));
  Value* take_c = b_.CreateSelect(
      b_.CreateAnd(a_nan, c_nan), c_earlier,
      b_.CreateSelect(
          a_nan, b_.getFalse(),
          b_.CreateSelect(c_nan, b_.getTrue(), b_.CreateSelect(tie, c_earlier, c_better))));
  take_c = b_.CreateSelect(b_.CreateNot(c[2]), b_.getFalse(),
                           b_.CreateSelect(b_.CreateNot(a[2]), b_.getTrue(), take_c));
  return {b_.CreateSelect(take_c, c[0], a[0]), b_.CreateSelect(take_c, c[1], a[1]),
          b_.CreateOr(a[2], c[2])};
}

Value* ReduceState::result(const std::vector<Value*>& s) const {
  if (kind_ == "argmax" || kind_ == "argmin") return s[1];
  return s[0];
}

Value* ReduceState::component(const std::vector<Value*>& s, int64_t k) const {
  if (kind_ == kOnlineSoftmax && (k == 0 || k == 1)) return s[static_cast<size_t>(k)];
  if (kind_ != "welford" || k < 0 || k > 2)
    throw std::runtime_error("extract reads a welford reduce's component 0, 1 or 2");
  return s[static_cast<size_t>(k)];
}

namespace {

// A field as i64 bits and back (shared memory holds i64 words).
Value* to_bits(llvm::IRBuilder<>& b, Value* v) {
  llvm::Type* t = v->getType();
  if (t->isIntegerTy()) return b.CreateZExtOrTrunc(v, b.getInt64Ty());
  const unsigned bits = t->getPrimitiveSizeInBits();
  return b.CreateZExt(b.CreateBitCast(v, b.getIntNTy(bits)), b.getInt64Ty());
}

Value* from_bits(llvm::IRBuilder<>& b, Value* v, llvm::Type* t) {
  if (t->isIntegerTy()) return b.CreateTrunc(v, t);
  return b.CreateBitCast(b.CreateTrunc(v, b.getIntNTy(t->getPrimitiveSizeInBits())), t);
}

// A field moved between lanes through 32-bit shuffles: `shuffle` moves one i32 word.
template <class Shuffle>
Value* shuffle_field(llvm::IRBuilder<>& b, Value* v, Shuffle shuffle) {
  llvm::Type* type = v->getType();
  const unsigned width =
      type->isIntegerTy() ? type->getIntegerBitWidth() : type->getPrimitiveSizeInBits();
  if (width <= 32) {
    // One 32-bit shuffle carries it (widened, then cut back).
    Value* word = type->isIntegerTy()
                      ? b.CreateZExtOrTrunc(v, b.getInt32Ty())
                      : b.CreateZExt(b.CreateBitCast(v, b.getIntNTy(width)), b.getInt32Ty());
    Value* got = shuffle(word);
    return type->isIntegerTy() ? b.CreateTrunc(got, type)
                               : b.CreateBitCast(b.CreateTrunc(got, b.getIntNTy(width)), type);
  }
  Value* bits = to_bits(b, v);
  Value* lo = shuffle(b.CreateTrunc(bits, b.getInt32Ty()));
  Value* hi = shuffle(b.CreateTrunc(b.CreateLShr(bits, 32), b.getInt32Ty()));
  Value* joined = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()),
                             b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
  return from_bits(b, joined, v->getType());
}

std::vector<Value*> warp_reduce(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                                std::vector<Value*> s) {
  for (unsigned mask = t.warp_width() / 2; mask > 0; mask /= 2) {
    std::vector<Value*> other;
    for (Value* f : s)
      other.push_back(shuffle_field(b, f, [&](Value* w) { return t.shuffle_xor(b, w, mask); }));
    s = r.combine(s, other);
  }
  return s;
}

// Each warp's `state` (held by its lane `writer`) through shared memory: lane w of every warp
// gets warp w's, lanes past the block's `warps` the identity. Every thread calls it (barriers).
// The scratch array must hold `words` i64 words per field of `r`: a narrower one would let the
// combine write past it (shared memory of whatever follows).
void require_scratch(const ReduceState& r, llvm::Type* scratch_type, uint64_t words) {
  if (scratch_type->getArrayNumElements() < r.fields() * words)
    throw std::runtime_error("internal: the reduction's shared scratch is too small");
}

std::vector<Value*> warp_states(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                                const std::vector<Value*>& state, Value* writer, Value* lane,
                                Value* warp, Value* scratch, llvm::Type* scratch_type,
                                unsigned warps) {
  require_scratch(r, scratch_type, 32);
  auto word = [&](size_t field, Value* at) {
    Value* i =
        b.CreateAdd(b.CreateMul(b.getInt32(static_cast<uint32_t>(field)), b.getInt32(32)), at);
    return b.CreateGEP(scratch_type, scratch, {b.getInt32(0), i});
  };
  t.barrier(b);  // earlier readers of the scratch words are done
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* write = llvm::BasicBlock::Create(b.getContext(), "warp_state", f);
  auto* written = llvm::BasicBlock::Create(b.getContext(), "warp_state_written", f);
  b.CreateCondBr(b.CreateICmpEQ(lane, writer), write, written);
  b.SetInsertPoint(write);
  for (size_t i = 0; i < state.size(); ++i) b.CreateStore(to_bits(b, state[i]), word(i, warp));
  b.CreateBr(written);
  b.SetInsertPoint(written);
  t.barrier(b);
  Value* in_range = b.CreateICmpULT(lane, b.getInt32(warps));
  Value* at = b.CreateSelect(in_range, lane, b.getInt32(0));
  const std::vector<Value*> none = r.identity();
  std::vector<Value*> out;
  for (size_t i = 0; i < state.size(); ++i) {
    Value* v = from_bits(b, b.CreateLoad(b.getInt64Ty(), word(i, at)), r.types()[i]);
    out.push_back(b.CreateSelect(in_range, v, none[i]));
  }
  return out;
}

}  // namespace

std::vector<Value*> block_reduce(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                                 std::vector<Value*> state, Value* scratch,
                                 llvm::Type* scratch_type, unsigned warps) {
  state = warp_reduce(b, t, r, std::move(state));
  if (warps <= 1) return state;
  Value* tid = t.thread_id(b);
  Value* lane = b.CreateURem(tid, b.getInt32(t.warp_width()));
  Value* warp = b.CreateUDiv(tid, b.getInt32(t.warp_width()));
  // Every warp combines the warps' partials, so every thread ends with the block's value.
  std::vector<Value*> partial =
      warp_states(b, t, r, state, b.getInt32(0), lane, warp, scratch, scratch_type, warps);
  return warp_reduce(b, t, r, std::move(partial));
}

std::vector<Value*> column_reduce(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                                  const std::vector<Value*>& state, Value* scratch,
                                  llvm::Type* scratch_type, unsigned parts, unsigned block) {
  require_scratch(r, scratch_type, block);
  Value* tid = t.thread_id(b);
  auto word = [&](size_t field, Value* at) {
    Value* i = b.CreateAdd(b.getInt32(static_cast<uint32_t>(field * block)), at);
    return b.CreateGEP(scratch_type, scratch, {b.getInt32(0), i});
  };
  t.barrier(b);  // earlier readers of the scratch words are done
  for (size_t i = 0; i < state.size(); ++i) b.CreateStore(to_bits(b, state[i]), word(i, tid));
  t.barrier(b);
  // Every thread combines its row's parts in the same order (part 0 first), so every thread
  // of the row ends with the same value and the sum's order does not depend on timing.
  Value* slot = b.CreateURem(tid, b.getInt32(t.warp_width()));
  std::vector<Value*> acc;
  for (unsigned p = 0; p < parts; ++p) {
    Value* at = b.CreateAdd(slot, b.getInt32(p * t.warp_width()));
    std::vector<Value*> part;
    for (size_t i = 0; i < state.size(); ++i)
      part.push_back(from_bits(b, b.CreateLoad(b.getInt64Ty(), word(i, at)), r.types()[i]));
    acc = p == 0 ? part : r.combine(acc, part);
  }
  return acc;
}

std::vector<Value*> warp_scan(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                              std::vector<Value*> state, Value* lane) {
  for (unsigned delta = 1; delta < t.warp_width(); delta *= 2) {
    std::vector<Value*> earlier;
    for (Value* f : state)
      earlier.push_back(shuffle_field(b, f, [&](Value* w) { return t.shuffle_up(b, w, delta); }));
    const std::vector<Value*> combined = r.combine(earlier, state);
    Value* has_earlier = b.CreateICmpUGE(lane, b.getInt32(delta));
    for (size_t f = 0; f < state.size(); ++f)
      state[f] = b.CreateSelect(has_earlier, combined[f], state[f]);
  }
  return state;
}

std::vector<Value*> warp_exclusive(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                                   const std::vector<Value*>& inclusive, Value* lane) {
  std::vector<Value*> out;
  const std::vector<Value*> none = r.identity();
  Value* first = b.CreateICmpEQ(lane, b.getInt32(0));
  for (size_t f = 0; f < inclusive.size(); ++f) {
    Value* earlier =
        shuffle_field(b, inclusive[f], [&](Value* w) { return t.shuffle_up(b, w, 1); });
    out.push_back(b.CreateSelect(first, none[f], earlier));
  }
  return out;
}

std::vector<Value*> warp_broadcast(llvm::IRBuilder<>& b, const GpuTarget& t,
                                   std::vector<Value*> state, Value* from) {
  for (Value*& f : state)
    f = shuffle_field(b, f, [&](Value* w) { return t.shuffle_from(b, w, from); });
  return state;
}

BlockScan block_scan(llvm::IRBuilder<>& b, const GpuTarget& t, const ReduceState& r,
                     const std::vector<Value*>& upto, Value* lane, Value* warp, Value* scratch,
                     llvm::Type* scratch_type, unsigned warps) {
  // Every warp scans the warps' totals (lane w holds warp w's), then takes what its own
  // warp needs: the totals before it, and all of them.
  const std::vector<Value*> totals = warp_states(b, t, r, upto, b.getInt32(t.warp_width() - 1),
                                                 lane, warp, scratch, scratch_type, warps);
  const std::vector<Value*> inclusive = warp_scan(b, t, r, totals, lane);
  return {warp_broadcast(b, t, warp_exclusive(b, t, r, inclusive, lane), warp),
          warp_broadcast(b, t, inclusive, b.getInt32(warps - 1))};
}

}  // namespace kiln::gpu
