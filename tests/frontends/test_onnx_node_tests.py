"""The ONNX backend node tests: at least 90% of the in-scope cases pass, and the ones that
fail are exactly those listed, with their reasons, in onnx_node_expected_failures.txt."""

from __future__ import annotations

import re

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


COMPARISON_AND_LOGICAL = re.compile(r"test_(greater|greater_equal|less|less_equal|not|and|or|xor)(_bcast\w*|_u?int\d+|_?\dd)?")


def test_comparison_and_logical_cases_are_in_scope_and_pass(outcomes):
    """Greater, GreaterOrEqual, Less, LessOrEqual (floats, signed and unsigned integers,
    broadcasting), Not, And, Or and Xor: every backend case of theirs runs and passes."""
    ours = {o.name: o.failure for o in outcomes if COMPARISON_AND_LOGICAL.fullmatch(o.name)}
    covered = {COMPARISON_AND_LOGICAL.fullmatch(name).group(1) for name in ours}
    assert covered == {"greater", "greater_equal", "less", "less_equal", "not", "and", "or", "xor"}
    assert len(ours) >= 50, sorted(ours)
    assert not {name: failure for name, failure in ours.items() if failure}
