"""bench/sanitize.py reads both sanitizers' summary lines."""

from bench.sanitize import errors_in


def test_memcheck_and_racecheck_summaries_are_read():
    assert errors_in("========= COMPUTE-SANITIZER\nout: ok\n========= ERROR SUMMARY: 0 errors\n") == "0"
    assert errors_in("========= ERROR SUMMARY: 12 errors") == "12"
    assert errors_in("========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warnings)") == "2"
    assert errors_in("Traceback (most recent call last):\n  ...") is None
