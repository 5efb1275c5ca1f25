// The fused attention kernel behind the ptx plugin's "attention" call, built for one call's
// shape: flash-attention style, one pass over the keys with an online softmax, so no score
// matrix is ever in memory. A block of 4 warps takes 4 x 16 or 4 x 32 query rows (a warp's
// rows in tiles of 16: with two, each k and v operand read from shared memory feeds two
// products, halving the shared-memory reads per product); keys and values come through shared
// memory 32 or 64 rows at a time (attention_tiling.h); q kᵀ and p v run on tensor cores
// (mma.sync m16n8k16, f16/bf16 in, f32 accumulate: sm_80 and later), the softmax in f32 with
// exp2. The probabilities are rounded to the input dtype before p v, as flash attention does. A
// row whose every score is hidden comes out 0, as in PyTorch.
#pragma once

#include <llvm/IR/Module.h>

#include "plugins/kir_support/attention_call.h"
#include "plugins/ptx/attention_tiling.h"
#include "plugins/ptx/nvptx_target.h"

namespace kiln::ptx {

inline constexpr const char* kAttentionKernel = "kiln_attention";

// Adds kernel kAttentionKernel(q, k, v, mask, out) for `call` tiled as `tiling` (invalid
// values: std::invalid_argument) to `m`. Launch it with attention_blocks(call, tiling) blocks of
// kAttentionThreads threads.
void emit_attention_kernel(llvm::Module& m, const NvptxTarget& target,
                           const kir_support::AttentionCall& call, const AttentionTiling& tiling);

}  // namespace kiln::ptx
