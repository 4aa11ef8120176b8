#!/usr/bin/env bash
# The whole test suite, from a fresh machine: a venv with boltir (and torch's CPU build,
# for the PyTorch frontend), then pytest and the lit/FileCheck tests. Tests that need a
# GPU are skipped, with the reason, where there is none. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
export BOLTIR_TORCH="${BOLTIR_TORCH-2.13.0}"
source scripts/setup_venv.sh

echo "== pytest"
python -m pytest -q -rs "$@"
echo "== lit + FileCheck"
lit -sv tests/filecheck
