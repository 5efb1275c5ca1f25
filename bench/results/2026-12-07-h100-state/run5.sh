#!/usr/bin/env bash
# Call 5 on the GPU machine: the whole ptx differential suite on the final tree, and the
# convolution tests under compute-sanitizer memcheck.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/r
S=$OUT/r/summary5.txt
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 230 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:ConvLibraryCall.*:-CompiledGraphCacheTest.*' > $OUT/r/suite-final.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite-final.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite-final.log | head -20 | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./bin/kiln_unit_tests --gtest_filter='Dtypes/CompiledConv.*' > $OUT/r/conv_memcheck-final.log 2>&1
echo "memcheck rc=$? ($(($(date +%s) - start)) s): $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/conv_memcheck-final.log | tr '\n' ' ')" | tee -a $S
true
