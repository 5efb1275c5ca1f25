#include "plugins/ptx/conv_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "plugins/ptx/conv_split.h"
#include "plugins/ptx/tensor_core.h"

namespace kiln::ptx {
namespace {

using kir_support::ConvCall;
using llvm::Value;
using tensor_core::Quad;

constexpr int64_t kCols = kConvCols;
constexpr int64_t kColTiles = kCols / 8;

class Emitter {
 public:
  Emitter(llvm::Module& m, const NvptxTarget& target, const ConvKernelSpec& spec)
      : m_(m),
        t_(target),
        s_(spec),
        c_(spec.call),
        b_(m.getContext()),
        size_(kir::dtype_size(spec.call.dtype)),
        rows_(spec.tile.rows),
        threads_(spec.tile.threads()),
        step_bytes_(spec.tile.step_bytes),
        pitch_(spec.tile.pitch()),
        stages_(spec.tile.stages),
        warp_rows_(spec.tile.warp_rows),
        row_tiles_(spec.tile.warp_rows / 16),
        slices_(spec.tile.slices),
        step_(step_bytes_ / size_),
        cg_(c_.c / c_.groups),
        kg_(c_.k / c_.groups),
        reduction_(c_.r * c_.s * cg_) {}
  void emit();

 private:
  llvm::Type* f32() { return b_.getFloatTy(); }
  llvm::Type* i32() { return b_.getInt32Ty(); }
  llvm::Type* i64() { return b_.getInt64Ty(); }
  // Index arithmetic: 32-bit where every element of the call is within 2^31 of its buffer's
  // start (far fewer instructions than 64-bit divisions and products).
  llvm::Type* ix() { return s_.index32 ? i32() : i64(); }
  Value* c64(int64_t v) { return llvm::ConstantInt::get(ix(), static_cast<uint64_t>(v)); }
  Value* f(double v) { return llvm::ConstantFP::get(f32(), v); }
  Value* add(Value* a, Value* v) { return b_.CreateAdd(a, v); }
  Value* mul(Value* a, int64_t v) { return b_.CreateMul(a, c64(v)); }
  bool half() const { return size_ == 2; }
  // The byte address `bytes` into `base` (a pointer).
  Value* at(Value* base, Value* bytes) {
    return b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateZExt(bytes, i64()));
  }
  // The address of element `index` of `base` (x, the weight or y).
  Value* element(Value* base, Value* index) {
    return b_.CreateGEP(
        b_.getInt8Ty(), base,
        b_.CreateMul(b_.CreateZExt(index, i64()), b_.getInt64(static_cast<uint64_t>(size_))));
  }
  Value* special(llvm::Intrinsic::ID id) {
    return b_.CreateZExtOrTrunc(b_.CreateIntrinsic(id, {}, {}), ix());
  }
  // Accumulator `a` of this thread, alloca'd (promoted to registers: constant indices); i of
  // fragment (mt, nt) is (mt * kColTiles + nt) * 4 + i.
  Value* acc_slot(int64_t a) {
    return b_.CreateConstGEP1_64(f32(), acc_, static_cast<uint64_t>(a));
  }
  Value* acc_slot(int64_t mt, int64_t nt, int64_t i) {
    return acc_slot((mt * kColTiles + nt) * 4 + i);
  }
  Quad acc(int64_t mt, int64_t nt) {
    Quad q;
    for (int64_t i = 0; i < 4; ++i)
      q[static_cast<size_t>(i)] = b_.CreateLoad(f32(), acc_slot(mt, nt, i));
    return q;
  }
  void set_acc(int64_t mt, int64_t nt, const Quad& q) {
    for (int64_t i = 0; i < 4; ++i) b_.CreateStore(q[static_cast<size_t>(i)], acc_slot(mt, nt, i));
  }

  // Reduction index `k` as (channel in the group, tap row, tap column).
  struct Tap {
    Value *channel, *r, *s;
  };
  Tap tap(Value* k) {
    Value* tap = b_.CreateUDiv(k, c64(cg_));
    return {b_.CreateURem(k, c64(cg_)), b_.CreateUDiv(tap, c64(c_.s)),
            b_.CreateURem(tap, c64(c_.s))};
  }
  // Copies `elements` from element `index` of `from` to byte `to` of shared `tile`, or zeros
  // where `valid` is false (then nothing is read: the address is the buffer's start).
  void copy(Value* tile, Value* to, Value* from, Value* index, Value* valid, int64_t elements);
  void copy_x(Value* j, Value* buffer);
  void copy_w(Value* j, Value* buffer);
  void compute(Value* buffer);
  void store_accumulators(bool pairs, llvm::Type* type,
                          const std::function<Value*(Value*, Value*)>& address);
  void combine_slices();
  void write_y();
  void write_partials();

  llvm::Module& m_;
  const NvptxTarget& t_;
  const ConvKernelSpec& s_;
  const ConvCall& c_;
  llvm::IRBuilder<> b_;
  const int64_t size_;                                          // bytes per element
  const int64_t rows_, threads_, step_bytes_, pitch_, stages_;  // the tile's (ConvTile)
  const int64_t warp_rows_, row_tiles_;  // positions per warp, and mma fragments of 16 of them
  const int64_t slices_;                 // warps over each position, each on part of each step
  const int64_t step_;                   // reduction elements per step
  const int64_t cg_, kg_, reduction_;
  llvm::Function* fn_ = nullptr;
  Value *x_ = nullptr, *w_ = nullptr, *y_ = nullptr, *acc_ = nullptr;
  Value *tid_ = nullptr, *lane_ = nullptr, *g_ = nullptr, *quad_ = nullptr;
  // The warp's place among its slice's warps (its positions), and its slice.
  Value *tile_warp_ = nullptr, *slice_ = nullptr;
  Value *group_ = nullptr, *split_ = nullptr, *first_row_ = nullptr, *first_col_ = nullptr;
  Value* partials_ = nullptr;  // f32 partial sums of a split reduction
  // A row of a tile this thread copies: its place in the tile, whether it is inside the call,
  // its element of x at channel 0 of its group and tap (0, 0) (or of the weight at (0, 0, 0)),
  // and (x) its first input row and column.
  struct PatchRow {
    Value *row = nullptr, *valid = nullptr, *base = nullptr, *ih0 = nullptr, *iw0 = nullptr;
  };
  // How a tile's copies are shared out: the rows this thread copies and, of each, chunks
  // first_chunk + i·chunk_step for i < chunks (a chunk: 16 bytes, or one element).
  struct Share {
    std::vector<Value*> rows;
    Value* first_chunk = nullptr;
    int64_t chunk_step = 1, chunks = 1;
  };
  Share share(bool vector, int64_t rows);
  // Chunk c of a share in tile j: its place in the row, its tap, and whether it is inside the
  // reduction.
  struct Chunk {
    Value* q;
    Tap tap;
    Value* inside;
  };
  Chunk chunk(const Share& share, Value* j, int64_t c, int64_t elements) {
    Value* q = add(share.first_chunk, c64(c * share.chunk_step));
    Value* k = add(mul(j, step_), mul(q, elements));
    return {q, tap(k), b_.CreateICmpULT(k, c64(reduction_))};
  }
  Share x_share_, w_share_;
  std::vector<PatchRow> x_rows_, w_rows_;
  Value *a_tile_ = nullptr, *b_tile_ = nullptr;  // the rings of patch and weight rows
  // The rings' 32-bit shared addresses: copies and ldmatrix address them in 32-bit adds
  // (pointers to shared memory are 64-bit: each address would cost 64-bit adds and casts).
  Value *a_shared_ = nullptr, *b_shared_ = nullptr;
  Value* shared_at(Value* ring, Value* bytes) {
    return b_.CreateAdd(ring, b_.CreateZExtOrTrunc(bytes, i32()));
  }
};

void Emitter::copy(Value* tile, Value* to, Value* from, Value* index, Value* valid,
                   int64_t elements) {
  if (half() && elements == 1) {  // cp.async copies 4 bytes at least: a load where valid
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* load = llvm::BasicBlock::Create(m_.getContext(), "element_load", fn_);
    auto* join = llvm::BasicBlock::Create(m_.getContext(), "element_store", fn_);
    b_.CreateCondBr(valid, load, join);
    b_.SetInsertPoint(load);
    Value* v = b_.CreateAlignedLoad(b_.getInt16Ty(), element(from, index), llvm::Align(2));
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* value = b_.CreatePHI(b_.getInt16Ty(), 2);
    value->addIncoming(b_.getInt16(0), before);
    value->addIncoming(v, load);
    b_.CreateAlignedStore(value, at(tile, to), llvm::Align(2));
    return;
  }
  // A zero-filling copy reads nothing, but its address must still be aligned as a read would
  // be: x's first element (aligned where copies are 16 bytes), or the weight's.
  Value* first = from == x_ ? element(from, c64(c_.x_offset)) : from;
  Value* source = b_.CreateSelect(valid, element(from, index), first);
  const int bytes = static_cast<int>(elements * size_);
  tensor_core::copy_async(
      b_, shared_at(tile == a_tile_ ? a_shared_ : b_shared_, to), b_.CreatePtrToInt(source, i64()),
      bytes, b_.CreateSelect(valid, b_.getInt32(static_cast<uint32_t>(bytes)), b_.getInt32(0)));
}

// Tile j of this thread's patch rows into buffer `buffer` of a_tile_: 16 bytes per copy where
// the channels are contiguous (a chunk never straddles two taps: the group's channels are
// whole chunks), else element by element; zeros past the reduction and for padding taps.
void Emitter::copy_x(Value* j, Value* buffer) {
  const int64_t elements = s_.vector_x ? 16 / size_ : 1;
  for (int64_t c = 0; c < x_share_.chunks; ++c) {
    const Chunk ch = chunk(x_share_, j, c, elements);
    Value *q = ch.q, *inside = ch.inside;
    const Tap& p = ch.tap;
    Value* dh = mul(p.r, c_.dil_h);
    Value* dw = mul(p.s, c_.dil_w);
    Value* tap_at =
        add(mul(p.channel, c_.x_stride[1]), add(mul(dh, c_.x_stride[2]), mul(dw, c_.x_stride[3])));
    for (const PatchRow& r : x_rows_) {
      Value* ih = add(r.ih0, dh);
      Value* iw = add(r.iw0, dw);
      // Unsigned compares: a negative row or column is past the end too.
      Value* valid = b_.CreateAnd(
          b_.CreateAnd(r.valid, inside),
          b_.CreateAnd(b_.CreateICmpULT(ih, c64(c_.h)), b_.CreateICmpULT(iw, c64(c_.w))));
      Value* to =
          add(mul(buffer, rows_ * pitch_), add(mul(r.row, pitch_), mul(q, elements * size_)));
      copy(a_tile_, to, x_, add(r.base, tap_at), valid, elements);
    }
  }
}

// Tile j of the weight rows into buffer `buffer` of b_tile_, shared out as x's rows are.
void Emitter::copy_w(Value* j, Value* buffer) {
  const int64_t elements = s_.vector_w ? 16 / size_ : 1;
  for (int64_t c = 0; c < w_share_.chunks; ++c) {
    const Chunk ch = chunk(w_share_, j, c, elements);
    Value *q = ch.q, *inside = ch.inside;
    const Tap& p = ch.tap;
    Value* tap_at = add(mul(p.channel, c_.w_stride[1]),
                        add(mul(p.r, c_.w_stride[2]), mul(p.s, c_.w_stride[3])));
    for (const PatchRow& r : w_rows_) {
      Value* to =
          add(mul(buffer, kCols * pitch_), add(mul(r.row, pitch_), mul(q, elements * size_)));
      copy(b_tile_, to, w_, add(r.base, tap_at), b_.CreateAnd(r.valid, inside), elements);
    }
  }
}

Emitter::Share Emitter::share(bool vector, int64_t rows) {
  const int64_t elements = vector ? 16 / size_ : 1;
  Share out;
  if (vector) {  // 4 lanes per row: each copy of a warp reads 64 bytes of 8 rows whole
    out.first_chunk = b_.CreateAnd(tid_, c64(3));
    out.chunk_step = 4;
    out.chunks = step_bytes_ / 64;
    for (int64_t i = 0; i < rows / (threads_ / 4); ++i)
      out.rows.push_back(add(b_.CreateLShr(tid_, c64(2)), c64(i * (threads_ / 4))));
    return out;
  }
  // Element by element: a warp's lanes take adjacent rows, which in NCHW x are adjacent output
  // positions; with fewer rows than threads, the threads over them take alternate elements,
  // with more, each thread takes rows `threads_` apart whole.
  if (rows > threads_) {
    for (int64_t i = 0; i < rows / threads_; ++i) out.rows.push_back(add(tid_, c64(i * threads_)));
    out.first_chunk = c64(0);
    out.chunks = step_ / elements;
    return out;
  }
  const int64_t per_row = threads_ / rows;
  out.rows.push_back(b_.CreateAnd(tid_, c64(rows - 1)));
  out.first_chunk = b_.CreateUDiv(tid_, c64(rows));
  out.chunk_step = per_row;
  out.chunks = step_ / elements / per_row;
  return out;
}

// Per 32 bytes of the reduction, each warp's two a fragments and the b operands of two
// 8-channel groups at a time come by ldmatrix. Lane l addresses row l%16 of the a rows (16
// bytes on for lanes 16-31), and row l%8 of matrix l/8 of the b rows: channels +8 for
// matrices 2, 3, 16 bytes on for matrices 1, 3. For 16-bit elements these are the fragments
// of mma m16n8k16. For f32 each 8x8 matrix of 16-bit halves is 8 rows of 4 elements, and a
// lane gets element (lane/4, lane%4) of each: exactly the fragments of mma m16n8k8 on TF32
// (a: rows g and g+8, columns q and q+4; b: channel g, rows q and q+4), rounded to TF32 first
// (twice, as big and small, without the call's `tf32`).
void Emitter::compute(Value* buffer) {
  Value* a_base = mul(buffer, rows_ * pitch_);
  Value* b_base = mul(buffer, kCols * pitch_);
  Value* matrix = b_.CreateLShr(lane_, c64(3));
  Value* a_row = add(mul(tile_warp_, warp_rows_), b_.CreateAnd(lane_, c64(15)));
  Value* a_col = mul(b_.CreateLShr(lane_, c64(4)), 16);
  Value* b_row = add(b_.CreateAnd(lane_, c64(7)), mul(b_.CreateLShr(matrix, c64(1)), 8));
  Value* b_col = mul(b_.CreateAnd(matrix, c64(1)), 16);
  // TF32 operands of f32 `x` (bits in an i32): {x} with the call's tf32, else {big, small}.
  auto split = [&](Value* bits) -> std::vector<Value*> {
    Value* x = b_.CreateBitCast(bits, f32());
    Value* big = tensor_core::tf32(b_, x);
    if (c_.tf32) return {big};
    // An infinite big part (x infinite, or rounded up past f32's range) has no small part: 0,
    // not inf - inf.
    Value* big_value = b_.CreateBitCast(big, f32());
    Value* finite = b_.CreateFCmpOEQ(b_.CreateFSub(big_value, big_value), f(0));
    Value* small = tensor_core::tf32(b_, b_.CreateFSub(x, big_value));
    return {big, b_.CreateSelect(finite, small, b_.getInt32(0))};
  };
  // acc + a·(b0, b1) for 32 bytes of the reduction.
  auto product = [&](const Quad& a, Value* b0, Value* b1, const Quad& acc) {
    if (half()) return tensor_core::mma_m16n8k16(b_, c_.dtype, a, b0, b1, acc);
    std::vector<Value*> as[4];
    for (size_t i = 0; i < 4; ++i) as[i] = split(a[i]);
    const std::vector<Value*> w0 = split(b0), w1 = split(b1);
    Quad sum = acc;
    auto part = [&](size_t ai, size_t wi) {
      sum = tensor_core::mma_m16n8k8_tf32(b_, {as[0][ai], as[1][ai], as[2][ai], as[3][ai]}, w0[wi],
                                          w1[wi], sum);
    };
    if (!c_.tf32) part(1, 0), part(0, 1);  // the small terms first
    part(0, 0);
    return sum;
  };
  // This warp's 32-byte parts of the step: every one, or its slice's of every slices_-th.
  for (int64_t j = 0; j < step_bytes_ / 32 / slices_; ++j) {
    Value* part = slices_ > 1 ? mul(add(slice_, c64(j * slices_)), 32) : c64(j * 32);
    std::vector<Quad> a(static_cast<size_t>(row_tiles_));
    for (int64_t mt = 0; mt < row_tiles_; ++mt) {
      Value* byte = add(mul(add(a_row, c64(mt * 16)), pitch_), add(a_col, part));
      a[static_cast<size_t>(mt)] =
          tensor_core::load_matrices(b_, shared_at(a_shared_, add(a_base, byte)), false);
    }
    for (int64_t nt = 0; nt < kColTiles; nt += 2) {
      Value* byte = add(mul(add(b_row, c64(nt * 8)), pitch_), add(b_col, part));
      const Quad w = tensor_core::load_matrices(b_, shared_at(b_shared_, add(b_base, byte)), false);
      for (int64_t mt = 0; mt < row_tiles_; ++mt) {
        const Quad& am = a[static_cast<size_t>(mt)];
        set_acc(mt, nt, product(am, w[0], w[1], acc(mt, nt)));
        set_acc(mt, nt + 1, product(am, w[2], w[3], acc(mt, nt + 1)));
      }
    }
  }
}

// Each accumulator to its place at `address(m, channel of the group)` as `type` (f32, or the
// call's 16-bit type): rows g and g+8 of each fragment, channels 2q and 2q+1, as one store of
// the pair where `pairs` (both channels or neither: kg_ is even). Stores outside the call go
// to a shared scratch word of the thread's instead (tensor_core::discard_slot).
void Emitter::store_accumulators(bool pairs, llvm::Type* type,
                                 const std::function<Value*(Value*, Value*)>& address) {
  Value* discard_at = tensor_core::discard_slot(b_, m_, t_, "conv_discard", threads_, 8, tid_);
  const bool narrow = type != f32();
  const uint64_t bytes = narrow ? 2 : 4;
  const int64_t rows = c_.n * c_.out_h * c_.out_w;
  Value* col0 = add(first_col_, mul(quad_, 2));
  for (int64_t mt = 0; mt < row_tiles_; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      Value* m = add(first_row_, add(add(mul(tile_warp_, warp_rows_), c64(mt * 16 + h * 8)), g_));
      Value* inside = b_.CreateICmpULT(m, c64(rows));
      for (int64_t nt = 0; nt < kColTiles; ++nt) {
        const Quad q = acc(mt, nt);
        Value* col = add(col0, c64(nt * 8));
        Value* v[2] = {q[static_cast<size_t>(2 * h)], q[static_cast<size_t>(2 * h + 1)]};
        if (pairs) {
          Value* ok = b_.CreateAnd(inside, b_.CreateICmpULT(col, c64(kg_)));
          Value* pair = nullptr;
          if (narrow) {
            pair = tensor_core::pack(b_, c_.dtype, v[0], v[1]);
          } else {
            pair = llvm::UndefValue::get(llvm::FixedVectorType::get(f32(), 2));
            pair = b_.CreateInsertElement(b_.CreateInsertElement(pair, v[0], uint64_t{0}), v[1],
                                          uint64_t{1});
          }
          b_.CreateAlignedStore(pair, b_.CreateSelect(ok, address(m, col), discard_at),
                                llvm::Align(2 * bytes));
          continue;
        }
        for (int64_t e = 0; e < 2; ++e) {
          Value* channel = add(col, c64(e));
          Value* ok = b_.CreateAnd(inside, b_.CreateICmpULT(channel, c64(kg_)));
          Value* value = narrow ? b_.CreateFPTrunc(v[e], type) : v[e];
          b_.CreateAlignedStore(value, b_.CreateSelect(ok, address(m, channel), discard_at),
                                llvm::Align(bytes));
        }
      }
    }
}

// The slices' sums added into the first slice's warps through shared memory (the ring, now
// unread: every warp is past its last step), the other warps done. Lane-major, so a warp's
// 32 stores or loads of one accumulator are 32 consecutive words.
void Emitter::combine_slices() {
  llvm::LLVMContext& ctx = m_.getContext();
  const int64_t accumulators = row_tiles_ * kColTiles * 4;
  const auto word = [&](Value* slice, int64_t a) {
    Value* warp = add(mul(b_.CreateSub(slice, c64(1)), s_.tile.warps_per_slice()), tile_warp_);
    return at(a_tile_, mul(add(mul(add(mul(warp, accumulators), c64(a)), 32), lane_), 4));
  };
  t_.barrier(b_);
  auto* give = llvm::BasicBlock::Create(ctx, "slice_give", fn_);
  auto* given = llvm::BasicBlock::Create(ctx, "slice_given", fn_);
  b_.CreateCondBr(b_.CreateICmpNE(slice_, c64(0)), give, given);
  b_.SetInsertPoint(give);
  for (int64_t a = 0; a < accumulators; ++a)
    b_.CreateAlignedStore(b_.CreateLoad(f32(), acc_slot(a)), word(slice_, a), llvm::Align(4));
  b_.CreateBr(given);
  b_.SetInsertPoint(given);
  t_.barrier(b_);
  auto* take = llvm::BasicBlock::Create(ctx, "slice_take", fn_);
  auto* done = llvm::BasicBlock::Create(ctx, "slice_done", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(slice_, c64(0)), take, done);
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
  b_.SetInsertPoint(take);
  for (int64_t slice = 1; slice < slices_; ++slice)
    for (int64_t a = 0; a < accumulators; ++a) {
      Value* other = b_.CreateAlignedLoad(f32(), word(c64(slice), a), llvm::Align(4));
      b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f32(), acc_slot(a)), other), acc_slot(a));
    }
}

// The sums rounded into y.
void Emitter::write_y() {
  llvm::Type* type = !half()                        ? f32()
                     : c_.dtype == kir::DType::BF16 ? b_.getBFloatTy()
                                                    : b_.getHalfTy();
  const int64_t positions = c_.out_h * c_.out_w;
  store_accumulators(s_.pair_y, type, [&](Value* m, Value* col) {
    Value* image = b_.CreateUDiv(m, c64(positions));
    Value* p = b_.CreateURem(m, c64(positions));
    Value* row_at = add(add(mul(image, c_.y_stride[0]), mul(group_, kg_ * c_.y_stride[1])),
                        add(mul(b_.CreateUDiv(p, c64(c_.out_w)), c_.y_stride[2]),
                            mul(b_.CreateURem(p, c64(c_.out_w)), c_.y_stride[3])));
    return element(y_, add(row_at, mul(col, c_.y_stride[1])));
  });
}

// A split block's sums into its part of the f32 partial sums (conv_split.h), laid out as y is:
// two channels per store where channels are innermost.
void Emitter::write_partials() {
  const int64_t channel_stride = conv_partial_stride(s_, true);
  const int64_t row_stride = conv_partial_stride(s_, false);
  Value* part = mul(split_, c_.n * c_.out_h * c_.out_w * c_.k);
  store_accumulators(channel_stride == 1 && kg_ % 2 == 0, f32(), [&](Value* m, Value* col) {
    Value* channel = add(mul(group_, kg_), col);
    Value* index = add(part, add(mul(m, row_stride), mul(channel, channel_stride)));
    return b_.CreateGEP(f32(), partials_, b_.CreateZExt(index, i64()));
  });
}

void Emitter::emit() {
  llvm::LLVMContext& ctx = m_.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr}, false);
  fn_ = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kConvKernel, m_);
  t_.mark_kernel(*fn_, static_cast<unsigned>(threads_));
  x_ = fn_->getArg(0), w_ = fn_->getArg(1), y_ = fn_->getArg(2), partials_ = fn_->getArg(3);
  llvm::GlobalVariable* ring = tensor_core::dynamic_shared_array(m_, t_, "conv_ring");
  a_tile_ = ring;
  b_tile_ = llvm::ConstantExpr::getInBoundsGetElementPtr(
      b_.getInt8Ty(), ring, b_.getInt64(static_cast<uint64_t>(stages_ * rows_ * pitch_)));

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn_);
  b_.SetInsertPoint(entry);
  if (c_.out_h * c_.out_w == 0 || kg_ == 0) {  // no output element (never launched)
    b_.CreateRetVoid();
    return;
  }
  acc_ =
      b_.CreateAlloca(f32(), b_.getInt32(static_cast<uint32_t>(row_tiles_ * kColTiles * 4)), "acc");
  a_shared_ = tensor_core::shared_address(b_, a_tile_);
  b_shared_ = tensor_core::shared_address(b_, b_tile_);
  for (int64_t mt = 0; mt < row_tiles_; ++mt)
    for (int64_t nt = 0; nt < kColTiles; ++nt) set_acc(mt, nt, {f(0), f(0), f(0), f(0)});

  tid_ = b_.CreateZExtOrTrunc(t_.thread_id(b_), ix());
  lane_ = b_.CreateAnd(tid_, c64(31));
  Value* warp = b_.CreateLShr(tid_, c64(5));
  tile_warp_ = b_.CreateURem(warp, c64(s_.tile.warps_per_slice()));
  slice_ = b_.CreateUDiv(warp, c64(s_.tile.warps_per_slice()));
  g_ = b_.CreateLShr(lane_, c64(2));
  quad_ = b_.CreateAnd(lane_, c64(3));
  first_row_ = mul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), rows_);
  first_col_ = mul(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y), kCols);
  // Blocks along z: groups, each cut in s_.splits parts of the reduction.
  Value* z = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z);
  group_ = s_.splits > 1 ? b_.CreateUDiv(z, c64(s_.splits)) : z;
  split_ = s_.splits > 1 ? b_.CreateURem(z, c64(s_.splits)) : c64(0);

  // The rows this thread copies: output positions first_row_ + row, weight rows (output
  // channels) first_col_ + row.
  const int64_t positions = c_.out_h * c_.out_w;
  x_share_ = share(s_.vector_x, rows_);
  for (Value* row : x_share_.rows) {
    Value* m = add(first_row_, row);
    Value* image = b_.CreateUDiv(m, c64(positions));
    Value* p = b_.CreateURem(m, c64(positions));
    PatchRow r;
    r.row = row;
    r.valid = b_.CreateICmpULT(m, c64(c_.n * positions));
    r.ih0 = b_.CreateSub(mul(b_.CreateUDiv(p, c64(c_.out_w)), c_.stride_h), c64(c_.pad_h));
    r.iw0 = b_.CreateSub(mul(b_.CreateURem(p, c64(c_.out_w)), c_.stride_w), c64(c_.pad_w));
    // Padding makes ih0 and iw0 negative: the sum wraps, and is right for every tap inside.
    r.base = add(
        add(c64(c_.x_offset), add(mul(image, c_.x_stride[0]), mul(group_, cg_ * c_.x_stride[1]))),
        add(mul(r.ih0, c_.x_stride[2]), mul(r.iw0, c_.x_stride[3])));
    x_rows_.push_back(r);
  }
  w_share_ = share(s_.vector_w, kCols);
  for (Value* row : w_share_.rows) {
    Value* channel = add(first_col_, row);
    PatchRow r;
    r.row = row;
    r.valid = b_.CreateICmpULT(channel, c64(kg_));
    r.base = mul(add(mul(group_, kg_), channel), c_.w_stride[0]);
    w_rows_.push_back(r);
  }

  const int64_t tiles = (reduction_ + step_ - 1) / step_;
  if (tiles == 0) {  // an empty sum: zeros
    write_y();
    b_.CreateRetVoid();
    return;
  }
  auto* head = llvm::BasicBlock::Create(ctx, "tile", fn_);
  auto* body = llvm::BasicBlock::Create(ctx, "tile_body", fn_);
  auto* done = llvm::BasicBlock::Create(ctx, "write", fn_);
  const auto fill = [&](Value* tile, Value* buffer) {
    copy_x(tile, buffer);
    copy_w(tile, buffer);
    tensor_core::commit_copies(b_);
  };
  // This block's steps: first + i for i < count (every step where the reduction is not split;
  // the host cuts no part empty).
  const int64_t per_split = (tiles + s_.splits - 1) / s_.splits;
  Value* first = mul(split_, per_split);
  Value* count = s_.splits > 1
                     ? b_.CreateSelect(b_.CreateICmpULT(c64(tiles), add(first, c64(per_split))),
                                       b_.CreateSub(c64(tiles), first), c64(per_split))
                     : c64(tiles);
  Value* last = b_.CreateSub(add(first, count), c64(1));
  const auto clamped = [&](Value* i) {
    return b_.CreateSelect(b_.CreateICmpULT(i, count), add(first, i), last);
  };
  for (int64_t stage = 0; stage + 1 < stages_; ++stage) fill(clamped(c64(stage)), c64(stage));
  llvm::BasicBlock* prologue = b_.GetInsertBlock();  // element copies branch
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* i = b_.CreatePHI(ix(), 2, "i");
  i->addIncoming(c64(0), prologue);
  b_.CreateCondBr(b_.CreateICmpSLT(i, count), body, done);

  b_.SetInsertPoint(body);
  // Once step i's copies have landed and every thread is past it (one barrier: it also means
  // every thread is done computing on step i - 1), step i + stages - 1 starts filling step
  // i - 1's buffer (past the end, the last step again: no branch), and step i is computed.
  tensor_core::wait_copies(b_, static_cast<int>(stages_ - 2));
  t_.barrier(b_);
  Value* ahead = add(i, c64(stages_ - 1));
  fill(clamped(ahead), b_.CreateURem(ahead, c64(stages_)));
  compute(b_.CreateURem(i, c64(stages_)));
  i->addIncoming(add(i, c64(1)), b_.GetInsertBlock());
  b_.CreateBr(head);

  b_.SetInsertPoint(done);
  tensor_core::wait_copies(b_, -1);  // none left in flight
  if (slices_ > 1) combine_slices();
  if (s_.splits > 1)
    write_partials();
  else
    write_y();
  b_.CreateRetVoid();
}

bool aligned(uint64_t address, int64_t bytes) {
  return address % static_cast<uint64_t>(bytes) == 0;
}

}  // namespace

bool conv_kernel_takes(const ConvCall& call) {
  return call.dtype == kir::DType::F32 || call.dtype == kir::DType::BF16 ||
         call.dtype == kir::DType::F16;
}

ConvKernelSpec conv_kernel_spec(const ConvCall& call, const ConvTile& tile, int64_t splits,
                                uint64_t x, uint64_t w, uint64_t y) {
  ConvKernelSpec spec{call, tile};
  // As many parts as leave none empty, and as one launch's blocks along z take.
  if (call.groups > 0) splits = std::min(splits, std::max<int64_t>(1, 65535 / call.groups));
  // The partial sums are indexed in 32 bits.
  while (splits > 1 && splits * call.n * call.out_h * call.out_w * call.k >= (int64_t{1} << 31))
    --splits;
  const int64_t steps = conv_steps(spec);
  if (splits > 1 && steps > 1) {
    const int64_t per_split = (steps + std::min(splits, steps) - 1) / std::min(splits, steps);
    spec.splits = (steps + per_split - 1) / per_split;
  }
  const int64_t size = kir::dtype_size(call.dtype), v = 16 / size;
  const int64_t cg = call.groups > 0 ? call.c / call.groups : 0;
  const auto whole = [&](std::initializer_list<int64_t> values, int64_t of) {
    for (int64_t value : values)
      if (value % of) return false;
    return true;
  };
  spec.vector_x = call.x_stride[1] == 1 && cg % v == 0 &&
                  whole({call.x_stride[0], call.x_stride[2], call.x_stride[3]}, v) &&
                  aligned(x + static_cast<uint64_t>(call.x_offset * size), 16);
  spec.vector_w = call.w_stride[1] == 1 && cg % v == 0 &&
                  whole({call.w_stride[0], call.w_stride[2], call.w_stride[3]}, v) &&
                  aligned(w, 16);
  // Every index the kernel forms: positions, elements of each buffer, and the input rows and
  // columns a tap reaches (padding, strides and dilation included).
  int64_t largest = call.n * call.out_h * call.out_w + tile.rows;
  for (int64_t bytes : call.buffer_bytes()) largest = std::max(largest, bytes / size);
  for (int64_t reach : {call.stride_h * call.out_h + call.dil_h * call.r + call.pad_h + call.h,
                        call.stride_w * call.out_w + call.dil_w * call.s + call.pad_w + call.w})
    largest = std::max(largest, reach);
  spec.index32 = largest < (int64_t{1} << 31);
  spec.pair_y = call.y_stride[1] == 1 && call.groups > 0 && (call.k / call.groups) % 2 == 0 &&
                whole({call.y_stride[0], call.y_stride[2], call.y_stride[3]}, 2) &&
                aligned(y, 2 * size);
  return spec;
}

std::string ConvKernelSpec::key() const {
  return call.shape_key() + ",tile=" + tile.name() + ",x_offset=" + std::to_string(call.x_offset) +
         (index32 ? ",i32" : "") + (vector_x ? ",vx" : "") + (vector_w ? ",vw" : "") +
         (pair_y ? ",py" : "") + (splits > 1 ? ",splits=" + std::to_string(splits) : "");
}

void emit_conv_kernel(llvm::Module& m, const NvptxTarget& target, const ConvKernelSpec& spec) {
  Emitter(m, target, spec).emit();
  if (spec.splits > 1) emit_conv_finish_kernel(m, target, spec);
}

std::array<int64_t, 3> conv_kernel_grid(const ConvKernelSpec& spec) {
  const ConvCall& call = spec.call;
  const int64_t kg = call.groups > 0 ? call.k / call.groups : 0;
  const int64_t rows = spec.tile.rows;
  return {(call.n * call.out_h * call.out_w + rows - 1) / rows, (kg + kCols - 1) / kCols,
          call.groups * spec.splits};
}

}  // namespace kiln::ptx
