#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds tests/install (a C program that finds kiln
# with find_package) against it, and runs it on a softmax graph: each row of the output sums
# to 1, so the total is the number of rows; then the installed conformance kit on the installed
# CPU plugin, then plugins built against the installed SDK alone. Nothing from the build tree
# is on any path.
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
# Plugins built against the installed SDK alone, each in a tree of its own: the template
# passes the kit's ABI checks; the KIR interpreter, every check.
sdk_plugin() {  # NAME SOURCE... -> the plugin's path
  local name=$1
  shift
  local sources
  sources=$(IFS=';' && echo "$*")
  cmake -S "$source/tests/install/plugin" -B "$work/plugin-$name" -G Ninja \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DKILN_PLUGIN_NAME="$name" \
    -DKILN_PLUGIN_SOURCES="$sources" >/dev/null
  cmake --build "$work/plugin-$name" >/dev/null
  echo "$work/plugin-$name/kiln_$name.so"
}
template=$("$work/prefix/bin/kiln-conformance" \
  "$(sdk_plugin null "$source/sdk/template/null/null_plugin.cpp")")
grep -q "null 0.1.0: [0-9]* passed, 0 failed" <<<"$template"
interpreter=$("$work/prefix/bin/kiln-conformance" \
  "$(sdk_plugin kir_interpreter "$source"/plugins/kir_interpreter/*.cpp)")
grep -q "kir_interpreter 1.0.0: [0-9]* passed, 0 failed, 0 skipped" <<<"$interpreter"
echo "install: ok"
