#!/usr/bin/env bash
# Call 3 on the GPU machine (tree with transposed convolutions as cuDNN's backward data and
# the CPU row prefetch): the convolution suites through ptx with cuDNN, memcheck over them,
# the transposed-convolution rows of ops_gpu.py, the CPU rows below 0.95 at 16 threads, and
# the kernels of the GPU wide set's cumsum row.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary3.txt
nvidia-smi --query-gpu=name --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 200 ./bin/kiln_unit_tests --gtest_filter='Dtypes/CompiledConv.*:ConvLibraryCall.*:*ConvBackward*' > $OUT/r/conv_suite.log 2>&1
echo "conv suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/conv_suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] |Failure' $OUT/r/conv_suite.log | head -20 | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./bin/kiln_unit_tests --gtest_filter='Dtypes/CompiledConv.ForwardIsAKernel/*' > $OUT/r/conv_memcheck.log 2>&1
echo "memcheck rc=$? ($(($(date +%s) - start)) s): $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/conv_memcheck.log | tr '\n' ' ')" | tee -a $S
cd bench
export PYTHONPATH=../python:.
start=$(date +%s)
timeout 120 python3 ops_gpu.py --config ../configs/nvidia.yaml --only convT,conv3x3_64_56_f32_nchw > $OUT/r/ops_convT.md 2>&1
echo "ops_gpu convT rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E '^\| (convT|conv3x3)' $OUT/r/ops_convT.md | tee -a $S
start=$(date +%s)
timeout 60 python3 kernel_times.py --config ../configs/nvidia.yaml --only cumsum_dim1 > $OUT/r/kernel_times_cumsum.txt 2>&1
echo "kernel_times cumsum rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E "cumsum" $OUT/r/kernel_times_cumsum.txt | tee -a $S
start=$(date +%s)
env -u CPATH -u LIBRARY_PATH timeout 150 python3 cpu_compare.py --set all --threads 16 --runs 20 \
  --only embedding_bag,embedding_gather,cumsum,transpose_add,permute_0213 > $OUT/r/cpu16_low.md 2>&1
echo "cpu_compare 16 threads rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E '^\| [a-z]' $OUT/r/cpu16_low.md | tee -a $S
true
