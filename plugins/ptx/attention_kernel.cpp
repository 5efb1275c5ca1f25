#include "plugins/ptx/attention_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "plugins/ptx/tensor_core.h"

namespace kiln::ptx {
namespace {

using kir_support::AttentionCall;
using kir_support::AttentionMask;
using kir_support::OperandLayout;
using llvm::Value;

constexpr int64_t kPad = kAttentionRowPad;
constexpr int64_t kRowTile = 16;  // query rows of one mma fragment
const double kLog2e = 1.4426950408889634;

using tensor_core::Quad;

class Emitter {
 public:
  Emitter(llvm::Module& m, const NvptxTarget& target, const AttentionCall& call,
          const AttentionTiling& tiling)
      : m_(m),
        t_(target),
        c_(call),
        b_(m.getContext()),
        keys_(tiling.keys),
        block_rows_(attention_block_rows(tiling)),
        row_blocks_(attention_row_blocks(call, tiling)),
        row_tiles_(tiling.warp_rows / kRowTile),
        heavy_first_(tiling.heavy_first) {}
  void emit();

 private:
  llvm::Type* f32() { return b_.getFloatTy(); }
  llvm::Type* i32() { return b_.getInt32Ty(); }
  llvm::Type* i64() { return b_.getInt64Ty(); }
  Value* c64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  Value* f(double v) { return llvm::ConstantFP::get(f32(), v); }
  Value* minus_inf() { return f(-std::numeric_limits<double>::infinity()); }
  Value* min64(Value* a, Value* v) { return b_.CreateSelect(b_.CreateICmpSLT(a, v), a, v); }

  Value* inline_asm(llvm::Type* result, const std::string& text, const std::string& constraints,
                    const std::vector<Value*>& args) {
    return tensor_core::inline_asm(b_, result, text, constraints, args);
  }
  // acc + a·b on tensor cores (a 16x16, b 16x8, acc 16x8 in f32).
  Quad mma(const Quad& a, Value* b0, Value* b1, const Quad& acc) {
    return tensor_core::mma_m16n8k16(b_, c_.dtype, a, b0, b1, acc);
  }
  // The 32-bit shared-memory address of element `element` of `tile`.
  Value* shared_address(Value* tile, Value* element) {
    return tensor_core::shared_address(b_, at(tile, element));
  }
  // Elements of one k or v buffer (there are two of each: one computed on, one filling).
  int64_t tile_elements() const { return keys_ * (c_.head_dim + kPad); }
  // The mma b operands of four 8x8 matrices (tensor_core::load_matrices) from buffer_ on.
  Quad load_matrices(Value* tile, Value* element, bool transposed) {
    return tensor_core::load_matrices(b_, shared_address(tile, b_.CreateAdd(element, buffer_)),
                                      transposed);
  }
  Value* exp2(Value* x) { return inline_asm(f32(), "ex2.approx.ftz.f32 $0, $1;", "=f,f", {x}); }
  Value* pack(Value* low, Value* high) { return tensor_core::pack(b_, c_.dtype, low, high); }
  Value* shuffle_xor(Value* x, unsigned lanes) {
    return b_.CreateBitCast(t_.shuffle_xor(b_, b_.CreateBitCast(x, i32()), lanes), f32());
  }
  // `x` combined over the 4 lanes of a quad (which hold one fragment row between them).
  Value* quad_max(Value* x) {
    for (unsigned lanes : {1u, 2u}) x = b_.CreateMaxNum(x, shuffle_xor(x, lanes));
    return x;
  }
  Value* quad_sum(Value* x) {
    for (unsigned lanes : {1u, 2u}) x = b_.CreateFAdd(x, shuffle_xor(x, lanes));
    return x;
  }
  // The byte address of element `element` (i64) of a buffer of 2-byte elements.
  Value* at(Value* base, Value* element, int64_t size = 2) {
    return b_.CreateGEP(b_.getInt8Ty(), base, b_.CreateMul(element, c64(size)));
  }
  // Element (row, col) of q, k or v for this block's batch and head.
  Value* element(Value* base, const OperandLayout& l, Value* row, Value* col) {
    return b_.CreateAdd(base, b_.CreateAdd(b_.CreateMul(row, c64(l.row)), col));
  }
  llvm::GlobalVariable* shared(const std::string& name, int64_t bytes) {
    return tensor_core::shared_array(m_, t_, name, bytes);
  }
  // Alloca'd state (promoted to registers: every index is a constant).
  Value* slot(Value* array, int64_t i) {
    return b_.CreateConstGEP1_64(f32(), array, static_cast<uint64_t>(i));
  }
  Value* get(Value* array, int64_t i) { return b_.CreateLoad(f32(), slot(array, i)); }
  void set(Value* array, int64_t i, Value* v) { b_.CreateStore(v, slot(array, i)); }

  // Fragments by row tile of this warp, then by 8 keys (scores) or 16 dims (q).
  using Fragments = std::vector<std::vector<Quad>>;
  // The output accumulator's slot for row tile `t`, 8-dim group `d`, fragment entry `i`.
  int64_t out_slot(int64_t t, int64_t d, int64_t i) const {
    return (t * (c_.head_dim / 8) + d) * 4 + i;
  }

  void load_tiles(Value* j, Value* parity);
  Fragments scores(const Fragments& q);
  Value* masked(Value* s, Value* row, Value* col);
  void online_softmax(std::vector<Quad>& s, int64_t t);
  void tile(Value* j, const Fragments& q, const std::vector<Value*>& rows, bool mask);
  void write_rows(const std::vector<Value*>& rows);

  llvm::Module& m_;
  const NvptxTarget& t_;
  const AttentionCall& c_;
  llvm::IRBuilder<> b_;
  const int64_t keys_;        // keys per shared-memory tile
  const int64_t block_rows_;  // query rows per block
  const int64_t row_blocks_;  // blocks per batch and head
  const int64_t row_tiles_;   // a warp's query rows, in tiles of kRowTile
  const bool heavy_first_;    // AttentionTiling::heavy_first
  llvm::Function* fn_ = nullptr;
  Value *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *mask_ = nullptr, *out_ = nullptr;
  Value *tid_ = nullptr, *lane_ = nullptr, *g_ = nullptr;
  Value* t2_ = nullptr;  // twice the lane's place in its quad
  Value *q_base_ = nullptr, *k_base_ = nullptr, *v_base_ = nullptr, *mask_base_ = nullptr;
  Value* out_base_ = nullptr;
  llvm::GlobalVariable *k_tile_ = nullptr, *v_tile_ = nullptr;
  Value *m_state_ = nullptr, *l_state_ = nullptr, *o_state_ = nullptr;  // row max, sum, output
  Value* buffer_ = nullptr;  // the first element of the k and v buffers computed on
};

// Starts copying keys and values [j*keys, (j+1)*keys) into shared buffer `parity`, row-major
// [key][dim], 16 bytes per copy (cp.async: the copies run while the last tile is computed).
// Rows past the keys repeat the last (their scores are hidden); where the chunks do not divide
// among the threads, the last is copied more than once.
void Emitter::load_tiles(Value* j, Value* parity) {
  const int64_t e = c_.head_dim, chunks = e / 8, total = keys_ * chunks;
  Value* buffer = b_.CreateMul(parity, c64(tile_elements()));
  for (int64_t it = 0; it < (total + kAttentionThreads - 1) / kAttentionThreads; ++it) {
    Value* chunk = min64(b_.CreateAdd(tid_, c64(it * kAttentionThreads)), c64(total - 1));
    Value* r = b_.CreateUDiv(chunk, c64(chunks));
    Value* col = b_.CreateMul(b_.CreateURem(chunk, c64(chunks)), c64(8));
    Value* key = min64(b_.CreateAdd(b_.CreateMul(j, c64(keys_)), r), c64(c_.kv_len - 1));
    Value* to = b_.CreateAdd(buffer, b_.CreateAdd(b_.CreateMul(r, c64(e + kPad)), col));
    for (const auto& [from, base, layout, tile] :
         {std::tuple{k_, k_base_, &c_.k, k_tile_}, std::tuple{v_, v_base_, &c_.v, v_tile_}}) {
      Value* source = b_.CreatePtrToInt(at(from, element(base, *layout, key, col)), i64());
      tensor_core::copy_async(b_, shared_address(tile, to), source, 16);
    }
  }
  tensor_core::commit_copies(b_);
}

// This warp's rows of q kᵀ against the tile's keys: per row tile, one fragment per 8 keys.
// Each k operand read from shared memory serves every row tile of the warp.
Emitter::Fragments Emitter::scores(const Fragments& q) {
  const int64_t e = c_.head_dim;
  Fragments s(static_cast<size_t>(row_tiles_),
              std::vector<Quad>(static_cast<size_t>(keys_ / 8), Quad{f(0), f(0), f(0), f(0)}));
  // Lane l addresses row l%8 of matrix l/8: keys of group n (+1 for matrices 2, 3), dims
  // +8 for matrices 1, 3.
  Value* matrix = b_.CreateLShr(lane_, c64(3));
  Value* key = b_.CreateAdd(b_.CreateAnd(lane_, c64(7)),
                            b_.CreateMul(b_.CreateLShr(matrix, c64(1)), c64(8)));
  Value* dim = b_.CreateMul(b_.CreateAnd(matrix, c64(1)), c64(8));
  for (int64_t n = 0; n < keys_ / 8; n += 2)
    for (int64_t d = 0; d < e / 16; ++d) {
      Value* row = b_.CreateAdd(key, c64(n * 8));
      const Quad k = load_matrices(
          k_tile_, b_.CreateAdd(b_.CreateMul(row, c64(e + kPad)), b_.CreateAdd(dim, c64(d * 16))),
          false);
      const auto i = static_cast<size_t>(n);
      for (size_t t = 0; t < s.size(); ++t) {
        const Quad& a = q[t][static_cast<size_t>(d)];
        s[t][i] = mma(a, k[0], k[1], s[t][i]);
        s[t][i + 1] = mma(a, k[2], k[3], s[t][i + 1]);
      }
    }
  return s;
}

// Score `s` of query `row` and key `col` (i64, unclamped), scaled to the exp2 domain, with the
// mask applied: -inf where the key is past the end, after the row (causal), or masked out.
Value* Emitter::masked(Value* s, Value* row, Value* col) {
  Value* x = b_.CreateFMul(s, f(c_.scale * kLog2e));
  Value* hidden = b_.CreateICmpSGE(col, c64(c_.kv_len));
  if (c_.causal) hidden = b_.CreateOr(hidden, b_.CreateICmpSGT(col, row));
  if (c_.mask != AttentionMask::None) {
    Value* r = min64(row, c64(c_.q_len - 1));
    Value* k = min64(col, c64(c_.kv_len - 1));
    Value* i = b_.CreateAdd(mask_base_, b_.CreateAdd(b_.CreateMul(r, c64(c_.mask_at.row)),
                                                     b_.CreateMul(k, c64(c_.mask_at.col))));
    if (c_.mask == AttentionMask::Keep) {
      Value* keep = b_.CreateLoad(b_.getInt8Ty(), at(mask_, i, 1));
      hidden = b_.CreateOr(hidden, b_.CreateICmpEQ(keep, b_.getInt8(0)));
    } else {
      llvm::Type* half = c_.dtype == kir::DType::BF16 ? b_.getBFloatTy() : b_.getHalfTy();
      Value* add = b_.CreateFPExt(b_.CreateAlignedLoad(half, at(mask_, i), llvm::Align(2)), f32());
      x = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32()}, {add, f(kLog2e), x});
      // bf16's finfo.min (Hugging Face's padding value) times log2(e) is past f32's range:
      // kept finite, as PyTorch keeps score + finfo.min, so a row masked so throughout
      // averages its values as PyTorch's does, where -inf would hide it. (f16's cannot be.)
      if (c_.dtype == kir::DType::BF16)
        x = b_.CreateMaxNum(x, f(-std::numeric_limits<float>::max()));
    }
  }
  return b_.CreateSelect(hidden, minus_inf(), x);
}

// The online softmax update of row tile `t`'s scores `s` (fragment entries 0-1: row g, 2-3:
// row g+8): the running max, the probabilities in place of the scores, the running sum, and
// the output so far rescaled.
void Emitter::online_softmax(std::vector<Quad>& s, int64_t t) {
  const int64_t outs = c_.head_dim / 8;
  for (int64_t r = 0; r < 2; ++r) {
    const int64_t state = 2 * t + r;
    const auto first = static_cast<size_t>(2 * r);
    Value* tile_max = minus_inf();
    for (const Quad& x : s)
      tile_max = b_.CreateMaxNum(tile_max, b_.CreateMaxNum(x[first], x[first + 1]));
    Value* old_max = get(m_state_, state);
    Value* new_max = b_.CreateMaxNum(old_max, quad_max(tile_max));
    // A row with every score hidden so far subtracts 0, not -inf (which would give NaN).
    Value* ref = b_.CreateSelect(b_.CreateFCmpOEQ(new_max, minus_inf()), f(0), new_max);
    Value* rescale = exp2(b_.CreateFSub(old_max, ref));
    Value* sum = f(0);
    for (Quad& x : s)
      for (size_t i = first; i < first + 2; ++i) {
        x[i] = exp2(b_.CreateFSub(x[i], ref));
        sum = b_.CreateFAdd(sum, x[i]);
      }
    set(l_state_, state, b_.CreateFAdd(b_.CreateFMul(get(l_state_, state), rescale), sum));
    set(m_state_, state, new_max);
    for (int64_t d = 0; d < outs; ++d)
      for (int64_t i = 2 * r; i < 2 * r + 2; ++i)
        set(o_state_, out_slot(t, d, i), b_.CreateFMul(get(o_state_, out_slot(t, d, i)), rescale));
  }
}

// One tile of keys: scores, the online softmax update, p·v. Without `mask` the tile holds no
// hidden score (every key exists and, causal, none is after a row of the block).
void Emitter::tile(Value* j, const Fragments& q, const std::vector<Value*>& rows, bool mask) {
  Fragments s = scores(q);
  for (size_t t = 0; t < s.size(); ++t)
    for (size_t n = 0; n < s[t].size(); ++n)
      for (size_t i = 0; i < 4; ++i) {
        if (!mask) {
          s[t][n][i] = b_.CreateFMul(s[t][n][i], f(c_.scale * kLog2e));
          continue;
        }
        Value* col = b_.CreateAdd(b_.CreateMul(j, c64(keys_)),
                                  b_.CreateAdd(t2_, c64(static_cast<int64_t>(n * 8 + i % 2))));
        s[t][n][i] = masked(s[t][n][i], rows[2 * t + i / 2], col);
      }
  for (size_t t = 0; t < s.size(); ++t) online_softmax(s[t], static_cast<int64_t>(t));
  // p·v: the score fragments of two 8-key groups are the a operand of one 16-key step; v's
  // b operands come transposed from its row-major tile, each serving every row tile. Lane l
  // addresses row l%8 of matrix l/8: keys +8 for matrices 1, 3, dims of the next 8-dim group
  // for matrices 2, 3.
  const int64_t outs = c_.head_dim / 8;
  Value* matrix = b_.CreateLShr(lane_, c64(3));
  Value* key =
      b_.CreateAdd(b_.CreateAnd(lane_, c64(7)), b_.CreateMul(b_.CreateAnd(matrix, c64(1)), c64(8)));
  Value* dim = b_.CreateMul(b_.CreateLShr(matrix, c64(1)), c64(8));
  for (int64_t kc = 0; kc < keys_ / 16; ++kc) {
    std::vector<Quad> p;
    for (const std::vector<Quad>& st : s) {
      const Quad& lo = st[static_cast<size_t>(2 * kc)];
      const Quad& hi = st[static_cast<size_t>(2 * kc + 1)];
      p.push_back({pack(lo[0], lo[1]), pack(lo[2], lo[3]), pack(hi[0], hi[1]), pack(hi[2], hi[3])});
    }
    Value* row = b_.CreateMul(b_.CreateAdd(key, c64(kc * 16)), c64(c_.head_dim + kPad));
    for (int64_t d = 0; d < outs; d += 2) {
      const Quad v = load_matrices(v_tile_, b_.CreateAdd(row, b_.CreateAdd(dim, c64(d * 8))), true);
      for (int64_t t = 0; t < row_tiles_; ++t)
        for (int64_t h = 0; h < 2; ++h) {
          Quad acc;
          for (int64_t i = 0; i < 4; ++i)
            acc[static_cast<size_t>(i)] = get(o_state_, out_slot(t, d + h, i));
          acc = mma(p[static_cast<size_t>(t)], v[static_cast<size_t>(2 * h)],
                    v[static_cast<size_t>(2 * h + 1)], acc);
          for (int64_t i = 0; i < 4; ++i)
            set(o_state_, out_slot(t, d + h, i), acc[static_cast<size_t>(i)]);
        }
    }
  }
}

// Each row divided by its sum and written. Rows past the end write to a scratch word of this
// thread's in shared memory instead (tensor_core::discard_slot; the kernel hung on the H200
// with 5 query rows when the last rows' stores were a branch).
void Emitter::write_rows(const std::vector<Value*>& rows) {
  Value* discard_at =
      tensor_core::discard_slot(b_, m_, t_, "attention_discard", kAttentionThreads, 4, tid_);
  const int64_t e = c_.head_dim;
  std::vector<Value*> inverse;
  // A row with every score hidden (sum 0) is 0, as PyTorch's attention gives it.
  for (int64_t state = 0; state < 2 * row_tiles_; ++state) {
    Value* sum = quad_sum(get(l_state_, state));
    inverse.push_back(b_.CreateSelect(b_.CreateFCmpOGT(sum, f(0)), b_.CreateFDiv(f(1), sum), f(0)));
  }
  for (int64_t state = 0; state < 2 * row_tiles_; ++state) {
    const int64_t t = state / 2, r = state % 2;
    Value* row = rows[static_cast<size_t>(state)];
    Value* inside = b_.CreateICmpSLT(row, c64(c_.q_len));
    Value* row_at = b_.CreateAdd(out_base_, b_.CreateMul(row, c64(c_.out.row)));
    for (int64_t d = 0; d < e / 8; ++d) {
      Value* scale = inverse[static_cast<size_t>(state)];
      Value* x0 = b_.CreateFMul(get(o_state_, out_slot(t, d, 2 * r)), scale);
      Value* x1 = b_.CreateFMul(get(o_state_, out_slot(t, d, 2 * r + 1)), scale);
      Value* i = b_.CreateAdd(row_at, b_.CreateAdd(t2_, c64(d * 8)));
      b_.CreateAlignedStore(pack(x0, x1), b_.CreateSelect(inside, at(out_, i), discard_at),
                            llvm::Align(4));
    }
  }
}

void Emitter::emit() {
  llvm::LLVMContext& ctx = m_.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr, ptr}, false);
  fn_ = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kAttentionKernel, m_);
  t_.mark_kernel(*fn_, kAttentionThreads);
  q_ = fn_->getArg(0), k_ = fn_->getArg(1), v_ = fn_->getArg(2), mask_ = fn_->getArg(3);
  out_ = fn_->getArg(4);
  const int64_t e = c_.head_dim;
  k_tile_ = shared("attention_keys", 2 * tile_elements() * 2);
  v_tile_ = shared("attention_values", 2 * tile_elements() * 2);

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn_);
  b_.SetInsertPoint(entry);
  const auto slots = [&](int64_t n) { return b_.getInt32(static_cast<uint32_t>(n)); };
  m_state_ = b_.CreateAlloca(f32(), slots(2 * row_tiles_), "row_max");
  l_state_ = b_.CreateAlloca(f32(), slots(2 * row_tiles_), "row_sum");
  const int64_t out_slots = out_slot(row_tiles_, 0, 0);
  o_state_ = b_.CreateAlloca(f32(), slots(out_slots), "out");
  for (int64_t r = 0; r < 2 * row_tiles_; ++r)
    set(m_state_, r, minus_inf()), set(l_state_, r, f(0));
  for (int64_t i = 0; i < out_slots; ++i) set(o_state_, i, f(0));

  tid_ = b_.CreateZExt(t_.thread_id(b_), i64());
  lane_ = b_.CreateAnd(tid_, c64(31));
  Value* warp = b_.CreateLShr(tid_, c64(5));
  g_ = b_.CreateLShr(lane_, c64(2));
  t2_ = b_.CreateMul(b_.CreateAnd(lane_, c64(3)), c64(2));
  Value* block = b_.CreateZExt(t_.block_id(b_), i64());
  Value* bh = nullptr;
  Value* mb = nullptr;
  if (heavy_first_ && c_.causal) {  // the last row blocks of every head first
    const int64_t all_heads = c_.batch * c_.heads;
    bh = b_.CreateURem(block, c64(all_heads));
    mb = b_.CreateSub(c64(row_blocks_ - 1), b_.CreateUDiv(block, c64(all_heads)));
  } else {
    bh = b_.CreateUDiv(block, c64(row_blocks_));
    mb = b_.CreateURem(block, c64(row_blocks_));
  }
  Value* bi = b_.CreateUDiv(bh, c64(c_.heads));
  Value* hi = b_.CreateURem(bh, c64(c_.heads));
  const auto base = [&](const OperandLayout& l) {
    return b_.CreateAdd(
        c64(l.offset), b_.CreateAdd(b_.CreateMul(bi, c64(l.batch)), b_.CreateMul(hi, c64(l.head))));
  };
  q_base_ = base(c_.q), k_base_ = base(c_.k), v_base_ = base(c_.v), mask_base_ = base(c_.mask_at);
  out_base_ = base(c_.out);
  Value* first_row = b_.CreateMul(mb, c64(block_rows_));
  // This lane's rows: g and g + 8 of each of the warp's row tiles.
  std::vector<Value*> rows;
  Value* warp_first =
      b_.CreateAdd(first_row, b_.CreateAdd(b_.CreateMul(warp, c64(row_tiles_ * kRowTile)), g_));
  for (int64_t r = 0; r < 2 * row_tiles_; ++r)
    rows.push_back(b_.CreateAdd(warp_first, c64((r / 2) * kRowTile + (r % 2) * 8)));
  // This warp's q fragments, per row tile one per 16 dims (rows past the end repeat the last;
  // never stored).
  Fragments q(static_cast<size_t>(row_tiles_));
  for (int64_t t = 0; t < row_tiles_; ++t)
    for (int64_t d = 0; d < e / 16; ++d) {
      Quad a;
      for (int64_t i = 0; i < 4; ++i) {
        Value* row = min64(rows[static_cast<size_t>(2 * t + i % 2)], c64(c_.q_len - 1));
        Value* col = b_.CreateAdd(t2_, c64(d * 16 + (i / 2) * 8));
        a[static_cast<size_t>(i)] =
            b_.CreateAlignedLoad(i32(), at(q_, element(q_base_, c_.q, row, col)), llvm::Align(4));
      }
      q[static_cast<size_t>(t)].push_back(a);
    }
  const int64_t key_tiles = (c_.kv_len + keys_ - 1) / keys_;
  // Causal: the tiles after this block's last row hold only hidden keys.
  Value* last_row = b_.CreateAdd(first_row, c64(block_rows_ - 1));
  Value* tiles =
      c_.causal ? min64(c64(key_tiles), b_.CreateAdd(b_.CreateUDiv(last_row, c64(keys_)), c64(1)))
                : c64(key_tiles);

  auto* head = llvm::BasicBlock::Create(ctx, "tile", fn_);
  auto* body = llvm::BasicBlock::Create(ctx, "tile_body", fn_);
  auto* plain = llvm::BasicBlock::Create(ctx, "tile_unmasked", fn_);
  auto* with_mask = llvm::BasicBlock::Create(ctx, "tile_masked", fn_);
  auto* next = llvm::BasicBlock::Create(ctx, "tile_next", fn_);
  auto* done = llvm::BasicBlock::Create(ctx, "write", fn_);
  load_tiles(c64(0), c64(0));
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* j = b_.CreatePHI(i64(), 2, "j");
  j->addIncoming(c64(0), entry);
  b_.CreateCondBr(b_.CreateICmpSLT(j, tiles), body, done);

  b_.SetInsertPoint(body);
  // The next tile starts filling the other buffers (the last tile again on the last round:
  // no branch), then this tile's copies are waited for.
  Value* parity = b_.CreateAnd(j, c64(1));
  load_tiles(min64(b_.CreateAdd(j, c64(1)), b_.CreateSub(tiles, c64(1))),
             b_.CreateXor(parity, c64(1)));
  tensor_core::wait_copies(b_, 1);
  t_.barrier(b_);
  buffer_ = b_.CreateMul(parity, c64(tile_elements()));
  // A tile needs no mask when all its keys exist and (causal) none comes after the block's
  // first row; the same for every thread of the block, so no warp diverges.
  Value* tile_end = b_.CreateMul(b_.CreateAdd(j, c64(1)), c64(keys_));
  Value* unmasked = b_.CreateICmpSLE(tile_end, c64(c_.kv_len));
  if (c_.causal)
    unmasked = b_.CreateAnd(unmasked, b_.CreateICmpSLE(tile_end, b_.CreateAdd(first_row, c64(1))));
  if (c_.mask != AttentionMask::None) unmasked = b_.getFalse();
  b_.CreateCondBr(unmasked, plain, with_mask);
  b_.SetInsertPoint(plain);
  tile(j, q, rows, false);
  b_.CreateBr(next);
  b_.SetInsertPoint(with_mask);
  tile(j, q, rows, true);
  b_.CreateBr(next);
  b_.SetInsertPoint(next);
  t_.barrier(b_);  // this tile's readers are done before the round after next refills it
  j->addIncoming(b_.CreateAdd(j, c64(1)), next);
  b_.CreateBr(head);

  b_.SetInsertPoint(done);
  tensor_core::wait_copies(b_, -1);  // none left in flight
  write_rows(rows);
  b_.CreateRetVoid();
}

}  // namespace

void emit_attention_kernel(llvm::Module& m, const NvptxTarget& target, const AttentionCall& call,
                           const AttentionTiling& tiling) {
  if (const std::string problem = attention_tiling_problem(call, tiling); !problem.empty())
    throw std::invalid_argument("attention: " + problem);
  Emitter(m, target, call, tiling).emit();
}

}  // namespace kiln::ptx
