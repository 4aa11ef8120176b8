"""What the tests of our own kernel families share: an op module's conv (`the_conv`,
`conv_of`), the module after select-kernels and lower-op-to-cutlass with its statistics
(`selected`), and the slow tests' check that a family's translation unit compiles with the
real nvcc and CUTLASS's include folders (`assert_unit_compiles`: no error, no warning,
spills included, and every launcher and its workspace query defined; skipped where nvcc is
not found)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

def the_conv(module):
    from boltir.dialects import op as ops

    return next(op for op in module.walk() if isinstance(op, ops.Conv2dOp))


def conv_of(**shape):
    """The op.conv2d of `conv_text(**shape)`."""
    from boltir.ir import parse_module
    from tests.support.op_modules import conv_text

    return the_conv(parse_module(conv_text(**shape)))


def mark(op, generator, tile, arch: str = "sm80", alignment=(8, 8, 8)):
    """The op, its kernel choice set to `generator`'s family with `tile` (returned, marked)."""
    from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice

    op.attributes[KERNEL_ATTR] = KernelChoice(generator.FAMILY, arch, tile.as_tile(), alignment).to_attr()
    return op


def halo_marked(text: str, tile: tuple):
    """The module of `text` with its (first) conv chosen for the halo conv with `tile`
    (columns, rows, mode): small shapes the heuristic would give CUTLASS."""
    from boltir.backends.cuda.codegen import halo_conv_kernels as hc
    from boltir.ir import parse_module

    module = parse_module(text)
    mark(the_conv(module), hc, hc.HaloTile(*tile), "sm90")
    return module


def selected(text: str, arch: str = "sm90", **options):
    """The module after select-kernels (heuristic, `options`) and lower-op-to-cutlass, and the stats."""
    from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
    from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
    from boltir.ir import make_context, parse_module
    from boltir.passes import statistics

    module = parse_module(text)
    with statistics.collecting() as collected:
        SelectKernelsPass(arch=arch, selector="heuristic", **options).apply(make_context(), module)
        LowerOpToCutlassPass().apply(make_context(), module)
    return module, collected


SM80_AND_SM90 = "-gencode=arch=compute_80,code=[sm_80,sm_90]"
SM90A = "-gencode=arch=compute_90a,code=sm_90a"


def assert_unit_compiles(generator, op_list: list, directory: Path, gencode: str = SM80_AND_SM90) -> None:
    from boltir.backends.cuda.codegen.generator import NVCC_FLAGS

    nvcc = os.environ.get("BOLTIR_NVCC") or shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (set BOLTIR_NVCC)")
    from boltir.backends.cuda.toolchain.nvcc import find_cutlass_include_dirs

    source, obj = directory / f"{generator.FAMILY}.cu", directory / f"{generator.FAMILY}.o"
    source.write_text(generator.emit_translation_unit(op_list))
    includes = [f"-I{d}" for d in find_cutlass_include_dirs()]  # a family on CUTLASS's collectives (wgsplit_gemm)
    command = [nvcc, *NVCC_FLAGS, *includes, "-Xcompiler", "-fPIC", gencode, "-Xptxas", "-warn-spills", "-c", str(source),
               "-o", str(obj)]
    result = subprocess.run(command, capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    assert "warning" not in log.lower(), log[-3000:]
    if shutil.which("nm"):
        symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout
        for op in op_list:
            for name in (generator.kernel_name(op), generator.kernel_name(op) + "_workspace_size"):
                assert re.search(rf"\bT {name}$", symbols, re.MULTILINE), f"{name} is not defined"


def assert_fallback_compiles(op, directory: Path) -> None:
    """The plain fallback unit of `op` (its kernel choice removed first) compiles with nvcc,
    with no error and no warning; skipped where nvcc is not found."""
    from boltir.backends.cuda.codegen import compute_kernels
    from boltir.backends.cuda.codegen.generator import NVCC_FLAGS
    from boltir.backends.cuda.select.choice import KERNEL_ATTR

    nvcc = os.environ.get("BOLTIR_NVCC") or shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (set BOLTIR_NVCC)")
    op.attributes.pop(KERNEL_ATTR, None)
    source = directory / "fallback.cu"
    source.write_text(compute_kernels.emit_translation_unit([op]))
    result = subprocess.run([nvcc, *NVCC_FLAGS, "-c", str(source), "-o", str(directory / "fallback.o")],
                            capture_output=True, text=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0 and "warning" not in log.lower(), log[-4000:]
