#!/usr/bin/env bash
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
KILN_TEST_PLUGIN=ptx timeout 200 ./bin/kiln_unit_tests --gtest_filter='CompiledReduction*:CompiledWholeRows*:CompiledRowFusion*:Dtypes/CompiledReductionFloat*:Dtypes/CompiledNormBackward*:All/CompiledExamples*:CompiledSplitRows*:CompiledFusion*' > $OUT/r/ptx_suite.log 2>&1
echo "suite rc=$?" >> $OUT/r/ptx_suite.log
cd bench
PYTHONPATH=../python:. timeout 150 python3 kernel_times.py --config ../configs/nvidia.yaml --only layernorm,var_mean,rmsnorm > $OUT/r/kernel_times.txt 2> $OUT/r/kernel_times.err
echo "rc=$?" >> $OUT/r/kernel_times.txt
