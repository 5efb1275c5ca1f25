#!/usr/bin/env bash
# Convolutions on one NVIDIA GPU three ways in one run, by kernel time (kernel_times.py, with
# eager and Inductor beside each): kiln with cuDNN, with the ptx plugin's own implicit-GEMM
# kernel (the ptx option cudnn: "off"), and with the column form (that and
# schedule.library_conv: false). With --check, first the convolution suite through the own
# kernel and compute-sanitizer memcheck over it. From an unpacked device bundle, with the
# cuDNN wheel's lib on LD_LIBRARY_PATH and KILN_LIBRARY set (docs/ptx.md, the device bundle):
#   bench/conv_without_cudnn.sh [--check] [CASES]   (CASES: kernel_times.py --only; default conv3x3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=false
if [ "${1:-}" = --check ]; then check=true; shift; fi
cases=${1:-conv3x3}
configs=$(mktemp -d)
trap 'rm -rf "$configs"' EXIT
sed 's/cublas_prefetch: true }/cublas_prefetch: true, cudnn: "off" }/' "$root/configs/nvidia.yaml" \
  > "$configs/own.yaml"
grep -q 'cudnn: "off"' "$configs/own.yaml" || { echo "configs/nvidia.yaml: no ptx options line to add cudnn: off to" >&2; exit 2; }
(cat "$configs/own.yaml"; echo "schedule: {library_conv: false}") > "$configs/columns.yaml"
if $check; then
  echo "== the convolution suite through the own kernel"
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=cudnn=off "$root/bin/kiln_unit_tests" \
    --gtest_filter='Dtypes/CompiledConv.*' | tail -3
  echo "== compute-sanitizer memcheck over it"
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=cudnn=off \
    "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" --tool memcheck --error-exitcode 9 \
    "$root/bin/kiln_unit_tests" --gtest_filter='Dtypes/CompiledConv.*' | tail -2
fi
cd "$root/bench"
for config in "$root/configs/nvidia.yaml" "$configs/own.yaml" "$configs/columns.yaml"; do
  echo "== config $(basename "$config" .yaml | sed 's/^nvidia$/cudnn/')"
  PYTHONPATH="$root/python:." python3 kernel_times.py --config "$config" --only "$cases"
done
