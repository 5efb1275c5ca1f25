#!/usr/bin/env bash
# On 3fb12ba's bundle (the above, placement's questions asked once per distinct kernel and side
# by side; the artifact test's cut-short case fixed): the differential suite through ptx; the
# transformer rows with sdpa of the model table, each row's caches empty, the driver's JIT
# cache too; the wide set's reduction rows with the defaults and with persistent_limit=64.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 150 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite.log | head -20 | tee -a $S
start=$(date +%s)
KILN_LOG=info MODEL_TABLE_ARGS="--modes default --profile 12" MODEL_TABLE_ROW_TIMEOUT=110 timeout 200 \
  bench/model_table.sh configs/nvidia.yaml gpt2_small_sdpa:bfloat16 bert_base_sdpa:bfloat16 \
  > $OUT/r/models.md 2> $OUT/r/models.err
echo "model rows rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E '^\| (gpt2|bert)' $OUT/r/models.md | tee -a $S
grep -E 'scheduled|compiled [0-9]+ kernels|kernel cache hit' $OUT/r/models.err | head -12 | tee -a $S
cd bench
export PYTHONPATH=../python:.
rows=sum_,amax,argmax,mean,softmax,var_mean,cross_entropy,layernorm
for knobs in "" "persistent_limit: 64"; do
  sed "s/cublas_prefetch: true/cublas_prefetch: true${knobs:+, $knobs}/" ../configs/nvidia.yaml > ../configs/variant.yaml
  start=$(date +%s)
  echo "## knobs: ${knobs:-defaults}" >> $OUT/r/wide_rows.md
  timeout 80 python3 wide_gpu.py --config ../configs/variant.yaml --only $rows >> $OUT/r/wide_rows.md 2>&1
  echo "wide_gpu rows [${knobs:-defaults}] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
done
grep -E "^## |^\| " $OUT/r/wide_rows.md | cut -d'|' -f2,3,4,5,6,7,8 | tee -a $S
true
