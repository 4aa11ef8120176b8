"""bench/check_stem_conv.py without a GPU: every correctness case reaches our kernel, and
every timed conv sets ours against CUTLASS's own choice, not the halo or streaming conv."""

from __future__ import annotations

from bench.check_stem_conv import STEMS, Case, correctness_cases, describe, lower, timing_plans
from boltir.backends.cuda.codegen import stem_conv_kernels
from tests.support.op_modules import conv_text


def test_every_correctness_case_lowers_to_our_kernel():
    assert all(stem_conv_kernels.computes(lower(case).op) for case in correctness_cases())


def test_every_timed_conv_is_ours_against_cutlass():
    plans = timing_plans(None)
    assert [(name, batch) for name, batch, *_ in plans] == [(name, batch) for name in STEMS for batch in (1, 32)]
    for name, batch, _, ours, theirs in plans:
        assert stem_conv_kernels.computes(ours.op), (name, batch)
        assert describe(theirs).startswith("cutlass.conv2d_fprop"), (name, batch, describe(theirs))
    assert [name for name, *_ in timing_plans("vgg16,mobilenet")] == [name for name, *_ in plans if "resnet" not in name]


def test_the_cutlass_comparison_keeps_the_blocked_stems_on_cutlass():
    """The halo conv's sm90 rule takes ResNet-50's blocked stem at batch 32 (and the streaming
    conv MobileNetV2's): the comparison turns both off."""
    shape, _ = STEMS["resnet50 s2d 4x4 C16->64"]
    theirs = lower(Case("resnet50 N32 cutlass", conv_text(32, **shape), few_channels="cutlass"))
    assert describe(theirs).startswith("cutlass.conv2d_fprop")
