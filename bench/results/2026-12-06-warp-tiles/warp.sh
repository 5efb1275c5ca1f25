#!/usr/bin/env bash
# 64-row warp tiles: suite + memcheck, then conv_tiles.py variants.
set -uo pipefail
if [ ! -d device-bundle ] || [ "${FRESH:-0}" = 1 ]; then rm -rf device-bundle && tar -xJf device-bundle.tar.xz; fi
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/r/gpu.txt
for o in ${OPTS:-}; do
  echo "== suite $o" | tee -a $OUT/r/suite.log
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=$o timeout 120 ./bin/kiln_unit_tests --gtest_filter='Dtypes/CompiledConv.*' >> $OUT/r/suite_full.log 2>&1
  echo "rc=$?" | tee -a $OUT/r/suite_full.log
  tail -30 $OUT/r/suite_full.log | grep -E "FAILED|PASSED|Failure" | head -8 | tee -a $OUT/r/suite.log
done
for o in ${MEMOPTS:-}; do
  echo "== memcheck $o" | tee -a $OUT/r/suite.log
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=$o timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/kiln_unit_tests --gtest_filter='Dtypes/CompiledConv.*' >> $OUT/r/memcheck.log 2>&1
  echo "rc=$?" | tee -a $OUT/r/memcheck.log
  tail -4 $OUT/r/memcheck.log | tee -a $OUT/r/suite.log
done
if [ -n "${VARIANTS:-}" ]; then
cd bench
PYTHONPATH=../python:. timeout ${LIMIT:-400} python3 conv_tiles.py --config ../configs/nvidia.yaml --variants "$VARIANTS" 2> $OUT/r/tiles.err | tee $OUT/r/tiles.csv
tail -3 $OUT/r/tiles.err
fi
