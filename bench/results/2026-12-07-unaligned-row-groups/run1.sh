#!/usr/bin/env bash
# Unaligned output rows and attention tilings on the GPU: the matmul tests through ptx with
# every unaligned product sent to row sets (pad_rows_from=0); the products of
# bench/unaligned_matmul.py each way; the attention tests under three tilings and block
# orders; the attention shapes with each in one process; the matmul tests on padded rows.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
tests() {  # label, filter, options
  local start=$(date +%s) log=$OUT/r/tests-$1.log
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS="$3" timeout 90 ./bin/kiln_unit_tests \
    --gtest_filter="$2" > $log 2>&1
  echo "tests $1 [$3] rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $log | tr '\n' ' ')" | tee -a $S
  grep -E '^\[  FAILED  \] ' $log | head -10 | tee -a $S
}
tests matmul-groups 'CompiledMatmul.*:AlignedRowGroups.*' pad_rows_from=0,unaligned_rows=groups
start=$(date +%s)
(cd bench && PYTHONPATH=../python:. timeout 150 python3 unaligned_matmul.py --config ../configs/nvidia.yaml) \
  > $OUT/r/unaligned_matmul.md 2> $OUT/r/unaligned_matmul.err
echo "unaligned_matmul.py rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
cat $OUT/r/unaligned_matmul.md | tee -a $S
tests attention-16 '*CompiledAttention*' ""
tests attention-32 '*CompiledAttention*' attention_rows_per_warp=32
tests attention-32-heavy '*CompiledAttention*' attention_rows_per_warp=32,attention_order=heavy_first
start=$(date +%s)
(cd bench && PYTHONPATH=../python:. timeout 200 python3 attention.py --config ../configs/nvidia.yaml \
  --variants "attention_order=heavy_first;attention_rows_per_warp=32;attention_rows_per_warp=32,attention_order=heavy_first") \
  > $OUT/r/attention.md 2> $OUT/r/attention.err
echo "attention.py rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
cat $OUT/r/attention.md | tee -a $S
tests matmul-padded 'CompiledMatmul.*' pad_rows_from=0,unaligned_rows=padded
true
