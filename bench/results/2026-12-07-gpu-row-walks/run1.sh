#!/usr/bin/env bash
# Call 1 on the GPU machine (rows walked several elements per step, the online softmax
# folding a run at once with the hardware exp2, split softmax rows folding the max and the sum
# of exponentials into one partial kernel): the differential suite through ptx, the wide set
# and its reduction rows again with the default knobs, walk_lanes=1 (one element per step, as
# before), persistent_limit=64 and block_size=1024, and the kernels of the long-row workloads.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary1.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 230 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite.log | head -20 | tee -a $S
cd bench
export PYTHONPATH=../python:.
rows=sum_,amax,argmax,mean,softmax,var_mean,cross_entropy,layernorm
start=$(date +%s)
timeout 150 python3 wide_gpu.py --config ../configs/nvidia.yaml > $OUT/r/wide_gpu.md 2> $OUT/r/wide_gpu.err
echo "wide_gpu rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
tail -1 $OUT/r/wide_gpu.md | tee -a $S
# The reduction rows again, the default knobs beside other ones (same run, same machine).
for knobs in "" "walk_lanes: 1" "persistent_limit: 64" "block_size: 1024"; do
  sed "s/cublas_prefetch: true/cublas_prefetch: true${knobs:+, $knobs}/" ../configs/nvidia.yaml > ../configs/variant.yaml
  start=$(date +%s)
  echo "## knobs: ${knobs:-defaults}" >> $OUT/r/wide_rows.md
  timeout 80 python3 wide_gpu.py --config ../configs/variant.yaml --only $rows >> $OUT/r/wide_rows.md 2>&1
  echo "wide_gpu rows [${knobs:-defaults}] rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
done
start=$(date +%s)
timeout 100 python3 kernel_times.py --config ../configs/nvidia.yaml --only softmax_32k,softmax_256k,cross_entropy_50k,softmax_dim0 > $OUT/r/kernel_times.txt 2>&1
echo "kernel_times rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E "us of kernels per call" $OUT/r/kernel_times.txt | tee -a $S
true
