#!/usr/bin/env bash
# The model table (docs/models.md): each row in its own process with empty kiln and Inductor
# caches and an empty CUDA JIT cache (the driver's, which keeps assembled PTX between
# processes), so both compile times are cold. Run from a bundle or build root with a GPU:
#   bench/model_table.sh [config] [rows...]     rows as model:dtype, default the whole table
# Extra arguments for bench/model_table.py go in MODEL_TABLE_ARGS (e.g. "--profile 8");
# MODEL_TABLE_ROW_TIMEOUT (seconds) stops a row that runs longer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
config=${1:-$root/configs/nvidia.yaml}
shift || true
rows=("$@")
if [ ${#rows[@]} -eq 0 ]; then
  rows=(resnet18:bfloat16 resnet18:float32 resnet50:bfloat16 resnet50:float32
        bert_base:bfloat16 bert_base_sdpa:bfloat16 gpt2_small:bfloat16 gpt2_small_sdpa:bfloat16
        gpt2_small_train:bfloat16)
fi
export PYTHONPATH=$root/python:$root/tests/python:$root/bench${PYTHONPATH:+:$PYTHONPATH}
caches=
trap 'rm -rf "$caches"' EXIT
header=--header
for row in "${rows[@]}"; do
  caches=$(mktemp -d)
  KILN_LOG=${KILN_LOG:-warn} KILN_CACHE_DIR=$caches/kiln TORCHINDUCTOR_CACHE_DIR=$caches/inductor \
    CUDA_CACHE_PATH=$caches/cuda timeout "${MODEL_TABLE_ROW_TIMEOUT:-0}" python3 "$root/bench/model_table.py" --model "${row%%:*}" --dtype "${row##*:}" \
    --config "$config" $header ${MODEL_TABLE_ARGS:-} || echo "| ${row%%:*} | ${row##*:} | failed (exit $?) |"
  header=
  rm -rf "$caches"
done
