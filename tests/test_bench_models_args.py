"""bench/models.py's argument errors are one line (its main parses before anything imports
torch's models): an unknown model or build names the known ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("arguments", "message"), [
    (["--models", "mobilenetv2"], "unknown model mobilenetv2; known: resnet50, mobilenet_v2, vgg16, repvgg_a0, bert"),
    (["--builds", "sm90-halo"], "unknown build sm90-halo; known: sm80, sm90,"),
])
def test_a_bad_name_is_one_line(arguments, message):
    result = subprocess.run([sys.executable, "-m", "bench.models", *arguments], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
