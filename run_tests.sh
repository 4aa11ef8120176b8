#!/usr/bin/env bash
# The whole test suite, from a fresh machine: a venv, boltir installed, then pytest and
# the lit/FileCheck tests. Tests that need a GPU are skipped, with the reason, where
# there is none.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup_venv.sh

echo "== pytest"
python -m pytest -q -rs "$@"
echo "== lit + FileCheck"
lit -sv tests/filecheck
