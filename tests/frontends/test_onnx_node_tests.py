"""The ONNX backend node tests: at least 90% of the in-scope cases pass, and the ones that
fail are exactly those listed, with their reasons, in onnx_node_expected_failures.txt."""

from __future__ import annotations

import pytest

from tests.frontends.onnx_node_tests import read_expected_failures, run_all

PASS_RATE_FLOOR = 0.90


@pytest.fixture(scope="module")
def outcomes():
    return run_all()


def test_pass_rate_is_at_least_90_percent(outcomes):
    passed = sum(o.failure is None for o in outcomes)
    assert passed / len(outcomes) >= PASS_RATE_FLOOR, f"{passed} of {len(outcomes)} pass"


def test_failures_are_exactly_the_listed_ones(outcomes):
    expected = read_expected_failures()
    failed = {o.name: o.failure for o in outcomes if o.failure}
    newly_failing = {name: reason for name, reason in failed.items() if name not in expected}
    now_passing = sorted(set(expected) - set(failed))
    assert not newly_failing, f"cases that now fail: {newly_failing}"
    assert not now_passing, f"listed as failing but pass now (remove them from the list): {now_passing}"


def test_listed_reasons_are_current(outcomes):
    expected = read_expected_failures()
    changed = {o.name: (expected[o.name], o.failure) for o in outcomes if o.failure and o.name in expected and expected[o.name] != o.failure}
    assert not changed, f"the failure reason changed: {changed}"
