"""Programmatic dependent launch (templates/boltir_pdl.h): every kernel we write waits on
the grids before it first, every launch of ours goes through boltir_pdl::launch, and a
Hopper build compiles our kernels for sm_90a with PDL on (an A100 build keeps them plain)."""

from __future__ import annotations

import re

import pytest

from boltir.backends.cuda.codegen import host_program
from boltir.backends.cuda.codegen.generator import TEMPLATES, CompileJob
from boltir.compiler import lower
from tests.support.bucket_models import bert_layer

KERNEL_TEMPLATES = sorted(p for p in TEMPLATES.rglob("*.j2") if "__global__" in p.read_text())
SET_UP_FIRST = {"compute/wgsplit_gemm.cu.j2"}
"""Kernels that initialize their mbarriers and prefetch their TMA descriptors before the
wait, so that the set-up overlaps the grid before: shared memory and kernel parameters only,
never memory a grid writes."""


@pytest.mark.parametrize("path", KERNEL_TEMPLATES, ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_every_kernel_enters_first(path):
    """A kernel launched with PDL may start before its predecessor ends: its first
    statement must be the wait (enter), before any global memory access (SET_UP_FIRST's
    set-up aside, which touches none)."""
    text = path.read_text()
    kernels = [match.start() for match in re.finditer("__global__", text)]
    for start in kernels:
        body = function_body(text, start)
        statements = text[body:].lstrip()
        if statements.startswith("boltir_pdl::trigger();"):
            # only a wrapper that runs a CUTLASS 3.x kernel, which waits itself; before it,
            # at most an L2 prefetch (a hint: it changes nothing any load reads)
            assert re.match(r"boltir_pdl::trigger\(\);\s*(boltir_pdl::prefetch_share\(prefetch, prefetch_bytes\);)?\s*"
                            r"extern __shared__ char smem\[\];\s*Kernel op;\s*op\(params, smem\);",
                            statements), text[start:body + 200]
            continue
        # before the wait, at most an L2 prefetch of a weight (a hint: it changes nothing any load reads)
        statements = re.sub(r"^boltir_pdl::prefetch_share\(params\.prefetch, WEIGHT_BYTES\);[^\n]*\n\s*", "", statements)
        if str(path.relative_to(TEMPLATES)) in SET_UP_FIRST:
            before, wait, _ = statements.partition("boltir_pdl::enter();")
            assert wait, text[start:body + 80]
            # the parameters it reads are the TMA descriptors and their byte counts; no pointer is followed
            assert set(re.findall(r"\bparams\.(\w+)", before)) <= {"mainloop"}, before
            assert not re.search(r"->|\bparams\.\w+\s*\[|\bcollective\.load\(|\bmma\(", before), before
            continue
        assert statements.startswith("boltir_pdl::enter();"), text[start:body + 80]
    assert "<<<" not in text, "launch through boltir_pdl::launch, which decides whether PDL applies"


def function_body(text: str, start: int) -> int:
    """Where the body of the function declared at `start` begins: after the first brace
    outside its parentheses that does not open a jinja tag ({{, {%, {#)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        elif text[i] == "{" and depth == 0 and text[i + 1] not in "{%#":
            return i + 1
    raise AssertionError(f"no body after {text[start:start + 80]!r}")


def test_the_header_is_in_every_unit_kind():
    for unit in ("translation_unit.cu.j2", "compute/unit.cu.j2", "data/translation_unit.cu.j2"):
        assert '{% include "boltir_pdl.h" %}' in (TEMPLATES / unit).read_text()


def test_flags():
    sm90, sm80 = CompileJob("k", "", "sm90").flags, CompileJob("k", "", "sm80").flags
    assert "-DBOLTIR_PDL=1" in sm90 and "-DCUTLASS_ENABLE_GDC_FOR_SM90" in sm90
    assert not any(flag.startswith("-DBOLTIR_PDL") for flag in sm80)


@pytest.mark.parametrize("arch", ["sm90", "sm80"])
def test_own_kernels_follow_the_build(tmp_path, arch):
    lowered = lower(bert_layer(tmp_path / "layer.onnx", hidden=256, heads=4), arch=arch, dtype="f16",
                    input_shapes={"x": (2, 128, 256)})
    program = host_program.build_program(lowered.module)
    own = {step.kernel for step in program.steps
           if host_program.generator_of(step.op) in host_program.OWN_GENERATORS}
    archs = {unit.name: unit.arch for unit in program.units}
    assert own and {archs[name] for name in own} == {arch}
    assert archs["host"] == arch
    if arch == "sm90":
        assert any(unit.arch == "sm90" and unit.name not in own | {"host"} for unit in program.units)


def test_the_prefetch_touches_no_memory_but_the_l2():
    """What runs before a 3.x kernel's own wait: one bulk prefetch into the L2 per CTA, of
    that CTA's share of the weight, and nothing that loads or stores."""
    header = (TEMPLATES / "boltir_pdl.h").read_text()
    body = header[header.index("void prefetch_share("):]
    body = body[:body.index("\n}\n")]
    assert "cp.async.bulk.prefetch.L2.global" in body
    assert not re.search(r"\bld\.|\bst\.|cp\.async\.bulk\.(shared|global\.shared)", body)


def test_few_row_gemms_prefetch_their_weight(tmp_path):
    """The sm90 GEMM launcher passes B and its bytes to launch_3x at most SMALL_M_ROWS rows,
    unbatched, and at most PREFETCH_MAX_BYTES; BOLTIR_PDL=noprefetch turns it off."""
    from boltir.backends.cuda.codegen import cutlass_kernels, cutlass_sm90

    lowered = lower(bert_layer(tmp_path / "layer.onnx", hidden=256, heads=4), arch="sm90", dtype="f16",
                    input_shapes={"x": (1, 128, 256)})
    source = cutlass_kernels.emit_translation_unit(lowered.module)
    assert f"rows <= {cutlass_sm90.SMALL_M_ROWS} &&" in source
    assert f"b_bytes <= {cutlass_sm90.PREFETCH_MAX_BYTES}ull" in source
    assert "stream, prefetch ? b : nullptr, prefetch ? b_bytes : 0)" in source
    assert "prefetch = boltir_pdl::prefetch_weights() ? prefetch : nullptr;" in source
    assert 'strcmp(value, "noprefetch")' in source
