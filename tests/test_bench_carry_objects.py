"""bench/carry_objects.py's --check: the object-cache keys a check script's --build-only
looks up, recorded in this process (a stand-in script here: no nvcc runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.carry_objects import check_keys
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.toolchain.nvcc import Toolchain

SCRIPT = '''
import argparse
from pathlib import Path
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.toolchain.nvcc import Toolchain

parser = argparse.ArgumentParser()
parser.add_argument("--only", default="a")
parser.add_argument("--build-only", action="store_true")
args = parser.parse_args()
assert args.build_only, "carry_objects asks for --build-only"
toolchain = Toolchain(Path("nvcc"), "13.0", (), "cutlass")
for name in args.only.split(","):
    toolchain.object_key(CompileJob(name, "// " + name, "sm80"))
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch) -> str:
    (tmp_path / "stand_in_check.py").write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "stand_in_check"
    sys.modules.pop("stand_in_check", None)


def test_the_keys_a_check_looks_up_are_kept(stand_in):
    toolchain = Toolchain(Path("nvcc"), "13.0", (), "cutlass")
    expected = {toolchain.object_key(CompileJob(name, "// " + name, "sm80")) for name in ("x", "y")}
    assert check_keys(f"{stand_in} --only x,y") == expected
    assert Toolchain.object_key.__name__ == "object_key"  # the recorder is gone again


def test_a_check_that_fails_is_one_line(stand_in):
    with pytest.raises(SystemExit) as failed:
        check_keys(f"{stand_in} --unknown")
    assert str(failed.value) == f"carry_objects: --check '{stand_in} --unknown': its --build-only exited with 2"
    with pytest.raises(SystemExit, match="No module named"):
        check_keys("bench.no_such_check")
