"""The scripts that run on a GPU machine: kernel and model benchmarks, the kernel checks
against the interpreter, the tuner's driver. Run each from the repository root as a module,
`python3 -m bench.NAME` (docs/BENCHMARKING.md); they import boltir and tests.support, never
by editing sys.path. Not part of the installed package."""

import sys as _sys


def _one_line_bolt_errors(kind, value, traceback, _default=_sys.excepthook):
    """A BoltError that ends a bench script (a selection that matches nothing, a kernel that
    will not build) is its message on stderr, as boltir's tools print it (tools/common.py);
    anything else keeps its traceback."""
    from boltir.diagnostics import BoltError

    if issubclass(kind, BoltError):
        print(value, file=_sys.stderr)
        return
    _default(kind, value, traceback)


_sys.excepthook = _one_line_bolt_errors
