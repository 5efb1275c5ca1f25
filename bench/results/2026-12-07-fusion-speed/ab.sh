#!/usr/bin/env bash
# kiln compile (parse, schedule, KIR) of GPT-2 small's graph by two kiln binaries in turn,
# perf stat over 10 runs each, twice:  ab.sh OLD_KILN NEW_KILN GRAPH
set -euo pipefail
lscpu | grep -E '^Model name|^CPU\(s\)'
for round in 1 2; do
  for b in "$1" "$2"; do
    echo "$b"
    perf stat -r 10 "$b" compile "$3" --emit kir 2>&1 >/dev/null | grep -E 'task-clock|elapsed'
  done
done
