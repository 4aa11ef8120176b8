# Sourced by run_example.sh and run_tests.sh: makes .venv (if missing), installs boltir
# with its test extra, and puts the venv's tools first on PATH.
# BOLTIR_VENV overrides the location; BOLTIR_PYTHON the interpreter that creates it.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BOLTIR_VENV:-$repo_root/.venv}"
python="${BOLTIR_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "== creating $venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
fi
echo "== installing boltir (editable, with the test extra)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$repo_root[test]"
export PATH="$venv/bin:$PATH"
