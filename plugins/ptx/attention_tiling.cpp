#include "plugins/ptx/attention_tiling.h"

namespace kiln::ptx {

using kir_support::AttentionCall;

AttentionTiling attention_tiling(const AttentionCall& call, const AttentionTiling& requested) {
  if (call.head_dim > 64) return {16, 32};
  AttentionTiling t = requested;
  if (t.warp_rows != 16 && t.warp_rows != 32) t.warp_rows = 16;
  if (t.keys != 32 && t.keys != 64) t.keys = t.warp_rows > 16 ? 32 : 64;
  return t;
}

int64_t attention_blocks(const AttentionCall& call, const AttentionTiling& tiling) {
  const int64_t block_rows = kAttentionWarps * tiling.warp_rows;
  return call.batch * call.heads * ((call.q_len + block_rows - 1) / block_rows);
}

}  // namespace kiln::ptx
