#!/usr/bin/env bash
# The main job on the built-in default (cpp_openmp on the CPU, configs/default.yaml):
# installs what is missing, builds, lists the plugins, runs the smoke test, then compiles the
# transformer-block example with the default plugin and checks it against the reference.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh default
./build/default/bin/kiln plugins
./build/default/bin/kiln smoke
./build/default/bin/kiln run examples/transformer_block.json \
  --weights examples/transformer_block.safetensors --check
