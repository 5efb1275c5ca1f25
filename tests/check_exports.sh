#!/usr/bin/env bash
# Fails when the plugin at $1 exports a defined dynamic symbol whose name is not kiln_*.
set -euo pipefail
plugin=$1
symbols=$(nm -D --defined-only "$plugin" | awk '{print $NF}')
if [ -z "$symbols" ]; then
  echo "FAIL: $plugin exports no symbols at all"
  exit 1
fi
others=$(printf '%s\n' "$symbols" | grep -v '^kiln_' || true)
if [ -n "$others" ]; then
  echo "FAIL: $plugin exports symbols other than kiln_*:"
  printf '  %s\n' $others
  exit 1
fi
echo "ok: $plugin exports only: $(printf '%s ' $symbols)"
