// How the fused attention kernel (attention_kernel.h) covers a call's query rows and keys: a
// block of 4 warps, each taking 16 or 32 query rows, over tiles of 32 or 64 keys; and the
// blocks one call launches.
#pragma once

#include <cstdint>
#include <string>

#include "plugins/kir_support/attention_call.h"

namespace kiln::ptx {

inline constexpr unsigned kAttentionThreads = 128;
inline constexpr int64_t kAttentionWarps = 4;
// Elements after each shared-memory row of k and v, so the 8 rows an ldmatrix reads start in
// different banks.
inline constexpr int64_t kAttentionRowPad = 8;

// How a block covers its query rows and the keys: `warp_rows` (16 or 32) query rows per warp,
// `keys` (32 or 64) keys per shared-memory tile. `heavy_first`: a causal call's blocks take the
// last query rows (the most keys) first, every head's before the rows above them, so the
// longest blocks do not start last and leave the GPU idling behind them (on an H100, 16 rows:
// GPT-2's causal kernel 87.3 -> 78.7 µs, a Llama-like 2k one 190.6 -> 158.5, a 4k one 280.1 ->
// 246.4).
struct AttentionTiling {
  int64_t warp_rows = 0, keys = 0;
  bool heavy_first = true;
};

// The tiling for `call`: head dims over 64 take 16 rows over 32 keys always (on sm_90, 32
// rows of 128 dims spilled 220 bytes a thread; 64 keys of 96 dims or more pass the 48 KB of
// static shared memory); up to 64 dims, `requested`'s values where they are valid (the
// plugin's `attention_rows_per_warp` and `attention_keys` options), else 32 rows for a causal
// call and 16 for others, and 64 keys with 16 rows or 32 with 32 (registers: the output
// accumulators and the tile's scores share them). On an H100, 32 rows took GPT-2's causal
// kernel from 78.7 to 67.2 µs and a 4k causal one from 246 to 205 (heavy first both), and
// BERT's padded one from 42.5 to 56.9 µs (bench/results/2026-12-07-unaligned-row-groups).
AttentionTiling attention_tiling(const kir_support::AttentionCall& call,
                                 const AttentionTiling& requested);
// Why `requested`'s values are not a tiling's, or "" when they are: rows other than 16 or 32,
// keys other than 32 or 64 (0: not given, left to attention_tiling).
std::string attention_values_problem(const AttentionTiling& requested);
// Why `tiling` cannot build a kernel for `call`, or "" when it can: values not given or not a
// tiling's (attention_values_problem), or two buffers each of k and v past the 48 KB of static
// shared memory.
std::string attention_tiling_problem(const kir_support::AttentionCall& call,
                                     const AttentionTiling& tiling);
// Query rows one block of kAttentionThreads threads takes.
inline int64_t attention_block_rows(const AttentionTiling& tiling) {
  return kAttentionWarps * tiling.warp_rows;
}
// Blocks of attention_block_rows query rows over `call`'s query rows, per batch and head.
inline int64_t attention_row_blocks(const kir_support::AttentionCall& call,
                                    const AttentionTiling& tiling) {
  return (call.q_len + attention_block_rows(tiling) - 1) / attention_block_rows(tiling);
}
// Blocks of kAttentionThreads threads for `call` tiled as `tiling`.
int64_t attention_blocks(const kir_support::AttentionCall& call, const AttentionTiling& tiling);

}  // namespace kiln::ptx
