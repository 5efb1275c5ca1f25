#!/usr/bin/env bash
# suites (OPTS) + memcheck (MEMOPTS) from warp.sh, then variants
set -uo pipefail
VARS="${VARIANTS:-}"; VARIANTS= bash probe/warp.sh
if [ -n "$VARS" ]; then
  cd device-bundle/bench
  export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn as c;print(list(c.__path__)[0])")/lib:${LD_LIBRARY_PATH:-}
  export KILN_LIBRARY=$PWD/../lib/libkiln.so KILN_CACHE_DIR=$PWD/../cache
  PYTHONPATH=../python:. timeout ${LIMIT:-400} python3 conv_tiles.py --config ../configs/nvidia.yaml --variants "$VARS" 2> $OUT/r/tiles.err | tee $OUT/r/tiles.csv
  tail -3 $OUT/r/tiles.err
fi
