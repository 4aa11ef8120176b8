"""User-facing errors: one line, `file:line:col: error: message`, never a traceback."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Attribute


class BoltError(Exception):
    """An error caused by the user's input (a model, IR, an option), not by boltir."""

    def __init__(self, message: str, location: str | None = None):
        message = one_line(message)
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error: {self.message}"


def one_line(message: str) -> str:
    """Joins a multi-line message (xDSL's constraint errors are) into one line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return " ".join(line if line.endswith((":", ";", ".")) or i == len(lines) - 1 else line + ";" for i, line in enumerate(lines))


def format_location(location: Attribute | None) -> str | None:
    """`file:line:col` for a FileLineColLoc, None for anything else."""
    if isinstance(location, FileLineColLoc):
        return f"{location.filename.data}:{location.line.data}:{location.column.data}"
    return None


def format_bytes(count: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"
