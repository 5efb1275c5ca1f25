#include "plugins/ptx/attention_tiling.h"

namespace kiln::ptx {

using kir_support::AttentionCall;

namespace {

bool valid_rows(int64_t rows) {
  return rows == 16 || rows == 32;
}
bool valid_keys(int64_t keys) {
  return keys == 32 || keys == 64;
}

}  // namespace

AttentionTiling attention_tiling(const AttentionCall& call, const AttentionTiling& requested) {
  if (call.head_dim > 64) return {16, 32, requested.heavy_first};
  AttentionTiling t = requested;
  if (!valid_rows(t.warp_rows)) t.warp_rows = call.causal ? 32 : 16;
  if (!valid_keys(t.keys)) t.keys = t.warp_rows > 16 ? 32 : 64;
  return t;
}

std::string attention_values_problem(const AttentionTiling& requested) {
  if (requested.warp_rows != 0 && !valid_rows(requested.warp_rows))
    return "rows per warp are 16 or 32, got " + std::to_string(requested.warp_rows);
  if (requested.keys != 0 && !valid_keys(requested.keys))
    return "keys per tile are 32 or 64, got " + std::to_string(requested.keys);
  return "";
}

std::string attention_tiling_problem(const AttentionCall& call, const AttentionTiling& tiling) {
  if (std::string problem = attention_values_problem(tiling); !problem.empty()) return problem;
  if (tiling.warp_rows == 0 || tiling.keys == 0) return "rows per warp and keys per tile not given";
  constexpr int64_t kStaticShared = 48 * 1024;
  const int64_t bytes = 2 * 2 * tiling.keys * (call.head_dim + kAttentionRowPad) * 2;
  if (bytes > kStaticShared)
    return std::to_string(tiling.keys) + " keys of head dim " + std::to_string(call.head_dim) +
           " take " + std::to_string(bytes) + " bytes of shared memory, past 48 KB";
  return "";
}

int64_t attention_blocks(const AttentionCall& call, const AttentionTiling& tiling) {
  return call.batch * call.heads * attention_row_blocks(call, tiling);
}

}  // namespace kiln::ptx
