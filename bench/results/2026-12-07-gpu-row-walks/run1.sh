#!/usr/bin/env bash
# Call 1 on the GPU machine (rows walked several elements per step, the online softmax
# folding a run at once with the hardware exp2, split softmax rows folding the max and the sum
# of exponentials into one partial kernel): the differential suite through ptx, the wide set
# with the default knobs and with walk_lanes=1 (one element per step, as before) in the same
# run, and the kernels of the long-row workloads.
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
sed 's/cublas_prefetch: true/cublas_prefetch: true, walk_lanes: 1/' ../configs/nvidia.yaml > ../configs/nvidia-walk1.yaml
for cfg in nvidia nvidia-walk1; do
  start=$(date +%s)
  timeout 150 python3 wide_gpu.py --config ../configs/$cfg.yaml > $OUT/r/wide_gpu-$cfg.md 2> $OUT/r/wide_gpu-$cfg.err
  echo "wide_gpu $cfg rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
  tail -1 $OUT/r/wide_gpu-$cfg.md | tee -a $S
done
start=$(date +%s)
timeout 100 python3 kernel_times.py --config ../configs/nvidia.yaml --only softmax_32k,softmax_256k,cross_entropy_50k,softmax_dim0 > $OUT/r/kernel_times.txt 2>&1
echo "kernel_times rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E "us of kernels per call" $OUT/r/kernel_times.txt | tee -a $S
true
