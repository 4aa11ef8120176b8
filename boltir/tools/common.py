"""What every boltir command shares: errors as one line on stderr, exit status 1."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable

from boltir.diagnostics import BoltError


def run_tool(tool: str, body: Callable[[], object], *, debug: bool) -> int:
    """Runs a command's body; user errors and crashes become one line unless `debug`."""
    try:
        body()
    except BoltError as error:
        if debug:
            traceback.print_exc()
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # a bug in boltir: still no traceback unless asked
        if debug:
            traceback.print_exc()
        print(
            f"error: internal error in {tool}: {type(error).__name__}: {error} "
            "(run with --debug for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    return 0
