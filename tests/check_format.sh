#!/usr/bin/env bash
# Fails when a C or C++ source under the source tree differs from clang-format's output.
set -euo pipefail
cd "$1"
files=$(find core sdk plugins cli capi conformance tests bench -name '*.cpp' -o -name '*.c' -o -name '*.h' -o -name '*.hpp' 2>/dev/null | sort)
clang-format --dry-run -Werror $files
echo "ok: $(echo "$files" | wc -l) files formatted"
