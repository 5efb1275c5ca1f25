#!/usr/bin/env bash
set -uo pipefail
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/s
run() {  # name options filter limit
  local start=$(date +%s)
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=$2 timeout $4 ./bin/kiln_unit_tests --gtest_filter="$3" > $OUT/s/$1.log 2>&1
  local rc=$?
  echo "$1 [$2]: rc $rc $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' $OUT/s/$1.log | tr '\n' ' ')($(($(date +%s) - start)) s)" | tee -a $OUT/s/summary.txt
  [ $rc -ne 0 ] && grep -E 'Failure|mismatch|KILN_TEST_SEED' $OUT/s/$1.log | head -10
}
run conv_splits "cudnn=off,conv_splits=3" 'Dtypes/CompiledConv.*' 150
run conv_cudnn "" 'Dtypes/CompiledConv.*' 150
run padded_mm "pad_rows_from=0" '*Matmul*:*Linear*' 150
run whole "" 'Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' 280
