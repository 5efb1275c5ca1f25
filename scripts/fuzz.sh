#!/usr/bin/env bash
# Fuzzes kiln's readers with libFuzzer (clang's fuzzer runtime; installed here when missing).
# Not part of the test suite. Targets: graph (kiln.graph/1 and safetensors, then the
# interpreter), kir (the SDK's kir/1 reader, with a round-trip check), config (the YAML
# loader), cache_entry (the compiled-graph cache entry decoder).
#   scripts/fuzz.sh [SECONDS] [TARGET...]   (default: 120 seconds each, every target; 0 builds
#   and seeds build/fuzz/<target>/{fuzzer,corpus} without running, to run elsewhere)
# Crashes are written to build/fuzz/<target>/ as crash-*; the last lines say how many runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(graph kir config cache_entry)
if ! command -v clang++-19 >/dev/null || [ ! -e "$(clang++-19 -print-file-name=libclang_rt.fuzzer-x86_64.a)" ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends clang-19 libclang-rt-19-dev
fi
./scripts/install-deps.sh
out=build/fuzz
mkdir -p "$out/generated/core/ops/schemas"
python3 - "$out/generated/core/ops/schemas/schema_tables.h" <<'PY'
import sys
core = open("core/ops/schemas/core_aten.tsv").read()
extra = open("core/ops/schemas/extra_aten.tsv").read()
template = open("core/ops/schemas/schema_tables.h.in").read()
open(sys.argv[1], "w").write(template.replace("@KILN_CORE_ATEN_TSV@", core).replace("@KILN_EXTRA_ATEN_TSV@", extra))
PY
# The built-in default config, as core/CMakeLists.txt generates it.
mkdir -p "$out/generated/core/config"
python3 - "$out/generated/core/config/builtin_default_config.h" <<'PY'
import sys
template = open("core/config/builtin_default_config.h.in").read()
text = open("configs/default.yaml").read()
import re
out = re.sub(r"@[A-Z_]+@", lambda m: text, template)
open(sys.argv[1], "w").write(out)
PY
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I. -I"$out/generated" -Isdk/include)
graph_sources=$(ls core/graph/*.cpp core/ops/*.cpp core/interp/*.cpp core/passes/*.cpp core/expr/*.cpp core/support/error.cpp)

# The seed corpus of each target, from the repository's own files.
seed() {
  local target=$1 dir=$out/$1/corpus
  mkdir -p "$dir"
  case $target in
    graph) cp examples/*.json tests/lit/Inputs/*.json "$dir/" ;;
    config) cp configs/*.yaml tests/lit/Inputs/*.yaml "$dir/" ;;
    kir | cache_entry)
      [ -x build/default/bin/kiln ] || ./scripts/build.sh default
      local cache=$out/seed-cache
      for g in examples/*.json; do
        w=${g%.json}.safetensors; args=(); [ -e "$w" ] && args=(--weights "$w")
        build/default/bin/kiln compile "$g" --emit kir >"$dir/$(basename "$g" .json).kir" 2>/dev/null || true
        KILN_CACHE_DIR=$cache build/default/bin/kiln run "$g" "${args[@]}" >/dev/null 2>&1 || true
      done
      if [ "$target" = cache_entry ]; then
        rm -f "$dir"/*.kir
        # An entry file is "kiln-cache/2", a checksum line, the key's lines, then the payload.
        python3 - "$cache/graphs" "$dir" <<'PY'
import os, sys
src, dst = sys.argv[1:3]
for root, _, files in os.walk(src):
    for f in files:
        data = open(os.path.join(root, f), "rb").read()
        lines = data.split(b"\n", 4)
        count = int(lines[3].split()[0]) if len(lines) > 3 and lines[3].split() else 0
        rest = data.split(b"\n", 4 + count)
        if len(rest) == 5 + count:
            open(os.path.join(dst, f), "wb").write(rest[-1])
PY
      fi ;;
  esac
}

for target in "${targets[@]}"; do
  case $target in
    graph) sources="tests/fuzz/graph_fuzzer.cpp $graph_sources" ;;
    kir) sources="tests/fuzz/kir_fuzzer.cpp" ;;
    config) sources="tests/fuzz/config_fuzzer.cpp $(ls core/config/*.cpp) core/support/error.cpp core/support/log_levels.cpp" ;;
    cache_entry) sources="tests/fuzz/cache_entry_fuzzer.cpp $graph_sources $(ls core/lower/*.cpp core/runtime/compiled_graph_cache.cpp)" ;;
    *) echo "fuzz.sh: unknown target '$target' (graph, kir, config, cache_entry)" >&2; exit 1 ;;
  esac
  mkdir -p "$out/$target"
  echo "=== fuzz: building $target"
  # shellcheck disable=SC2086
  clang++-19 "${flags[@]}" $sources -lfmt -lyaml-cpp -o "$out/$target/fuzzer"
  seed "$target"
  [ "$seconds" -gt 0 ] || continue
  echo "=== fuzz: $target for $seconds s"
  (cd "$out/$target" && ./fuzzer corpus -max_total_time="$seconds" -max_len=8192 -timeout=10 \
     -rss_limit_mb=4096 -print_final_stats=1 2>&1 | tail -n 25)
done
