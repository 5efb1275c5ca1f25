#!/usr/bin/env bash
# usage: probe/run1.sh suite|wide
set -uo pipefail
ROOT=$PWD
if [ ! -d device-bundle ] || [ "${FRESH:-0}" = 1 ]; then rm -rf device-bundle && tar -xJf device-bundle.tar.xz; fi
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/r/gpu.txt
RED='CompiledReduction*:CompiledRowFusion*:CompiledSplitRows*:Dtypes/CompiledReductionFloat*:CompiledExamples*'
if [ "$1" = suite ]; then
KILN_TEST_PLUGIN=ptx timeout 300 ./bin/kiln_unit_tests --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:AttentionFusion.*:MergeReductionDims.*:-CompiledGraphCacheTest.*' > $OUT/r/ptx_suite.log 2>&1
echo "suite rc=$?" >> $OUT/r/ptx_suite.log
i=0
for opts in persistent_limit=64 "block_size=1024,persistent_limit=64" persistent_limit=0; do
i=$((i+1))
echo "options $opts" > $OUT/r/ptx_suite_v$i.log
KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS="$opts" timeout 120 ./bin/kiln_unit_tests --gtest_filter="$RED" >> $OUT/r/ptx_suite_v$i.log 2>&1
echo "suite $opts rc=$?" >> $OUT/r/ptx_suite_v$i.log
done
fi
if [ "$1" = suite ] || [ "$1" = wide ]; then
cd $BUNDLE/bench
PYTHONPATH=../python:. timeout 200 python3 wide_gpu.py --config ../configs/nvidia.yaml 2> $OUT/r/wide_gpu.err | grep -v "online softmax" > $OUT/r/wide_gpu.md
echo "wide rc=$?" >> $OUT/r/wide_gpu.md
ONLY=softmax_32k,softmax_256k,log_softmax_f16,layernorm_bf16,cross_entropy,masked,softmax_dim0
for v in default block1024; do
cfg=$ROOT/probe/$v.yaml; [ $v = default ] && cfg=../configs/nvidia.yaml
echo "config $v" >> $OUT/r/kernel_times.txt
PYTHONPATH=../python:. timeout 100 python3 kernel_times.py --config $cfg --only $ONLY >> $OUT/r/kernel_times.txt 2>> $OUT/r/kernel_times.err
echo "rc=$?" >> $OUT/r/kernel_times.txt
done
fi
