"""A bench script that ends on a BoltError prints its message, not a traceback, and exits 1
(here: a check whose --only matches no case, so nothing is built to link)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_check_that_selects_nothing_ends_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "bench.check_stem_conv", "--only", "no such case", "--no-timing",
                             "--library", str(tmp_path / "stem.so")],
                            cwd=ROOT, capture_output=True, text=True, env={"BOLTIR_CACHE_DIR": str(tmp_path / "cache"),
                                                                          "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"error: nothing to link into {tmp_path / 'stem.so'}: no object files"]
    assert "Traceback" not in result.stderr
