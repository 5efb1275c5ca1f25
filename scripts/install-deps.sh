#!/usr/bin/env bash
# Installs kiln's build dependencies from Debian packages, then the Python packages
# (scripts/install-python-deps.sh, pinned). Idempotent: packages already present are
# skipped, and `apt-get update` runs once, only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config binutils clang-format
  llvm-19-dev llvm-19-tools lld-19 liblld-19-dev rocm-device-libs libzstd-dev
  libtbb-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libboost1.81-dev
  libxxhash-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-openmp-dev libsleef-dev libdlpack-dev libdnnl-dev
  python3-numpy patchelf
  chromium fonts-dejavu-core  # the benchmark report is looked at in a real browser (a test)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
# The Python side (PyTorch for the bridge's tests, kiln's package).
"$(dirname "$0")/install-python-deps.sh"
