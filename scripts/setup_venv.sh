# Sourced by run_example.sh and run_tests.sh: makes .venv (if missing), installs boltir
# with its test extra, and puts the venv's tools first on PATH.
#   BOLTIR_VENV    the venv's location (default: .venv in the repository)
#   BOLTIR_PYTHON  the interpreter that creates it (default: python3)
#   BOLTIR_TORCH   a torch version to install for the PyTorch frontend's tests, e.g.
#                  2.13.0 (a CPU build lies on these machines' disks); empty: none
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BOLTIR_VENV:-$repo_root/.venv}"
python="${BOLTIR_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "== creating $venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
fi
echo "== installing boltir (editable, with the test extra)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$repo_root[test]"
# CUTLASS's C++ headers come from this wheel; its Python dependencies are not needed.
if ! "$venv/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('cutlass_library') is None)"; then
  echo "== installing the CUTLASS headers (nvidia-cutlass==4.2.0.0, without its dependencies)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps nvidia-cutlass==4.2.0.0
fi
if [ -n "${BOLTIR_TORCH:-}" ] && ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "== installing torch==$BOLTIR_TORCH (CPU) for the PyTorch frontend"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$BOLTIR_TORCH" \
    || echo "   torch did not install: the PyTorch frontend's tests will be skipped"
fi
export PATH="$venv/bin:$PATH"
