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

std::string attention_tiling_problem(const AttentionCall& call, const AttentionTiling& tiling) {
  if (tiling.warp_rows != 16 && tiling.warp_rows != 32)
    return "rows per warp are 16 or 32, got " + std::to_string(tiling.warp_rows);
  if (tiling.keys != 32 && tiling.keys != 64)
    return "keys per tile are 32 or 64, got " + std::to_string(tiling.keys);
  constexpr int64_t kStaticShared = 48 * 1024;
  const int64_t bytes = 2 * 2 * tiling.keys * (call.head_dim + kAttentionRowPad) * 2;
  if (bytes > kStaticShared)
    return std::to_string(tiling.keys) + " keys of head dim " + std::to_string(call.head_dim) +
           " take " + std::to_string(bytes) + " bytes of shared memory, past 48 KB";
  return "";
}

int64_t attention_blocks(const AttentionCall& call, const AttentionTiling& tiling) {
  const int64_t block_rows = kAttentionWarps * tiling.warp_rows;
  return call.batch * call.heads * ((call.q_len + block_rows - 1) / block_rows);
}

}  // namespace kiln::ptx
