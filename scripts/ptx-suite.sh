#!/usr/bin/env bash
# On a GPU machine, from an unpacked device bundle (scripts/make-device-bundle.sh): the
# differential suite through the ptx plugin once per code shape its tuning knobs select, the
# random-graph fuzzer through ptx, and the bundle's cpp_openmp compiling there. Prints one line
# per run and a summary; exits 1 when any run fails.
#   scripts/ptx-suite.sh [FUZZ_GRAPHS] [PART...]   (default 2000; parts: shapes fuzz cpu, all
#   by default, so one machine lease can take them in several calls)
set -uo pipefail
cd "$(dirname "$0")/.."
graphs=${1:-2000}
shift || true
parts=" ${*:-shapes fuzz cpu} "
suite='Compiled*:Dtypes/*:All/*:CompiledLiterals.*:-CompiledGraphCacheTest.*'
# Each knob set changes the shape of the generated code: few blocks (grid-stride loops),
# every row by one thread, by a whole block or by one warp, rows walked again in each pass, rows
# walked one element per step (and attention's output contiguous) or three (a remainder each
# step), pointwise runs
# of 4, transposed reads without shared-memory tiles.
shapes=("" "block_size=128,max_blocks=7" "thread_row_limit=0" "thread_row_limit=100000"
        "thread_row_limit=0,warp_row_limit=0" "warp_row_limit=1000000"
        "persistent_limit=0" "walk_lanes=1,attention_out_strides=false" "walk_lanes=3" "runs_per_step=4" "tiles=0")
failed=0
summary=()
[[ $parts == *" shapes "* ]] || shapes=()
for shape in "${shapes[@]}"; do
  log=$(mktemp)
  start=$(date +%s)
  KILN_TEST_PLUGIN=ptx KILN_TEST_PLUGIN_OPTIONS=$shape ./bin/kiln_unit_tests --gtest_filter="$suite" >"$log" 2>&1
  rc=$?
  line="ptx suite [${shape:-defaults}]: rc $rc, $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$log" | tr '\n' ' ')($(($(date +%s) - start)) s)"
  summary+=("$line"); echo "$line"
  if [ $rc -ne 0 ]; then failed=1; grep -E 'Failure|mismatch|KILN_TEST_SEED' "$log" | head -20; fi
done
if [[ $parts == *" fuzz "* ]]; then
log=$(mktemp)
start=$(date +%s)
KILN_TEST_PLUGIN=ptx KILN_FUZZ_SEED=random KILN_FUZZ_GRAPHS=$graphs KILN_FUZZ_OUT=${OUT:-.} ./bin/kiln_unit_tests --gtest_filter='GraphFuzz.*' >"$log" 2>&1
rc=$?
line="ptx fuzz: rc $rc, $(grep -E '^fuzz' "$log" | tr '\n' ' ')($(($(date +%s) - start)) s)"
summary+=("$line"); echo "$line"
[ $rc -ne 0 ] && { failed=1; grep -E 'Failure|fuzz graph' "$log" | head -20; }
fi
# The bundle's cpp_openmp compiles kernels with the machine's g++ against its own Sleef.
if [[ $parts == *" cpu "* ]]; then
log=$(mktemp)
env -u CPATH -u LIBRARY_PATH ./bin/kiln run examples/softmax.json --check >"$log" 2>&1
rc=$?
line="bundled cpp_openmp softmax --check: rc $rc $(grep -E '^check' "$log" | tr '\n' ' ')"
summary+=("$line"); echo "$line"
[ $rc -ne 0 ] && { failed=1; tail -5 "$log"; }
fi
echo "=== summary"
printf '%s\n' "${summary[@]}"
exit $failed
