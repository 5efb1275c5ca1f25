#!/usr/bin/env bash
# The transformer rows of the model table (GPT-2 small and BERT-base, sdpa, bf16) with the
# defaults (unaligned products in row sets, 16 query rows a warp) and with 32 query rows a
# warp, each with Inductor's top kernels beside kiln's.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
python3 - <<'PY'
import yaml
doc = yaml.safe_load(open("configs/nvidia.yaml"))
for p in doc["plugins"]:
    if p["name"] == "ptx":
        p["options"].update({"attention_rows_per_warp": 32, "attention_order": "heavy_first"})
yaml.safe_dump(doc, open("configs/causal.yaml", "w"))
PY
for config in configs/nvidia.yaml configs/causal.yaml; do
  start=$(date +%s)
  name=$(basename $config .yaml)
  KILN_LOG=info MODEL_TABLE_ARGS="--modes default --profile 12" MODEL_TABLE_ROW_TIMEOUT=110 timeout 230 \
    bench/model_table.sh $config gpt2_small_sdpa:bfloat16 bert_base_sdpa:bfloat16 \
    > $OUT/r/models-$name.md 2> $OUT/r/models-$name.err
  echo "model rows [$config] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
  grep -E '^\| (gpt2|bert)|kiln_attention|GPU time|Inductor \(|memcpy|gemm|Kernel' $OUT/r/models-$name.md | head -60 | tee -a $S
done
true
