"""bench/check_attention.py's library build: the Hopper units take their own flags (as a
model's build does), and `--no-unit-flags` builds the baseline without them."""

from __future__ import annotations

import bench.check_attention as ca


def _jobs(monkeypatch, unit_flags: bool) -> list:
    seen = []
    monkeypatch.setattr(ca, "build_shared_library", lambda jobs, path, progress: seen.extend(jobs) or path)
    cases = [c.make() for c in ca.timing_cases() if c.label.startswith("b32 h12 s512 d64 BHSD")]
    ca.build_library(cases, "/tmp/unused.so", unit_flags=unit_flags)
    return seen


def test_hopper_units_take_fast_math_and_the_baseline_does_not(monkeypatch):
    built = _jobs(monkeypatch, True)
    hopper = [job for job in built if job.arch == "sm90"]
    assert hopper and all(job.extra_flags == ("--use_fast_math",) for job in hopper)
    assert all(job.extra_flags == () for job in built if job.arch != "sm90")
    baseline = _jobs(monkeypatch, False)
    assert {job.name for job in baseline} == {job.name for job in built}
    assert all(job.extra_flags == () for job in baseline)


def test_kernels_chooses_the_timed_columns_and_refuses_unknown_ones():
    kernels = ca.chosen_kernels("sm90,overlap_q4,sm90:overlap")
    assert kernels == ("sm90", "sm90:overlap", "sm90:overlap_q4")  # KERNELS' order
    assert {c.kernel for c in ca.timing_cases(kernels)} == set(kernels)
    assert ca.timing_header(kernels)[1:4] == ("sm90 ms", "sm90 overlap ms", "sm90 q4 ms")
    assert ca.chosen_kernels(None) == tuple(ca.KERNELS)
    try:
        ca.chosen_kernels("overlap,sideways")
    except SystemExit as error:
        assert str(error).startswith("error: unknown kernels sideways; known: sm80, sm90,")
    else:
        raise AssertionError("an unknown kernel was taken")


def test_the_timing_row_gives_our_fastest_kernels_tflops():
    case = ca.timing_cases(("sm90:overlap",))[0]
    timed = ca.Timed(case, flops=2e9, ours={"sm90:overlap": (0.01, 1e-4)}, peers={"CUDNN_ATTENTION": 0.012})
    row = dict(zip(ca.timing_header(("sm90:overlap",)), ca.timing_rows([timed], ("sm90:overlap",))[0]))
    assert row["sm90 overlap ms"] == "0.0100" and row["our best TFLOP/s"] == "200"
    assert row["fastest/our best"] == "1.20x (sm90 overlap)"


def test_every_128_key_schedule_has_its_correctness_cases():
    assert ca.wide_tile_schedules() == ["wide", "locked", "overlap", "wide_q4", "overlap_q4", "overlap_q4_sums",
                                        "overlap_q4kv8"]
    kernels = {case.kernel for case in ca.sm90_correctness_cases()}
    assert {f"sm90:{schedule}" for schedule in ca.wide_tile_schedules()} <= kernels
