"""bench/check_stem_conv.py without a GPU: every correctness case reaches our kernel (the
wide 48-channel ones by their asked-for tiles, since the heuristic keeps CUTLASS there), and
every timed conv sets ours against CUTLASS's own choice, not the halo or streaming conv."""

from __future__ import annotations

from bench.check_stem_conv import STEMS, WIDE_TILES, Case, correctness_cases, describe, lower, timing_plans
from boltir.backends.cuda.codegen import stem_conv_kernels
from tests.support.op_modules import conv_text


def test_every_correctness_case_lowers_to_our_kernel():
    lowered = [lower(case) for case in correctness_cases()]
    assert all(stem_conv_kernels.computes(case.op) for case in lowered)
    wide = [case for case in lowered if "x48->48" in case.label]
    assert {stem_conv_kernels.marked_tile(case.op) for case in wide} >= {stem_conv_kernels.StemTile(*t) for t in WIDE_TILES}


def test_every_timed_conv_is_ours_against_cutlass():
    plans = timing_plans(None)
    assert {name for name, *_ in plans} == set(STEMS)
    for name, batch, _, ours, theirs in plans:
        assert stem_conv_kernels.computes(ours.op), (name, batch)
        assert describe(theirs).startswith("cutlass.conv2d_fprop"), (name, batch, describe(theirs))
    # the 48-channel convs at batch 32: the default tile and every WIDE_TILES one
    wide = [describe(ours) for name, batch, _, ours, _ in plans if name.startswith("repvgg_a0 3x3/2") and batch == 32]
    assert len(wide) == 1 + len(WIDE_TILES)
    assert [name for name, *_ in timing_plans("C48")] == [name for name, *_ in plans if "C48" in name]


def test_the_cutlass_comparison_keeps_the_blocked_stems_on_cutlass():
    """The halo conv's sm90 rule takes ResNet-50's blocked stem at batch 32 (and the streaming
    conv MobileNetV2's): the comparison turns both off."""
    shape, _ = STEMS["resnet50 s2d 4x4 C16->64"]
    theirs = lower(Case("resnet50 N32 cutlass", conv_text(32, **shape), few_channels="cutlass"))
    assert describe(theirs).startswith("cutlass.conv2d_fprop")
