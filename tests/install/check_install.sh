#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds tests/install (a C program that finds kiln
# with find_package) against it, and runs it on a softmax graph: each row of the output sums
# to 1, so the total is the number of rows; then the installed conformance kit on the installed
# CPU plugin. Nothing from the build tree is on any path.
#   tests/install/check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kiln-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/tests/install" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_RPATH="$work/prefix/lib" >/dev/null
cmake --build "$work/consumer" >/dev/null
printf '%s\n' '{"format": "kiln.graph/1", "name": "rows",' \
  ' "inputs": [{"name": "x", "dtype": "f32", "shape": [6, 10]}],' \
  ' "nodes": [{"name": "y", "op": "aten._softmax.default", "args": ["%x", 1, false]}],' \
  ' "outputs": ["%y"]}' >"$work/rows.json"
out=$(cd "$work" && env -u KILN_CONFIG KILN_CACHE_DIR="$work/cache" "$work/consumer/consumer" rows.json)
echo "$out"
grep -q "on cpp_openmp:0, output sum 6.0000" <<<"$out"
ls "$work/prefix/include/kiln/runtime.h" "$work/prefix/lib/cmake/kiln/kilnConfig.cmake" >/dev/null
# The conformance kit comes with the SDK and finds its graphs under the prefix.
kit=$("$work/prefix/bin/kiln-conformance" "$work/prefix/lib/kiln/kiln_cpp_openmp.so" \
  --report "$work/report.md")
grep -q "PASS kir: matmul" <<<"$kit"
grep -q "cpp_openmp 0.1.0: [0-9]* passed, 0 failed" <<<"$kit"
grep -q "^| result | [0-9]* passed, 0 failed" "$work/report.md"
# The SDK's template built against the installed SDK alone passes the kit's ABI checks.
cmake -S "$source/tests/install/plugin" -B "$work/plugin" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DKILN_TEMPLATE_SOURCE="$source/sdk/template/null/null_plugin.cpp" >/dev/null
cmake --build "$work/plugin" >/dev/null
template=$("$work/prefix/bin/kiln-conformance" "$work/plugin/kiln_null.so")
grep -q "null 0.1.0: [0-9]* passed, 0 failed" <<<"$template"
echo "install: ok"
