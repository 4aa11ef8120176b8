"""`pip install 'boltir[cuda]'` into a fresh venv, then `boltc -o` on the bundled example
with that venv's boltc: the install alone must bring everything a build needs but nvcc
(slow: minutes; `pytest -m slow`; skipped without nvcc)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boltir.diagnostics import BoltError

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_fresh_install_of_the_cuda_extra_compiles_the_example(tmp_path):
    from boltir.backends.cuda.toolchain import nvcc

    try:
        nvcc.find_nvcc()
    except BoltError as error:
        pytest.skip(f"no nvcc here: {error}")
    source = tmp_path / "source"  # a copy without build outputs, as a user's checkout or sdist
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__",
                                                                ".public_onnx", "bench"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    environment = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    install = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "--quiet", f"{source}[cuda]"],
                             capture_output=True, text=True, env=environment, timeout=900)
    assert install.returncode == 0, install.stdout + install.stderr
    subprocess.run([str(venv / "bin/python"), str(ROOT / "examples/small_resnet/make_model.py"), str(tmp_path / "model")],
                   check=True, capture_output=True, timeout=120)
    build = subprocess.run([str(venv / "bin/boltc"), str(tmp_path / "model/small_resnet.onnx"), "-o", str(tmp_path / "out"),
                            "--arch", "sm80"], capture_output=True, text=True, env=environment, cwd=tmp_path, timeout=1800)
    assert build.returncode == 0, build.stderr
    assert "CUTLASS headers not found" not in build.stderr and build.stderr.rstrip().splitlines()[-1].startswith("wrote ")
    manifest = json.loads((tmp_path / "out/manifest.json").read_text())
    assert (tmp_path / "out/libmodel.so").is_file() and manifest["inputs"][0]["name"] == "image"
