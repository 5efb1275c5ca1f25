#!/usr/bin/env bash
# On b534b6c's bundle (persistent_limit 64 the ptx plugin's default): the differential suite through ptx;
# the artifact tests under compute-sanitizer; the long-row kernels against eager and Inductor.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 150 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite.log | head -20 | tee -a $S
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$SAN" ]; then
  KILN_TEST_PLUGIN=ptx timeout 60 "$SAN" --tool memcheck ./bin/kiln_unit_tests \
    --gtest_filter='CompiledPtxArtifact.*' > $OUT/r/artifact_memcheck.log 2>&1
  echo "artifact tests under memcheck rc=$?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $OUT/r/artifact_memcheck.log | tr '\n' ' ')" | tee -a $S
else
  echo "no compute-sanitizer found" | tee -a $S
fi
cd bench
export PYTHONPATH=../python:.
start=$(date +%s)
timeout 70 python3 kernel_times.py --config ../configs/nvidia.yaml --only softmax_32k,softmax_256k,cross_entropy_50k > $OUT/r/kernel_times.txt 2>&1
echo "kernel_times rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
grep -E "us of kernels per call" $OUT/r/kernel_times.txt | tee -a $S
true
