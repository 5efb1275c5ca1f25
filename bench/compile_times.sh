#!/usr/bin/env bash
# Cold and warm compile times of the examples, measured in one run: for each example, a first
# `kiln run` into an empty cache (cold), then a second process (warm: the kernels come from
# the cache). From each process's "compile:" line: the compile after the plugins are open
# (graph scheduled, kernels compiled or read from the cache, loaded), its warm/cold ratio,
# and the plugins' own start-up (a GPU driver's initialization, paid by any process).
#   bench/compile_times.sh [KILN] [CONFIG]   (defaults: build/default/bin/kiln, built-in config)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${1:-$root/build/default/bin/kiln}
config=${2:-}
examples=$root/examples
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
chmod 700 "$cache"
compile_ms() {  # example -> the compile stage's ms
  local json=$1 weights=${1%.json}.safetensors args=()
  [ -f "$weights" ] && args+=(--weights "$weights")
  [ -n "$config" ] && args+=(--config "$config")
  KILN_CACHE_DIR=$cache KILN_LOG=warn "$kiln" run "$json" "${args[@]}" |
    sed -n 's/^compile: [0-9.]* ms in all on \([^:]*:[0-9]*\): plugins loaded in \([0-9.]*\) ms, then \([0-9.]*\) ms.*/\3 \1 \2/p'
}
printf '%-20s %-14s %10s %10s %9s %16s\n' example target "cold ms" "warm ms" warm/cold \
  "plugin start ms"
for json in "$examples"/*.json; do
  name=$(basename "$json" .json)
  read -r cold target load < <(compile_ms "$json")
  read -r warm _ _ < <(compile_ms "$json")
  awk -v n="$name" -v t="$target" -v c="$cold" -v w="$warm" -v l="$load" \
    'BEGIN { printf "%-20s %-14s %10.1f %10.1f %9.3f %16.1f\n", n, t, c, w, w / c, l }'
done
