"""The selectors behind `select-kernels{selector=db}` and `select-kernels{selector=tune}`.

- `DatabaseSelector` (`db`) reads the tuning database only: an op whose key has a record
  gets the fastest correct candidate recorded for it (among the CUTLASS generations the
  build allows); any other op gets the heuristic's choice. It never touches a GPU, so a
  pipeline replayed with bolt-opt gives the same IR as long as the database is the same.
  With `gpu` empty it takes the newest record of any GPU for the key (a CPU machine
  building for the H200 whose tuning was imported). With `gpu` set, a key the database
  lacks is looked up in the shipped tuning data of that GPU (`database.ShippedTuning`,
  package data); the user's records always come first. `boltir.compiler` sets `gpu` to
  this machine's GPU where shipped data exists for it (`local_shipped_gpu`).
- `TuningSelector` (`tune`) first measures, on this machine's GPU, every op the database
  lacks (`profiler.Tuner`), then selects as `db` does.

A record whose choice the current template rules refuse (a database from another boltir)
is not used: the heuristic decides, and `--pass-stats` says so. So is a record that never
measured the choice this build's heuristic makes (`tuner.raced_the_heuristic`): it was
measured before a kernel family or a rule changed that choice, or under other
select-kernels options, so it cannot say its choice is the faster. A tuned build is thus
never one whose records skipped the heuristic's kernel.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from xdsl.ir import Operation

from boltir.backends.cuda.select.choice import UNFUSE, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.backends.cuda.tune.database import TuningDatabase, TuningRecord, default_path, shipped_tuning, tuning_key
from boltir.backends.cuda.tune.tuner import Tuner, gpu_identity, lower_alone, raced_the_heuristic, single_op_module
from boltir.diagnostics import BoltError


def allowed_generations(arch: str, cutlass: int):
    """Which recorded choices a build may use: 3.x ones only on sm90 with cutlass = 3."""

    def allowed(choice: KernelChoice | str) -> bool:
        return choice == UNFUSE or choice.arch == "sm80" or (arch == "sm90" and cutlass >= 3)

    return allowed


@dataclass
class DatabaseSelector:
    name: str = "db"
    sms: int = 0
    cutlass: int = 3
    tuning_db: str = ""
    gpu: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _database: TuningDatabase | None = None
    _source: str = ""
    """Where the last recorded choice came from (the count it adds to)."""

    def __post_init__(self):
        self.heuristic = HeuristicSelector(sms=self.sms, cutlass=self.cutlass)

    @property
    def database(self) -> TuningDatabase | None:
        """The database, or None when the default one does not exist yet (nothing tuned)."""
        if self._database is None:
            from pathlib import Path

            path = Path(self.tuning_db).expanduser() if self.tuning_db else default_path()
            if not path.exists():
                if not self.notes:
                    shipped = self.gpu in shipped_tuning().gpus()
                    self.notes.append(f"no tuning database at {path}: " + (
                        f"kernels from the tuning data shipped for the {self.gpu} where it has them, else the heuristic's"
                        if shipped else "every kernel is the heuristic's (untuned)"))
                return None
            self._database = TuningDatabase.open(path, create=False)
        return self._database

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def lookup(self, op: Operation, arch: str) -> tuple[TuningRecord | None, str]:
        """The op's record and where it came from: the user's database, else (for a named
        GPU) the shipped data."""
        key = tuning_key(op, arch, self.gpu)
        database = self.database
        record = database.lookup(key) if database is not None else None
        if record is not None:
            return record, "kernels from the tuning database"
        record = shipped_tuning().lookup(key) if self.gpu else None
        return record, "kernels from the shipped tuning data"

    def recorded(self, op: Operation, arch: str) -> KernelChoice | str | None:
        record, source = self.lookup(op, arch)
        if record is None:
            return None
        self._source = source
        heuristic = self.heuristic.select(op, arch)
        if self.never_raced(op, heuristic, record):
            return None
        best = record.best_of(allowed_generations(arch, self.cutlass), prefer=heuristic)
        if best is None:
            return None
        choice = best[0]
        if choice != UNFUSE:
            try:
                lower_alone(single_op_module(op), choice)
            except BoltError as error:
                self.notes.append(f"{op.name}: the recorded {choice.family} choice is refused ({error.message}); heuristic used")
                self._count("records refused")
                return None
        return choice

    def never_raced(self, op: Operation, heuristic: KernelChoice | str, record: TuningRecord) -> bool:
        """Whether `record` never measured `heuristic`, the choice this build's heuristic makes
        for `op` (counted and noted: the heuristic decides)."""
        if raced_the_heuristic(record, heuristic):
            return False
        what = heuristic.family if isinstance(heuristic, KernelChoice) else heuristic
        self.notes.append(f"{op.name}: its record never raced the heuristic's {what} choice (measured before it, "
                          "or under other select-kernels options); heuristic used")
        self._count("records that never raced the heuristic's choice")
        return True

    def select(self, op: Operation, arch: str) -> KernelChoice | str:
        choice = self.recorded(op, arch)
        if choice is not None:
            self._count(self._source)
            return choice
        self._count("kernels from the heuristic")
        return self.heuristic.select(op, arch)


@functools.cache
def local_gpu_name() -> str:
    """This machine's GPU 0, "" without one (asked of the driver once per process)."""
    try:
        return gpu_identity()[0]
    except BoltError:
        return ""


def build_as_gpu(name: str) -> None:
    """This process's builds take `name`'s shipped records from now on, as builds on that GPU
    do: bench scripts compiling a device's objects on a machine without it."""
    global local_gpu_name
    local_gpu_name = lambda: name  # noqa: E731


def local_shipped_gpu() -> str:
    """This machine's GPU where the package ships tuning data for it, else ""."""
    name = local_gpu_name()
    return name if name and name in shipped_tuning().gpus() else ""


@dataclass
class TuningSelector(DatabaseSelector):
    name: str = "tune"
    progress: bool = True
    report: list[str] = field(default_factory=list)

    @property
    def database(self) -> TuningDatabase:
        if self._database is None:
            self._database = TuningDatabase.open(self.tuning_db or None)
        return self._database

    def prepare(self, ops: list[Operation], arch: str) -> None:
        """Measures what the database lacks, for all of `ops` at once (their instances are
        compiled together)."""
        tuner = Tuner(self.database, arch, self.cutlass, progress=self.progress, heuristic=self.heuristic)
        self.gpu = tuner.gpu[0]
        tuner.tune(ops)
        self.report.extend(tuner.report)
