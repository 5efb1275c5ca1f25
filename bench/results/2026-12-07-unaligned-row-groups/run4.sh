#!/usr/bin/env bash
# The committed defaults (8e4f21e's bundle: causal attention 32 rows heavy first, unaligned
# rows auto): GPT-2 small and BERT-base of the model table with configs/nvidia.yaml as it is.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_LOG=info MODEL_TABLE_ARGS="--modes default --profile 8" MODEL_TABLE_ROW_TIMEOUT=110 timeout 230 \
  bench/model_table.sh configs/nvidia.yaml gpt2_small_sdpa:bfloat16 bert_base_sdpa:bfloat16 \
  > $OUT/r/models.md 2> $OUT/r/models.err
echo "model rows rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E '^\| (gpt2|bert)|kiln_attention|GPU time|Inductor \(|nvjet' $OUT/r/models.md | tee -a $S
true
