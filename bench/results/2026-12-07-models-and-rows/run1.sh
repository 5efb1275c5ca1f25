#!/usr/bin/env bash
# On 7e6e0f1's bundle (fusion memo; compile phases logged; cubins assembled at compile): the
# differential suite through ptx with the defaults (with the artifact tests); the long-row
# kernels with the defaults and softmax_32k with 64 elements per thread kept in registers
# (persistent_limit=64); GPT-2 small (sdpa) in the model table with cubins assembled at compile
# (the default) and without (cubin: false), each row's caches empty, the driver's JIT cache too.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 200 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] |^\[  SKIPPED \] ' $OUT/r/suite.log | head -20 | tee -a $S
cd bench
export PYTHONPATH=../python:.
run_kt() { # label, extra knobs, cases
  sed "s/cublas_prefetch: true/cublas_prefetch: true${2:+, $2}/" ../configs/nvidia.yaml > ../configs/variant.yaml
  local start=$(date +%s)
  echo "## knobs: ${2:-defaults}" >> $OUT/r/kernel_times.txt
  timeout 70 python3 kernel_times.py --config ../configs/variant.yaml --only $3 >> $OUT/r/kernel_times.txt 2>&1
  echo "kernel_times [$1] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
}
run_kt defaults "" softmax_32k,softmax_256k,cross_entropy_50k
run_kt p64 "persistent_limit: 64" softmax_32k
grep -E "^## |us of kernels per call" $OUT/r/kernel_times.txt | tee -a $S
cd ..
sed "s/cublas_prefetch: true/cublas_prefetch: true, cubin: false/" configs/nvidia.yaml > configs/nocubin.yaml
for cfg in nvidia nocubin; do
  start=$(date +%s)
  KILN_LOG=info MODEL_TABLE_ARGS="--modes default --profile 12" MODEL_TABLE_ROW_TIMEOUT=120 timeout 130 \
    bench/model_table.sh configs/$cfg.yaml gpt2_small_sdpa:bfloat16 > $OUT/r/models-$cfg.md 2> $OUT/r/models-$cfg.err
  echo "model row [$cfg] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
  grep -E '^\| (gpt2|bert)' $OUT/r/models-$cfg.md | tee -a $S
  grep -E 'scheduled|compiled [0-9]+ kernels|kernel cache hit|compile:' $OUT/r/models-$cfg.err | head -8 | tee -a $S
done
true
