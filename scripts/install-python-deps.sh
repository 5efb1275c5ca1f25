#!/usr/bin/env bash
# Installs the Python side into the Python on PATH: the pinned packages of
# python/requirements.txt (torch==2.13.0 is the CPU build these machines carry) and
# kiln's package itself, editable, so `torch.compile(backend="kiln")` finds it through its
# entry point. Idempotent and quick when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
"$python" -m pip install --quiet -r python/requirements.txt
"$python" -m pip install --quiet --no-deps --no-build-isolation -e python
echo "install-python-deps: torch $("$python" -c 'import torch; print(torch.__version__)'), kiln package from python/"
