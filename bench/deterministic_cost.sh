#!/usr/bin/env bash
# What deterministic mode (schedule.deterministic) costs: the scatter-sum graphs of
# bench/graphs (an embedding gradient, a scatter_add) through one plugin, float atomic sums
# against fixed-point sums, each `kiln run --bench` (median of RUNS runs) in the same process
# order, checked against the reference once each.
#   bench/deterministic_cost.sh [KILN] [PLUGIN] [RUNS]   (default: build/default/bin/kiln cpp_openmp 20)
# With PLUGIN ptx, the plugin's own `deterministic` option is set too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kiln=${1:-build/default/bin/kiln}
plugin=${2:-cpp_openmp}
runs=${3:-20}
dir=$(mktemp -d)
device=cpu:0
[ "$plugin" = ptx ] && device=cuda:0
for mode in false true; do
  options=""
  [ "$plugin" = ptx ] && options="    options: {deterministic: $mode}"
  printf 'plugins:\n  - name: %s\n%s\ndevices: [%s]\nschedule: {deterministic: %s}\ncache: {dir: %s}\n' \
    "$plugin" "$options" "$device" "$mode" "$dir/cache" > "$dir/$mode.yaml"
done
for graph in emb_grad scatter_add; do
  for mode in false true; do
    out=$("$kiln" run "$here/graphs/$graph.json" --config "$dir/$mode.yaml" --bench "$runs" --check 2>&1)
    check=$(grep -c ' ok$' <<<"$out" || true)
    echo "$plugin $graph deterministic=$mode: $(grep '^bench:' <<<"$out") (checks ok: $check)"
  done
done
