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
