#!/usr/bin/env bash
# Attention tilings on the GPU: the attention tests through ptx under each tiling; the
# attention shapes with the default tiling (16 query rows a warp, 64-key tiles) against 32 rows
# over 32 keys and 32 rows over 64 keys, in one process; the transformer rows of the model
# table with the default and with 32 rows over 32 keys.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
for opts in "" "attention_rows_per_warp=32" "attention_rows_per_warp=32,attention_keys=64"; do
  start=$(date +%s)
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS="$opts" timeout 100 ./bin/kiln_unit_tests \
    --gtest_filter='*Attention*' > $OUT/r/attention-tests-${opts:-default}.log 2>&1
  echo "attention tests [${opts:-default}] rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/attention-tests-${opts:-default}.log | tr '\n' ' ')" | tee -a $S
  grep -E '^\[  FAILED  \] ' $OUT/r/attention-tests-${opts:-default}.log | head -10 | tee -a $S
done
start=$(date +%s)
(cd bench && PYTHONPATH=../python:. timeout 240 python3 attention.py --config ../configs/nvidia.yaml \
  --variants "attention_rows_per_warp=32;attention_rows_per_warp=32,attention_keys=64") \
  > $OUT/r/attention.md 2> $OUT/r/attention.err
echo "attention.py rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
cat $OUT/r/attention.md | tee -a $S
python3 - <<'PY'
import yaml
doc = yaml.safe_load(open("configs/nvidia.yaml"))
for p in doc["plugins"]:
    if p["name"] == "ptx":
        p["options"].update({"attention_rows_per_warp": 32})
yaml.safe_dump(doc, open("configs/rows32.yaml", "w"))
PY
for config in configs/nvidia.yaml configs/rows32.yaml; do
  start=$(date +%s)
  KILN_LOG=info MODEL_TABLE_ARGS="--modes default --profile 12" MODEL_TABLE_ROW_TIMEOUT=110 timeout 230 \
    bench/model_table.sh $config gpt2_small_sdpa:bfloat16 bert_base_sdpa:bfloat16 \
    > $OUT/r/models-$(basename $config .yaml).md 2> $OUT/r/models-$(basename $config .yaml).err
  echo "model rows [$config] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
  grep -E '^\| (gpt2|bert)|kiln_attention|GPU time|Inductor \(|flash' $OUT/r/models-$(basename $config .yaml).md | tee -a $S
done
true
