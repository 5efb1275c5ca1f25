#!/usr/bin/env bash
# Embedding bags by spans: suite + memcheck through ptx, kernel profile, ops/wide benches.
set -uo pipefail
if [ ! -d device-bundle ] || [ "${FRESH:-0}" = 1 ]; then rm -rf device-bundle && tar -xJf device-bundle.tar.xz; fi
cp probe/ebg.json device-bundle/ 2>/dev/null
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/r/gpu.txt
F='*EmbeddingBag*:*CompiledScatter*:*DeterministicScatter*:*CompiledDeterministicOrder*:*UnreadOutputs*'
KILN_TEST_PLUGIN=ptx timeout 240 ./bin/kiln_unit_tests --gtest_filter="$F" > $OUT/r/suite.log 2>&1
echo "suite rc=$?" | tee -a $OUT/r/summary.txt
grep -E "^\[  (PASSED|FAILED) |tests ran" $OUT/r/suite.log | head -20 | tee -a $OUT/r/summary.txt
KILN_TEST_PLUGIN=ptx timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/kiln_unit_tests --gtest_filter='*EmbeddingBag*:Dtypes/DeterministicScatter.*/f32' > $OUT/r/memcheck.log 2>&1
echo "memcheck rc=$?" | tee -a $OUT/r/summary.txt
tail -3 $OUT/r/memcheck.log | tee -a $OUT/r/summary.txt
timeout 120 ./bin/kiln --config configs/nvidia.yaml run ebg.json --profile 20 > $OUT/r/profile.txt 2>&1
tail -7 $OUT/r/profile.txt | tee -a $OUT/r/summary.txt
cd bench
PYTHONPATH=../python:. timeout 200 python3 ops_gpu.py --config ../configs/nvidia.yaml --only embedding_bag 2> $OUT/r/ops.err | tee $OUT/r/ops.md
true
PYTHONPATH=../python:. timeout 200 python3 kernel_times.py --config ../configs/nvidia.yaml --only embedding_bag > $OUT/r/kernel_times.txt 2>&1
tail -12 $OUT/r/kernel_times.txt
true
