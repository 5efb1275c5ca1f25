#!/usr/bin/env bash
# On a GPU machine, from an unpacked device bundle (scripts/make-device-bundle.sh): the
# compile caches and cross-plugin selection with both real plugins, in one run.
#  1. cold and warm compile of the examples through ptx (bench/compile_times.sh), with cuBLAS
#     opened on first need and with `cublas_prefetch: true`;
#  2. every example run again from the warm cache with --check (the compiled graph and its
#     kernels from the cache, outputs against the reference interpreter);
#  3. `selection: autotune` over ptx cuda:0 and cpp_openmp cpu:0 for each example and a large
#     softmax: the end-to-end table, the choice, and a second process taking the cached choice.
#   bench/gpu_cache_and_selection.sh [BUNDLE]   (default: the bundle this script sits in)
set -uo pipefail
bundle=$(cd "${1:-$(dirname "$0")/..}" && pwd)
kiln=$bundle/bin/kiln
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu_flags="[-O3, -march=native, -fopenmp, -I$bundle/include, -L$bundle/lib, '-Wl,-rpath,$bundle/lib']"
cat >"$work/ptx.yaml" <<YAML
plugins: [{ name: ptx, options: { arch: auto } }]
devices: [cuda:0]
selection: first-available
YAML
cat >"$work/ptx-prefetch.yaml" <<YAML
plugins: [{ name: ptx, options: { arch: auto, cublas_prefetch: true } }]
devices: [cuda:0]
selection: first-available
YAML
cat >"$work/select.yaml" <<YAML
plugins:
  - { name: ptx, options: { arch: auto } }
  - { name: cpp_openmp, options: { compiler: g++, flags: $cpu_flags, threads: auto } }
devices: [cuda:0, cpu:0]
selection: autotune
autotune: { kernels: heuristic, warmup: 3, reps: 20 }
YAML
"$kiln" plugins --config "$work/select.yaml"

for config in ${CONFIGS:-ptx ptx-prefetch}; do  # CONFIGS: another order, to see order effects
  echo "=== compile times, $config"
  bash "$bundle/bench/compile_times.sh" "$kiln" "$work/$config.yaml"
done

echo "=== warm runs checked against the reference (ptx)"
export KILN_CACHE_DIR=$work/cache
mkdir -p -m 700 "$KILN_CACHE_DIR"
for json in "$bundle"/examples/*.json; do
  weights=${json%.json}.safetensors args=()
  [ -f "$weights" ] && args+=(--weights "$weights")
  for pass in cold warm; do
    out=$("$kiln" run "$json" "${args[@]}" --config "$work/ptx.yaml" --check 2>&1)
    echo "$(basename "$json" .json) $pass: $(echo "$out" | grep -c ': .* ok$') outputs ok," \
      "$(echo "$out" | grep -o 'compiled graph cache hit' | head -1)" \
      "$(echo "$out" | grep -E 'MISMATCH|error' | head -2)"
  done
done

echo "=== selection across plugins (end to end, median ms)"
sed 's/64, 256/8192, 4096/g; s/"softmax"/"softmax_8192x4096"/' "$bundle/examples/softmax.json" \
  >"$work/softmax_large.json"
for json in "$bundle"/examples/*.json "$work/softmax_large.json"; do
  weights=${json%.json}.safetensors args=()
  [ -f "$weights" ] && args+=(--weights "$weights")
  name=$(basename "$json" .json)
  echo "--- $name"
  KILN_LOG=warn,select=info "$kiln" run "$json" "${args[@]}" --config "$work/select.yaml" \
    --check 2>&1 | grep -E "end to end|^  [a-z_]+ (cuda|cpu)|chosen|check .*(ok|MISMATCH)|error|cannot|undefined|No such"
  KILN_LOG=warn,select=info "$kiln" run "$json" "${args[@]}" --config "$work/select.yaml" \
    2>&1 | grep -E "chosen earlier|error"
done
