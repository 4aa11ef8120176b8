"""bench/check_halo_conv.py without a GPU: its cases reach our kernel in every mode that
takes them, and the mode it leaves for the later stages is the fastest of the correct ones."""

from __future__ import annotations

from bench.check_halo_conv import MODEL_CONVS, TMA_MODES, cases, fastest_correct_mode
from bench.harness import lower_cases
from boltir.backends.cuda.codegen import halo_conv_kernels


def test_every_case_lowers_to_our_kernel_in_its_mode():
    rows, lowered = lower_cases(cases(), None, halo_conv_kernels.computes)
    assert not rows, rows[:3]
    assert {halo_conv_kernels.marked_tile(case.op).mode for case in lowered} == set(halo_conv_kernels.MODES)
    # every mode, and the TMA_MODES again with their patches by TMA
    assert sum(case.label.startswith(tuple(MODEL_CONVS)) for case in lowered) == \
        (len(halo_conv_kernels.MODES) + len(TMA_MODES)) * len(MODEL_CONVS)
    assert {halo_conv_kernels.marked_tile(case.op).mode for case in lowered if case.label.endswith(" tma")} == \
        {*TMA_MODES, 3}


def timed(conv: str, kernel: str, ms: float) -> tuple:
    return (conv, kernel, ms, 0.0, 0.0, "")


def test_the_mode_left_for_later_stages_is_the_fastest_correct_one():
    rows = [("a m1", "k", "1e-4", "<", "pass"), ("a m2", "k", "-", "?", "FAIL"), ("a m3", "k", "1e-4", "<", "pass")]
    timing = [timed("vgg", "halo_conv 112x2", 0.30), timed("vgg", "halo_conv 112x2m2", 0.10),
              timed("vgg", "halo_conv 112x2m3", 0.25), timed("vgg", "3.x 128x64x64 ws c1x1", 0.40),
              timed("stem", "halo_conv 112x2", 0.05), timed("stem", "halo_conv 112x2m2", 0.02),
              timed("stem", "halo_conv 112x2m3", 0.04)]
    assert fastest_correct_mode(rows, timing) == 3  # mode 2 is faster but wrong
    failed = [*rows[:2], ("a m3", "k", "2e-1", "<", "FAIL")]
    assert fastest_correct_mode(failed, timing) == 1
    # more_warps' four-row tile is no mode's default: mode 1 keeps one time a conv
    assert fastest_correct_mode(failed, [*timing, timed("vgg", "halo_conv 56x4", 0.01)]) == 1
    timing[-1] = timed("stem", "halo_conv 112x2m3", float("nan"))  # failed to run on one conv
    assert fastest_correct_mode(rows, timing) == 1
    assert fastest_correct_mode([("a m1", "k", "-", "?", "FAIL")], timing) is None


def test_a_mode_timed_on_several_tiles_counts_its_fastest_on_each_conv():
    """The general convs time GENERAL_TILES beside each mode's default: RepVGG-A0's three
    48-channel 3x3s on the H100 (bench/RESULTS.md), where mode 4 is fastest in all."""
    rows = [(f"a m{mode}", "k", "1e-4", "<", "pass") for mode in (1, 2, 3, 4)]
    timing = [timed("s2", "halo_conv 56x1", 0.0442), timed("s2", "halo_conv 56x1m2", 0.0330),
              timed("s2", "halo_conv 56x1m3", 0.0436), timed("s2", "halo_conv 56x1m4", 0.0367),
              timed("s2", "halo_conv 56x2m2", 0.0324), timed("s2", "halo_conv 32x2m4", 0.0358),
              timed("s2", "halo_conv 16x4m4", 0.0010),  # four rows: no mode's default
              timed("s1", "halo_conv 56x2", 0.0233), timed("s1", "halo_conv 56x2m2", 0.0252),
              timed("s1", "halo_conv 56x2m3", 0.0245), timed("s1", "halo_conv 56x2m4", 0.0198)]
    assert fastest_correct_mode(rows, timing) == 4
    # TMA tiles (a "t" suffix) are no mode's default either (the thirty-eighth session's crash)
    assert fastest_correct_mode(rows, [*timing, timed("s2", "halo_conv 56x2m2t", 0.0001),
                                       timed("s1", "halo_conv 56x2t", 0.0001)]) == 4


def test_where_wrong_points_at_the_columns_a_misaligned_window_breaks():
    import numpy as np

    from bench.check_halo_conv import where_wrong

    expected = np.ones((1, 4, 16, 64))
    got = expected.copy()
    got[:, :, 3::8, :] = 5.0   # every column 3 mod 8 wrong
    got[0, 0, 0, 0] = np.nan   # one element never written
    lines = where_wrong(got, expected, halo_conv_kernels.HaloTile(8, 2))
    assert lines[0].endswith("1 never written")
    assert lines[1].startswith("column mod 8: 0: 0%, 1: 0%, 2: 0%, 3: 100%, 4: 0%")
    assert lines[2] == "row in tile: 0: 13%, 1: 12%"


def test_timing_only_keeps_the_named_convs(monkeypatch, capsys):
    """--timing-only (comma-separated texts) times only the convs it names; with --only
    matching no case, --list shows just their kernels (what a profiler run launches)."""
    import sys

    from bench import check_halo_conv

    monkeypatch.setattr(sys, "argv", ["check_halo_conv", "--only", "no such case", "--list", "--timing-only",
                                      "vgg16 3x3 64->64 224² N32,vgg16 stem 3x3 16->64 224² N32"])
    assert check_halo_conv.main() == 0
    listed = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert {label.split(" N32")[0] for label in listed} == {"vgg16 3x3 64->64 224²", "vgg16 stem 3x3 16->64 224²"}
    # every mode, the TMA_MODES by TMA, three and four warpgroups (more_warps), and CUTLASS's (or our stem's) choice
    assert len(listed) == 2 * (len(halo_conv_kernels.MODES) + len(TMA_MODES) + 2 * len(halo_conv_kernels.MORE_WARPS_MODES) + 1)
    assert sum(label.endswith(('x3 m1', 'x4 m1')) for label in listed) == 4


def test_profile_mode_is_off_unless_asked(monkeypatch):
    from bench.harness import PROFILE_ENV, profile_launches

    monkeypatch.delenv(PROFILE_ENV, raising=False)
    calls = []
    assert profile_launches(lambda: calls.append(1)) is False and not calls


def test_the_general_cases_reach_the_general_form_in_every_mode():
    """Stride 2, padded channels and partial channel blocks (RepVGG-A0's 48-channel 3x3s)
    reach our kernel's general form in each mode; the rule leaves GENERAL_CONVS to CUTLASS,
    which their timing sets it against."""
    from bench.check_halo_conv import GENERAL_CONVS
    from bench.harness import Case
    from tests.support.op_modules import conv_text

    rows, lowered = lower_cases([case for case in cases() if case.label.startswith("general")], None, halo_conv_kernels.computes)
    assert not rows, rows[:3]
    assert all(halo_conv_kernels.general(case.op) for case in lowered)
    assert {halo_conv_kernels.marked_tile(case.op).mode for case in lowered} == set(halo_conv_kernels.MODES)
    for label, shape in GENERAL_CONVS.items():
        _, (theirs,) = lower_cases([Case(f"{label} cutlass", conv_text(32, **shape), target="sm90")])
        assert not halo_conv_kernels.computes(theirs.op), label
