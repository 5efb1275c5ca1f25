#!/usr/bin/env bash
# Call 2 on the GPU machine: the wide set (bench/wide_gpu.py, 32 workloads) and the op
# benchmarks of issue 17 (bench/ops_gpu.py), each against eager and Inductor in one run.
set -uo pipefail
if [ ! -d device-bundle ]; then tar -xJf device-bundle.tar.xz; fi
cd device-bundle/bench
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/../lib/libkiln.so PYTHONPATH=../python:.
mkdir -p $OUT/r
S=$OUT/r/summary2.txt
nvidia-smi --query-gpu=name --format=csv,noheader | tee -a $S
start=$(date +%s)
timeout 300 python3 wide_gpu.py --config ../configs/nvidia.yaml > $OUT/r/wide_gpu.md 2> $OUT/r/wide_gpu.err
echo "wide_gpu rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
tail -2 $OUT/r/wide_gpu.md | tee -a $S
start=$(date +%s)
timeout 190 python3 ops_gpu.py --config ../configs/nvidia.yaml > $OUT/r/ops_gpu.md 2> $OUT/r/ops_gpu.err
echo "ops_gpu rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
tail -3 $OUT/r/ops_gpu.md | tee -a $S
start=$(date +%s)
timeout 80 python3 kernel_times.py --config ../configs/nvidia.yaml --only softmax_32k,softmax_256k,cross_entropy_50k > $OUT/r/kernel_times.txt 2>&1
echo "kernel_times rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E "us of kernels per call" $OUT/r/kernel_times.txt | tee -a $S
true
