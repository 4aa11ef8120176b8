"""bench/corpus.py's --builds without a GPU: an unknown build is a one-line error naming the
known ones, and the table gives the other builds' cells (time in turns with the ONNX build,
ratio, error) in their own column."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_an_unknown_build_is_one_line():
    result = subprocess.run([sys.executable, "-m", "bench.corpus", "--builds", "sm90-split"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 2 and "unknown build sm90-split; known: sm80, sm90," in result.stderr
    assert "Traceback" not in result.stderr


def test_as_gpu_goes_with_compile_only():
    result = subprocess.run([sys.executable, "-m", "bench.corpus", "--as-gpu", "NVIDIA H200"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 2 and "--as-gpu goes with --compile-only" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_other_builds_have_their_column():
    from bench.corpus import HEADER, Build, Row, table_row

    row = Row("gpt2", "transformers", 1, builds={"onnx": Build("onnx", "yes", "40 s", "ok", 0.390)},
              others=["sm90-cutlasssplit 0.384 (0.98x main in turns; err 1.4e-03)"])
    cells = dict(zip(HEADER, table_row(row)))
    assert cells["other builds: graph ms in turns with ours (ratio, err)"] == row.others[0]
    assert cells["graph ms"] == "0.390" and len(table_row(row)) == len(HEADER)
