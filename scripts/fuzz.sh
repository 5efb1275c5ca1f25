#!/usr/bin/env bash
# Fuzzes the graph and safetensors readers and the interpreter with libFuzzer (needs clang
# with its fuzzer runtime; not part of the test suite). usage: scripts/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
out=build/fuzz
mkdir -p "$out/corpus"
cp examples/*.json tests/lit/Inputs/*.json "$out/corpus/" 2>/dev/null || true
sources=$(ls core/graph/*.cpp core/ops/*.cpp core/interp/*.cpp core/passes/*.cpp core/expr/*.cpp core/support/error.cpp)
mkdir -p "$out/generated/core/ops/schemas"
python3 - "$out/generated/core/ops/schemas/schema_tables.h" <<'PY'
import sys
core = open("core/ops/schemas/core_aten.tsv").read()
extra = open("core/ops/schemas/extra_aten.tsv").read()
template = open("core/ops/schemas/schema_tables.h.in").read()
open(sys.argv[1], "w").write(template.replace("@KILN_CORE_ATEN_TSV@", core).replace("@KILN_EXTRA_ATEN_TSV@", extra))
PY
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I. -I"$out/generated" tests/fuzz/graph_fuzzer.cpp $sources -lfmt -o "$out/graph_fuzzer"
"$out/graph_fuzzer" "$out/corpus" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096
