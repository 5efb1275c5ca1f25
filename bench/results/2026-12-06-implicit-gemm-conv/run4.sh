#!/usr/bin/env bash
# The ptx plugin's own implicit-GEMM convolution: suite with cuDNN off, memcheck, kernel times.
set -uo pipefail
ROOT=$PWD
if [ ! -d device-bundle ] || [ "${FRESH:-0}" = 1 ]; then rm -rf device-bundle && tar -xJf device-bundle.tar.xz; fi
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/r/gpu.txt
sed 's/cublas_prefetch: true }/cublas_prefetch: true, cudnn: "off" }/' configs/nvidia.yaml > $ROOT/probe/own.yaml
(cat $ROOT/probe/own.yaml; echo "schedule: {library_conv: false}") > $ROOT/probe/columns.yaml
grep cudnn $ROOT/probe/own.yaml
if [ "${1:-}" = suite ]; then
KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=cudnn=off timeout 240 ./bin/kiln_unit_tests --gtest_filter="${FILTER:-Dtypes/CompiledConv.*}" > $OUT/r/own_suite.log 2>&1
echo "suite rc=$?" >> $OUT/r/own_suite.log
grep -E "FAILED|rc=|PASSED|Failure|error" $OUT/r/own_suite.log | head -40
if [ "${MEMCHECK:-1}" = 1 ]; then
KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=cudnn=off timeout 240 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/kiln_unit_tests --gtest_filter='Dtypes/CompiledConv.*' > $OUT/r/own_memcheck.log 2>&1
echo "memcheck rc=$?" >> $OUT/r/own_memcheck.log
tail -4 $OUT/r/own_memcheck.log
fi
fi
if [ "${TIMES:-1}" = 1 ]; then
cd $BUNDLE/bench
for v in library own columns; do
cfg=../configs/nvidia.yaml; [ $v != library ] && cfg=$ROOT/probe/$v.yaml
echo "config $v" | tee -a $OUT/r/kernel_times.txt
PYTHONPATH=../python:. timeout 150 python3 kernel_times.py --config $cfg --only ${ONLY:-conv3x3,conv1x1} 2>> $OUT/r/kernel_times.err | grep -v "^  " | tee -a $OUT/r/kernel_times.txt
done
fi
