#!/usr/bin/env bash
# Tests and tools run from a copy of the build's programs, plugins and data laid out as an
# unpacked bundle (bin/, lib/kiln/, examples/, configs/) in a fresh directory, with no KILN_*
# variables and another working directory: nothing may depend on where they were built.
#   tests/check_relocated.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
copy=$(mktemp -d "${TMPDIR:-/tmp}/kiln-relocated.XXXXXX")
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/bin" "$copy/lib"
cp "$build/bin/kiln" "$build/bin/kiln_unit_tests" "$copy/bin/"
cp -r "$build/lib/kiln" "$build/lib/kiln-test" "$copy/lib/"
cp -r "$source/examples" "$source/configs" "$copy/"
clean_env=(env -i "PATH=$PATH" "HOME=$copy" "TMPDIR=${TMPDIR:-/tmp}")
for name in ASAN_OPTIONS UBSAN_OPTIONS; do
  [ -n "${!name:-}" ] && clean_env+=("$name=${!name}")
done
cd /
"${clean_env[@]}" "$copy/bin/kiln_unit_tests" --gtest_brief=1 \
  --gtest_filter='CompiledGraphCacheTest.*:All/CompiledExamples.*:PluginLoaderTest.*'
"${clean_env[@]}" "$copy/bin/kiln" run "$copy/examples/mlp.json" \
  --weights "$copy/examples/mlp.safetensors" --check | grep -q "ok"
echo "relocated: tests and the CLI ran from $copy"
