"""Helpers for tests of the command-line programs."""

from __future__ import annotations

from boltir.tools import boltc


def error_of(capsys, argv) -> str:
    """boltc's one-line error for `argv` (exit status 1, no traceback)."""
    assert boltc.main(argv) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    (line,) = captured.err.strip().splitlines()
    return line
