#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and runs every test, first
# in the default (RelWithDebInfo) build, then under AddressSanitizer + UBSan; as many tests at
# once as the machine has cores (most of a test's time is one compiler process).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
for preset in default asan; do
  echo "=== tests: preset $preset"
  ./scripts/build.sh "$preset"
  if ! ctest --preset "$preset" --parallel "$(nproc)"; then
    ./scripts/test-failures.sh "build/$preset"
    exit 1
  fi
done
