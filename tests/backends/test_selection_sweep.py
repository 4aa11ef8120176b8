"""Selection never picks what will not compile (issue 17): over a grid of channel counts
(1 to 4096, the awkward ones included), kernel sizes, strides, groups and batch sizes, every
choice of the heuristic and of the tuner's candidate generator lowers to a cutlass op that
the template rules (`unsupported_reason`, which encode CUTLASS's own static constraints:
warp shapes, alignments, tile divisibility, shared memory) accept, or to an op chosen for
one of our own kernel families whose rules (registers, shared memory, shapes) accept it.

CI sweeps a grid; the slow suite sweeps a larger one. `tests/backends/test_cutlass_kernels.py`
and the slow nvcc tests compile samples of what these choices emit.
"""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import VerifyException

import boltir
from boltir.backends.cuda.codegen.cutlass_common import FAMILIES
from boltir.backends.cuda.codegen.cutlass_kernels import unsupported_reason
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.diagnostics import BoltError
from boltir.ir import make_context, verify_module
from tests.support.op_modules import conv_text
from tests.support.selection_sweep import (
    CHANNELS,
    GEMM_SIZES,
    TARGETS,
    all_cases,
    candidate_modules,
    conv_cases,
    gemm_cases,
    heuristic_instances,
    instances,
)


def check_module(text: str, arch: str, cutlass: int) -> list[str]:
    """What is wrong with the heuristic's and the candidates' choices for the module's op."""
    problems = [f"heuristic {arch}: {reason}" for generator, op in heuristic_instances(text, arch, cutlass)
                if (reason := generator.unsupported_reason(op)) is not None]
    for choice, lowered in candidate_modules(text, arch, cutlass):
        try:
            LowerOpToCutlassPass().apply(make_context(), lowered)
            verify_module(lowered)
        except (BoltError, VerifyException) as error:
            problems.append(f"candidate {arch} {choice}: {str(error).splitlines()[0]}")
            continue
        # an op no template computes stays an op-level op (a plain kernel): no instance to check
        for generator, template in instances(lowered):
            if (reason := generator.unsupported_reason(template)) is not None:
                problems.append(f"candidate {arch} {choice}: {reason}")
    return problems


def sweep(cases) -> list[str]:
    failures = []
    for name, text in cases:
        for arch, cutlass in TARGETS:
            failures += [f"{name}: {p}" for p in check_module(text, arch, cutlass)]
    return failures


def summary(failures: list[str]) -> str:
    reasons = {}
    for failure in failures:
        reasons.setdefault(failure.split(": ", 2)[-1], failure)
    return f"{len(failures)} invalid choices; one per reason:\n" + "\n".join(reasons.values())


def test_convs_and_depthwise_convs_select_only_valid_instances():
    failures = sweep(conv_cases(CHANNELS))
    assert not failures, summary(failures)


def test_gemms_select_only_valid_instances():
    failures = sweep(gemm_cases(GEMM_SIZES))
    assert not failures, summary(failures)


def test_the_reported_depthwise_8_channel_conv_gets_a_warp_cutlass_has():
    """Issue 17's build failure: 8 channels chose threadblock [64, 8, 9], warp [16, 8, 9];
    CUTLASS has no SimtWarpShape<16, 8>."""
    module = boltir.parse_module(conv_text(1, 24, 96, 8, 8, 3, 3, depthwise=True))
    SelectKernelsPass(arch="sm90", selector="heuristic", depthwise="cutlass").apply(make_context(), module)
    LowerOpToCutlassPass().apply(make_context(), module)
    (conv,) = [op for op in module.walk() if type(op) in FAMILIES]
    assert conv.tile.value.warp[1] >= 16
    assert unsupported_reason(conv) is None


def test_the_template_rules_refuse_a_warp_cutlass_lacks():
    module = boltir.parse_module(conv_text(1, 24, 96, 8, 8, 3, 3, depthwise=True))
    SelectKernelsPass(arch="sm90", selector="heuristic", depthwise="cutlass").apply(make_context(), module)
    LowerOpToCutlassPass().apply(make_context(), module)
    (conv,) = [op for op in module.walk() if type(op) in FAMILIES]
    tile = conv.tile.value
    narrow = type(tile)((64, 8, 9), (16, 8, 9), tile.instruction, tile.stages)
    conv.properties["tile"] = type(conv.tile).make(narrow)
    conv.properties["alignment"] = conv.properties["alignment"]
    assert "SimtWarpShape<16, 8>" in unsupported_reason(conv)


@pytest.mark.slow
def test_the_larger_sweep_selects_only_valid_instances():
    failures = sweep(all_cases(slow=True))
    assert not failures, summary(failures)


def test_the_sweep_checks_our_own_kernel_families_too():
    """The heuristic gives batch-1 GEMMs, depthwise convs and image stems to our own kernels,
    and batch-1 deep convs with few pixels; the sweep checks those choices
    against their own rules, not only CUTLASS's."""
    from tests.support.op_modules import gemm_text

    cases = [gemm_text(1, 4096, 4096), conv_text(32, 28, 28, 64, 64, 3, 3, depthwise=True), conv_text(32, 28, 28, 3, 64, 3, 3),
             conv_text(1, 14, 14, 256, 256, 3, 3)]
    generators = {generator.FAMILY for text in cases for generator, _ in heuristic_instances(text, "sm90", 3)
                  if hasattr(generator, "FAMILY")}
    assert generators == {"skinny_gemm", "depthwise_direct", "stem_conv", "splitk_conv"}


def test_narrow_convs_halo_selects_only_valid_instances():
    """`narrow_convs=halo` (off by default, so outside the compiled sweep's grid until its
    second half has run on the GPU host): over the same conv grid, with the channel counts
    the halo conv takes added, each conv it is given carries a tile its rules accept."""
    from tests.support.own_kernel_units import selected

    chosen, failures = 0, []
    for name, text in conv_cases(CHANNELS + (32,), windows=((1, 1), (3, 1), (4, 1), (3, 2)), batches=(32,)):
        module, _ = selected(text, narrow_convs="halo")
        for generator, op in instances(module):
            if getattr(generator, "FAMILY", None) == "halo_conv":
                chosen += 1
                if (reason := generator.unsupported_reason(op)) is not None:
                    failures.append(f"{name}: {reason}")
    assert not failures, summary(failures)
    assert chosen >= 3  # 16, 32 and 64 channels at 28², batch 32
