#!/usr/bin/env bash
set -uo pipefail
if [ ! -d device-bundle ] || [ "${FRESH:-0}" = 1 ]; then rm -rf device-bundle && tar -xJf device-bundle.tar.xz; fi
cd device-bundle
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
export BUNDLE=$PWD KILN_LIBRARY=$PWD/lib/libkiln.so KILN_CACHE_DIR=$PWD/cache
mkdir -p $OUT/r
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
echo "ncu: $NCU"; $NCU --version | tail -1
cd bench; cp ../../probe/one_conv.py .
i=0
while IFS= read -r c; do
  [ -z "$c" ] && continue; i=$((i+1))
  PYTHONPATH=../python:. timeout 100 $NCU --kernel-name regex:kiln_conv --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis python3 one_conv.py $c > $OUT/r/ncu_$i.txt 2>&1
  echo "rc=$? $c"; grep -E "Duration|Throughput|Stall|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Block Limit|One or More|No Eligible|ERR|rror" $OUT/r/ncu_$i.txt | head -30
done <<< "${PROF:-}"
if [ -n "${VARIANTS:-}" ]; then
PYTHONPATH=../python:. timeout ${LIMIT:-400} python3 conv_tiles.py --config ../configs/nvidia.yaml --variants "$VARIANTS" 2> $OUT/r/tiles.err | tee $OUT/r/tiles.csv
tail -3 $OUT/r/tiles.err
fi
