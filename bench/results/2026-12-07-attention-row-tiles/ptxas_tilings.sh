#!/usr/bin/env bash
# Registers, spills and shared memory of the fused attention kernel per tiling, from the CUDA
# toolkit's ptxas for sm_90 (no GPU needed): run from the repository root after a build.
set -euo pipefail
codegen=build/default/bin/kiln-ptx-codegen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| shape | tiling | registers | spill stores | spill loads | shared bytes |"
echo "|---|---|---|---|---|---|"
for shape in "bert:dtype=bf16 batch=8 heads=12 q_len=512 kv_len=512 head_dim=64 mask=add" \
             "gpt2:dtype=bf16 batch=8 heads=12 q_len=1024 kv_len=1024 head_dim=64 causal=1" \
             "short_128:dtype=bf16 batch=32 heads=12 q_len=128 kv_len=128 head_dim=64" \
             "llama_2k:dtype=bf16 batch=1 heads=32 q_len=2048 kv_len=2048 head_dim=128 causal=1"; do
  for tiling in "" "rows_per_warp=32" "rows_per_warp=32 keys=64"; do
    "$codegen" --attention "${shape#*:} $tiling" > "$tmp/a.ptx"
    info=$(ptxas -arch=sm_90 -v "$tmp/a.ptx" -o "$tmp/a.cubin" 2>&1)
    regs=$(grep -o 'Used [0-9]* registers' <<< "$info" | grep -o '[0-9]*')
    stores=$(grep -o '[0-9]* bytes spill stores' <<< "$info" | grep -o '^[0-9]*')
    loads=$(grep -o '[0-9]* bytes spill loads' <<< "$info" | grep -o '^[0-9]*')
    smem=$(grep -o '[0-9]* bytes smem' <<< "$info" | grep -o '^[0-9]*')
    echo "| ${shape%%:*} | ${tiling:-default (16 rows)} | $regs | $stores | $loads | $smem |"
  done
done
