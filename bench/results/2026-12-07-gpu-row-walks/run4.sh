#!/usr/bin/env bash
# The last try for a GPU this session, on commit a69f33c's bundle (the wider walks and
# attention's strided output opt-in): the differential suite through ptx with them on
# (walk_lanes=0, attention_out_strides=true), then the long-row workloads' kernels with the
# defaults and with them on, each against eager and Inductor in its own run.
set -uo pipefail
rm -rf device-bundle && tar -xJf device-bundle.tar.xz
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export KILN_LIBRARY=$PWD/lib/libkiln.so
mkdir -p $OUT/r
S=$OUT/r/summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
start=$(date +%s)
KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS="walk_lanes=0,attention_out_strides=true" timeout 240 ./bin/kiln_unit_tests \
  --gtest_filter='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*' > $OUT/r/suite.log 2>&1
echo "ptx suite [walk_lanes=0,attention_out_strides=true] rc=$? ($(($(date +%s) - start)) s): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' $OUT/r/suite.log | tr '\n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] ' $OUT/r/suite.log | head -20 | tee -a $S
cd bench
export PYTHONPATH=../python:.
sed "s/cublas_prefetch: true/cublas_prefetch: true, walk_lanes: 0, attention_out_strides: true/" ../configs/nvidia.yaml > ../configs/variant.yaml
for cfg in nvidia variant; do
  start=$(date +%s)
  timeout 80 python3 kernel_times.py --config ../configs/$cfg.yaml --only softmax_256k,cross_entropy_50k > $OUT/r/kernel_times-$cfg.txt 2>&1
  echo "kernel_times $cfg rc=$? ($(($(date +%s) - start)) s)" | tee -a $S
  grep -E "us of kernels per call" $OUT/r/kernel_times-$cfg.txt | tee -a $S
done
true
