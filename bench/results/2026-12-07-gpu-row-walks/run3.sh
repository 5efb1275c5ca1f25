#!/usr/bin/env bash
# The one call this session's device time allowed (runs 1 and 2 were not started: no machine
# came), on commit 19b1cc9's bundle: the differential suite through ptx; the wide set's
# long-row workloads' kernels against eager and Inductor; the transformer rows with sdpa of
# the model table, kiln's 12 largest kernels per call; the wide set's reduction rows with the
# default knobs and with walk_lanes=1 (one element per step, as before) in the same run.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 230 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite.log | head -20 | tee -a $S
cd bench
export PYTHONPATH=../python:.
start=$(date +%s)
timeout 70 python3 kernel_times.py --config ../configs/nvidia.yaml --only softmax_32k,softmax_256k,cross_entropy_50k > $OUT/r/kernel_times.txt 2>&1
echo "kernel_times rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E "us of kernels per call" $OUT/r/kernel_times.txt | tee -a $S
cd ..
start=$(date +%s)
MODEL_TABLE_ARGS="--modes default --profile 12" MODEL_TABLE_ROW_TIMEOUT=110 timeout 230 \
  bench/model_table.sh configs/nvidia.yaml gpt2_small_sdpa:bfloat16 bert_base_sdpa:bfloat16 \
  > $OUT/r/models.md 2> $OUT/r/models.err
echo "model rows rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E '^\| (gpt2|bert)' $OUT/r/models.md | tee -a $S
cd bench
rows=sum_,amax,argmax,mean,softmax,var_mean,cross_entropy,layernorm
for knobs in "" "walk_lanes: 1"; do
  sed "s/cublas_prefetch: true/cublas_prefetch: true${knobs:+, $knobs}/" ../configs/nvidia.yaml > ../configs/variant.yaml
  start=$(date +%s)
  echo "## knobs: ${knobs:-defaults}" >> $OUT/r/wide_rows.md
  timeout 70 python3 wide_gpu.py --config ../configs/variant.yaml --only $rows >> $OUT/r/wide_rows.md 2>&1
  echo "wide_gpu rows [${knobs:-defaults}] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
done
true
