// Inline-PTX building blocks of the plugin's own tensor-core kernels (attention_kernel.h,
// conv_kernel.h): warp-wide mma and ldmatrix, cp.async copies into shared memory, and
// shared arrays. Each is one instruction; the kernels decide what goes where.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <array>
#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "plugins/ptx/nvptx_target.h"

namespace kiln::ptx::tensor_core {

using Quad = std::array<llvm::Value*, 4>;  // an mma fragment: 4 f32 accumulators or 4 i32 operands

// `reads_memory`: the instruction touches shared memory, so it stays where it is among the
// stores and barriers (LLVM would otherwise move it as a pure function of its operands).
llvm::Value* inline_asm(llvm::IRBuilder<>& b, llvm::Type* result, const std::string& text,
                        const std::string& constraints, const std::vector<llvm::Value*>& args,
                        bool reads_memory = false);

// "bf16" or "f16": the PTX name of a 16-bit float dtype.
const char* half_name(kir::DType dtype);

// acc + a·b (a 16x16, b 16x8, acc 16x8 in f32) for 16-bit float a and b.
Quad mma_m16n8k16(llvm::IRBuilder<>& b, kir::DType dtype, const Quad& a, llvm::Value* b0,
                  llvm::Value* b1, const Quad& acc);
// acc + a·b (a 16x8, b 8x8, acc 16x8 in f32) for TF32 a and b (from tf32()).
Quad mma_m16n8k8_tf32(llvm::IRBuilder<>& b, const Quad& a, llvm::Value* b0, llvm::Value* b1,
                      const Quad& acc);
// f32 `x` rounded to TF32 (nearest, ties away), in an i32 as mma takes it.
llvm::Value* tf32(llvm::IRBuilder<>& b, llvm::Value* x);

// Four 8x8 matrices of 16-bit elements from shared memory, lanes 8m..8m+7 giving the rows of
// matrix m: each lane gets elements (lane/4, 2·(lane%4) and the next) of each, or with
// `transposed` elements (2·(lane%4) and the next, lane/4).
Quad load_matrices(llvm::IRBuilder<>& b, llvm::Value* shared_address, bool transposed);

// The 32-bit shared-memory address of `pointer` (into a shared array).
llvm::Value* shared_address(llvm::IRBuilder<>& b, llvm::Value* pointer);

// Copies `bytes` (4, 8 or 16) from global `from` (an i64 address) to `to` (shared_address)
// without waiting; with `source_bytes` (i32), only that many are read and the rest are zeros.
void copy_async(llvm::IRBuilder<>& b, llvm::Value* to, llvm::Value* from, int bytes,
                llvm::Value* source_bytes = nullptr);
// Closes the copies started since the last commit into one group.
void commit_copies(llvm::IRBuilder<>& b);
// Waits until at most `pending` groups are in flight (-1: none).
void wait_copies(llvm::IRBuilder<>& b, int pending);

// Two f32 rounded into one register of two 16-bit halves, `low` in the low half.
llvm::Value* pack(llvm::IRBuilder<>& b, kir::DType dtype, llvm::Value* low, llvm::Value* high);

// A 16-byte-aligned shared array of `bytes`.
llvm::GlobalVariable* shared_array(llvm::Module& m, const NvptxTarget& target,
                                   const std::string& name, int64_t bytes);
// The block's dynamic shared memory (its size set at launch), 16-byte aligned: past the 48 KB
// a static array may take.
llvm::GlobalVariable* dynamic_shared_array(llvm::Module& m, const NvptxTarget& target,
                                           const std::string& name);

// A generic pointer to thread `thread`'s own `bytes` of a new shared array `name` for `threads`
// threads: where a store outside the output goes instead, so no lane of a warp branches away
// from the others (the attention kernel hung on the H200 when its last rows' stores were a
// branch).
llvm::Value* discard_slot(llvm::IRBuilder<>& b, llvm::Module& m, const NvptxTarget& target,
                          const std::string& name, int64_t threads, int64_t bytes,
                          llvm::Value* thread);

}  // namespace kiln::ptx::tensor_core
