"""Pass statistics: what each pass changed, reported by `--pass-stats`.

A pass counts with `count(self, "batchnorms folded")` and explains what it left alone
with `note(self, "refused conv2d at foo.mlir:12:3: second conv is 3x3")`. The tools
collect a run's statistics with `collecting()` and print them with `format_statistics`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.passes import ModulePass


@dataclass(eq=False)
class PassStatistics:
    counters: dict[str, Counter[str]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)

    def count(self, pass_name: str, what: str, amount: int = 1) -> None:
        self.counters.setdefault(pass_name, Counter())[what] += amount
        self.notes.setdefault(pass_name, [])

    def note(self, pass_name: str, text: str) -> None:
        self.counters.setdefault(pass_name, Counter())
        self.notes.setdefault(pass_name, []).append(text)

    def get(self, pass_name: str, what: str) -> int:
        return self.counters.get(pass_name, Counter())[what]


_active: list[PassStatistics] = []


def _name(pass_or_name: ModulePass | str) -> str:
    return pass_or_name if isinstance(pass_or_name, str) else pass_or_name.name


def count(pass_or_name: ModulePass | str, what: str, amount: int = 1) -> None:
    """Adds to a counter of the running pass (a no-op when nobody collects)."""
    for statistics in _active:
        statistics.count(_name(pass_or_name), what, amount)


def note(pass_or_name: ModulePass | str, text: str) -> None:
    """Records why a pass left something alone."""
    for statistics in _active:
        statistics.note(_name(pass_or_name), text)


@contextmanager
def collecting() -> Iterator[PassStatistics]:
    """Collects the statistics of every pass run inside the block."""
    statistics = PassStatistics()
    _active.append(statistics)
    try:
        yield statistics
    finally:
        _active.remove(statistics)


def format_statistics(statistics: PassStatistics, pass_names: list[str] | None = None) -> str:
    """A readable report, pass by pass, in the order the passes ran (`pass_names`, when
    given, lists passes that recorded nothing too)."""
    lines = ["=== pass statistics ==="]
    names = list(pass_names or [])
    names += [name for name in statistics.counters if name not in names]
    for pass_name in names:
        counter = statistics.counters.get(pass_name, Counter())
        lines.append(pass_name)
        if not counter and not statistics.notes.get(pass_name):
            lines.append("  (nothing changed)")
        for what, amount in counter.items():
            lines.append(f"  {amount:>6} {what}")
        for text in statistics.notes.get(pass_name, []):
            lines.append(f"         - {text}")
    return "\n".join(lines) + "\n"
