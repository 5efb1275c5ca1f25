#!/usr/bin/env bash
# A/B of two cpp_openmp plugin builds (say, before and after a change to code generation or
# the kernels' runtime header) on graphs of bench/graphs: by default those whose time the
# transcendentals decide (GELU: erf; softmax, masked softmax, SwiGLU: exp). The two run in
# turn, ROUNDS times, each `kiln run --bench RUNS` on 2 threads with a cache of its own;
# prints every median.
#   bench/cpu_plugin_ab.sh KILN A.so B.so [ROUNDS] [RUNS] [GRAPH...]
set -euo pipefail
kiln=$1 a=$2 b=$3 rounds=${4:-3} runs=${5:-10}
shift $(($# < 5 ? $# : 5))
graphs=("${@:-gelu_f16 softmax_32k_bf16 masked_softmax swiglu_bf16}")
[ $# -gt 0 ] || read -r -a graphs <<<"${graphs[0]}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for side in a b; do
  so=$([ $side = a ] && echo "$a" || echo "$b")
  printf 'plugins:\n  - name: cpp_openmp\n    path: %s\n    options: {threads: 2}\ndevices: [cpu:0]\nselection: first-available\ncache: {dir: %s}\nlog: {level: warn}\n' \
    "$(realpath "$so")" "$tmp/cache_$side" >"$tmp/$side.yaml"
done
for graph in "${graphs[@]}"; do
  for round in $(seq "$rounds"); do
    for side in a b; do
      median=$("$kiln" run "$here/graphs/$graph.json" --config "$tmp/$side.yaml" --bench "$runs" |
               grep -o 'median [0-9.]* ms')
      echo "$graph round $round $side: $median"
    done
  done
done
