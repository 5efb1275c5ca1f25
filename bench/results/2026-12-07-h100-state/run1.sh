#!/usr/bin/env bash
# Call 1 on the GPU machine: the differential suite through ptx (defaults), memcheck over the
# embedding-bag and scatter tests (their GPU KIR changed: partials stored under the long-bag
# mask), then the whole CPU set on the host's 16 threads against Inductor.
set -uo pipefail
if [ ! -d device-bundle ]; then tar -xJf device-bundle.tar.xz; fi
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; git -C .. log -1 --format=%h 2>/dev/null; } | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 230 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite.log | head -20 | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./bin/kiln_unit_tests --gtest_filter='*EmbeddingBag*:Dtypes/DeterministicScatter.*/f32' > $OUT/r/memcheck.log 2>&1
echo "memcheck rc=$? ($(($(date +%s) - start)) s): $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/memcheck.log | tr '\n' ' ')" | tee -a $S
cd bench
start=$(date +%s)
lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | cut -c1-200 > $OUT/r/lscpu.txt
env -u CPATH -u LIBRARY_PATH PYTHONPATH=../python:. timeout 200 python3 cpu_compare.py --set all --threads 16 --runs 10 \
  > $OUT/r/cpu16.md 2> $OUT/r/cpu16.err
echo "cpu_compare 16 threads rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
tail -2 $OUT/r/cpu16.md | tee -a $S
awk -F'|' 'NF>8 && $8+0>0 && $8+0<0.95 {print "below 0.95:", $2, $8}' $OUT/r/cpu16.md | tee -a $S
true
