"""bench/check_jobs.py (carry_objects' --check, kernel_resources): the compile jobs a check
script's --build-only looks up, recorded in this process (a stand-in script here: no nvcc
runs); and kernel_resources' reading of ptxas's -v lines."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bench.check_jobs import check_jobs
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.toolchain.nvcc import Toolchain

SCRIPT = r'''
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
if args.only == "fail":
    raise RuntimeError("the build failed\nmore lines")
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch) -> str:
    (tmp_path / "stand_in_check.py").write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "stand_in_check"
    sys.modules.pop("stand_in_check", None)


def test_the_jobs_a_check_looks_up_are_recorded(stand_in):
    toolchain = Toolchain(Path("nvcc"), "13.0", (), "cutlass")
    expected = {toolchain.object_key(CompileJob(name, "// " + name, "sm80")) for name in ("x", "y")}
    jobs = check_jobs(f"{stand_in} --only x,y")
    assert set(jobs) == expected and sorted(job.name for job in jobs.values()) == ["x", "y"]
    assert Toolchain.object_key.__name__ == "object_key"  # the recorder is gone again


def test_a_check_that_fails_is_one_line(stand_in):
    with pytest.raises(SystemExit) as failed:
        check_jobs(f"{stand_in} --unknown")
    assert str(failed.value) == f"--check '{stand_in} --unknown': its --build-only exited with 2"
    with pytest.raises(SystemExit, match="No module named"):
        check_jobs("bench.no_such_check")
    with pytest.raises(SystemExit, match=r"^--check '.*': the build failed$"):
        check_jobs(f"{stand_in} --only fail")


PTXAS = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN16boltir_instances29boltir_stem_conv_937348cd141f6kernelEPK6__halfS3_S3_S3_PS1_' for 'sm_90a'
ptxas info    : Function properties for _ZN16boltir_instances29boltir_stem_conv_937348cd141f6kernelEPK6__halfS3_S3_S3_PS1_
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 432 bytes cmem[0]
ptxas info    : Compiling entry function '_Z5otherv' for 'sm_80'
ptxas info    : Function properties for _Z5otherv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, 360 bytes cmem[0]
"""


def test_ptxas_lines_become_one_row_a_kernel_and_arch():
    from bench.kernel_resources import Usage, parse

    first, second = parse("unit", PTXAS)
    assert (first.arch, first.registers, first.barriers, first.stack, first.spill_stores, first.spill_loads) == ("sm_90a", 168, 1, 8, 4, 12)
    if shutil.which("c++filt"):
        assert first.function == "boltir_stem_conv_937348cd141f"
    assert second == Usage("unit", second.function, "sm_80", 40, 0, 0, 0, 0)
