#!/usr/bin/env bash
# Runs the random-graph differential fuzzer longer than CI does: N graphs (default 10000)
# through the plugin under test (KILN_TEST_PLUGIN, default cpp_openmp), fused and unfused,
# against the reference interpreter. Failing graphs are written to fuzz-out/ as
# fuzz-<seed>.json with the command that replays them.
#   scripts/fuzz-graphs.sh [N] [extra gtest flags]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
shift || true
./scripts/build.sh default
mkdir -p fuzz-out
KILN_FUZZ_SEED=${KILN_FUZZ_SEED:-random} KILN_FUZZ_GRAPHS=$n KILN_FUZZ_OUT=$PWD/fuzz-out \
  build/default/bin/kiln_unit_tests --gtest_filter='GraphFuzz.*' "$@"
