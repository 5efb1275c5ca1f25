#!/usr/bin/env bash
# Call 4 on the GPU machine's 16-core host (tree with the row prefetch, vector scans and
# transposed convolutions as backward data): the whole CPU set at 16 threads, and the
# permute kernel walked in output and in input order at 16 and 2 threads.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
P=$PWD/bench/results/2026-12-07-cpu-permute-order
cd device-bundle/bench
export KILN_LIBRARY=$PWD/../lib/libkiln.so PYTHONPATH=../python:.
mkdir -p $OUT/r
S=$OUT/r/summary4.txt
start=$(date +%s)
env -u CPATH -u LIBRARY_PATH timeout 240 python3 cpu_compare.py --set all --threads 16 --runs 10 > $OUT/r/cpu16-final.md 2> /dev/null
echo "cpu_compare 16 threads rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
tail -1 $OUT/r/cpu16-final.md | tee -a $S
awk -F'|' 'NF>8 && $8+0>0 && $8+0<0.95 {print "below 0.95:", $2, $8}' $OUT/r/cpu16-final.md | tee -a $S
B=$PWD/..; export KRT_INCLUDE=$P/../../../plugins/cpp_openmp/runtime CPATH=$B/include; mkdir -p /tmp/p && cp $P/*.cpp $P/kernel_ab.py /tmp/p/ && cd /tmp/p
for t in 16 2; do
  suffix=$([ $t = 16 ] && echo _t16 || echo "")
  echo "== permute kernel, $t threads" | tee -a $S
  timeout 120 python3 kernel_ab.py $t output_order$suffix.cpp input_order$suffix.cpp 2>&1 | grep -E "equal|median" | tee -a $S
done
true
