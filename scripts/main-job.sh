#!/usr/bin/env bash
# The main job on the built-in default (cpp_openmp on the CPU, configs/default.yaml):
# installs what is missing, builds, lists the plugins and runs the smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh default
./build/default/bin/kiln plugins
./build/default/bin/kiln smoke
./build/default/bin/kiln run examples/transformer_block.json --backend reference \
  --weights examples/transformer_block.safetensors
