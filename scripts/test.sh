#!/usr/bin/env bash
# The whole test suite: installs what is missing, then builds and runs every test, first
# in the default (RelWithDebInfo) build, then under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
for preset in default asan; do
  echo "=== tests: preset $preset"
  ./scripts/build.sh "$preset"
  ctest --preset "$preset"
done
