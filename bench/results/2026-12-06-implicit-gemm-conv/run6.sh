#!/usr/bin/env bash
# kiln run --profile of one conv per layout and dtype, cuDNN vs own kernel vs columns; then
# kernel_times detail for the own config.
set -uo pipefail
ROOT=$PWD
if [ ! -d device-bundle ] || [ "${FRESH:-0}" = 1 ]; then rm -rf device-bundle && tar -xJf device-bundle.tar.xz; fi
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
sed 's/cublas_prefetch: true }/cublas_prefetch: true, cudnn: "off" }/' configs/nvidia.yaml | grep -v "^log:" > $ROOT/probe/own.yaml
(cat $ROOT/probe/own.yaml; echo "schedule: {library_conv: false}") > $ROOT/probe/columns.yaml
for g in ${GRAPHS:-conv_bf16_nhwc conv_bf16_nchw conv_f32_nhwc conv_f32_nchw}; do
  for v in own columns; do
    echo "== $g $v"
    timeout 60 ./bin/kiln --config $ROOT/probe/$v.yaml run $ROOT/probe/$g.json --profile 20 2>&1 | grep -v "^\[" | head -12
  done
done 2>&1 | tee $OUT/r/profile.txt
if [ "${DETAIL:-0}" = 1 ]; then
cd bench
PYTHONPATH=../python:. timeout 150 python3 kernel_times.py --config $ROOT/probe/own.yaml --only ${ONLY:-conv3x3} 2>&1 | grep -v "eager\|inductor" | tee $OUT/r/own_detail.txt
fi
