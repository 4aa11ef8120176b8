"""The tuning database: what the profiler measured, so one model's tuning serves every later
model with the same ops, on this machine and (exported) on others.

    db = TuningDatabase.open(path)                # creates it; a damaged or foreign file is a BoltError
    key = tuning_key(op, arch="sm90", gpu="NVIDIA H200")
    db.store(TuningRecord(key, best, best_ms, measurements))
    record = db.lookup(key)                       # key.gpu "" matches any GPU of that arch

**Storage.** SQLite (stdlib `sqlite3`) in WAL mode with a busy timeout, so several
processes can tune and read at once; every store is one transaction. The default path is
`tuning.sqlite` under the object cache's root (`$BOLTIR_CACHE_DIR`, else
`~/.cache/boltir`).

**Key.** (GPU name, target arch, op kind, dtypes, layouts, epilogue, problem), all text:
the problem holds every operand's shape and, for convs, the window (strides, pads,
dilations, groups). **Record.** The best candidate (a KernelChoice as JSON, or "unfuse"),
its time, every candidate's time or failure, boltir's version and when it was measured.

**Integrity.** The file carries a `meta` table with `format = FORMAT`. A file that is not
SQLite, is damaged, or is another program's (or another format's) database is refused with
a BoltError that names the file and says how to start afresh (`--fresh-tuning-db`, which
moves the old file aside rather than deleting it). Nothing is ever guessed from a bad file.

**Export** writes JSON (one object per record, sorted by key), so a database moves between
machines and can live in a repository; **import** merges records in (newer wins).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.ir import Operation

from boltir.backends.cuda.codegen.depthwise_kernels import DirectTile
from boltir.backends.cuda.select.choice import UNFUSE, KernelChoice
from boltir.backends.cuda.toolchain.nvcc import cache_root
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.cutlass import Tile
from boltir.dialects.graph import python_value, tensor_shape
from boltir.version import __version__

FORMAT = "boltir-tuning-v1"
FILE_NAME = "tuning.sqlite"
BUSY_TIMEOUT_MS = 30_000
KEY_FIELDS = ("gpu", "arch", "op_kind", "dtypes", "layouts", "epilogue", "problem")
FRESH_HINT = "pass --fresh-tuning-db to move it aside and start a new one"


def default_path() -> Path:
    return cache_root() / FILE_NAME


# --------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class TuningKey:
    gpu: str
    arch: str
    op_kind: str
    dtypes: str
    layouts: str
    epilogue: str
    problem: str

    def without_gpu(self) -> tuple[str, ...]:
        return dataclasses.astuple(self)[1:]


_LAYOUT_PROPERTIES = ("layout", "filter_layout", "layout_a", "layout_b", "layout_b0", "layout_b1")
_WINDOW_PROPERTIES = ("strides", "pads", "dilations", "groups")
_EPILOGUE_PROPERTIES = ("epilogue", "epilogue0", "epilogue1", "expand_epilogue")


def _text(value) -> str:
    value = python_value(value) if not isinstance(value, str | int | tuple) else value
    return "x".join(map(str, value)) if isinstance(value, tuple | list) else str(value)


def tuning_key(op: Operation, arch: str, gpu: str = "") -> TuningKey:
    """The database key of an op-level GEMM, conv or b2b op for an `arch` build on `gpu`."""
    operands = [operand for operand in op.operands]
    dtypes = ",".join(str(value.type.element_type) for value in (*operands, *op.results))
    layouts = ",".join(f"{name}={op.prop_value(name)}" for name in _LAYOUT_PROPERTIES if name in op.properties)
    batch = [f"{name}={_text(op.properties[name])}" for name in sorted(op.properties) if name.startswith("batch")]
    layouts = ",".join(filter(None, [layouts, *batch]))
    epilogue = ";".join(str(op.properties[name]) for name in _EPILOGUE_PROPERTIES if name in op.properties)
    shapes = [_text(tensor_shape(value.type)) for value in (*operands, *op.results)]
    window = [f"{name}={_text(op.prop_value(name))}" for name in _WINDOW_PROPERTIES
              if isinstance(op, ops.Conv2dOp | ops.B2bConv2dOp | ops.DepthwisePointwiseConv2dOp)
              and (name in op.properties or name in type(op).get_irdl_definition().properties)]
    # Which operand is which (bias, residual present or not) is part of the problem too.
    roles = ",".join(_operand_roles(op))
    problem = " ".join([",".join(shapes), *window, f"operands={roles}"])
    return TuningKey(gpu, arch, op.name, dtypes, layouts, epilogue, problem)


def _operand_roles(op: Operation) -> list[str]:
    """The names of the operands `op` has (optional ones, such as a bias, may be absent)."""
    return [name for name, _ in type(op).get_irdl_definition().operands if getattr(op, name, None) is not None]


# --------------------------------------------------------------------------- records


def choice_to_json(choice: KernelChoice | str) -> dict | str:
    if choice == UNFUSE:
        return UNFUSE
    return {name: (dataclasses.asdict(value) if isinstance(value, Tile) else value)
            for name, value in dataclasses.asdict(choice, dict_factory=dict).items()}


def choice_from_json(data: dict | str) -> KernelChoice | str:
    if data == UNFUSE:
        return UNFUSE
    try:
        fields = dict(data)
        for name in ("tile", "tile1"):
            if fields.get(name) is not None:
                tile = fields[name]
                fields[name] = Tile(tuple(tile["threadblock"]), tuple(tile["warp"]), tuple(tile["instruction"]), tile["stages"])
        for name in ("alignment", "cluster"):
            if fields.get(name) is not None:
                fields[name] = tuple(fields[name])
        return KernelChoice(**fields)
    except (TypeError, KeyError, ValueError) as error:
        raise BoltError(f"a tuning record holds a kernel choice boltir cannot read ({error}): {data}") from None


@dataclass
class Measurement:
    """One candidate's outcome: status "ok" (with its median ms and error), or "wrong",
    "compile failed", "launch failed", "refused" (the template rules turned it down),
    each with a detail. `timing` says how an "ok" time was taken: "graph" (replays of a
    captured CUDA graph: device time, what a model's graph replay pays) or "stream"
    (launches issued from the host: includes the launcher's host work). Records written
    before boltir timed with graphs have no `timing`; they read as "stream"."""

    choice: KernelChoice | str
    status: str
    ms: float | None = None
    error: float | None = None
    detail: str = ""
    timing: str = ""

    def to_json(self) -> dict:
        data = {"choice": choice_to_json(self.choice), "status": self.status, "ms": self.ms,
                "error": self.error, "detail": self.detail}
        if self.status == "ok":
            data["timing"] = self.timing or "stream"
        return data

    @staticmethod
    def from_json(data: dict) -> Measurement:
        timing = data.get("timing", "stream" if data["status"] == "ok" else "")
        return Measurement(choice_from_json(data["choice"]), data["status"], data.get("ms"), data.get("error"),
                           data.get("detail", ""), timing)


HEURISTIC_MARGIN = 0.03
"""How much faster than the heuristic's choice, timed alone, another candidate must be to
replace it. Within this, timing one launch alone does not tell candidates apart (medians of
graph replays move by about this much between runs), while in a model the launch's
neighbours do: a tile that won alone by a fraction of a percent has run slower in the
model than the heuristic's (VGG-16 b1's fc6, bench/RESULTS.md)."""


def fastest_of(measurements: list[Measurement], allowed=lambda choice: True,
               prefer: KernelChoice | str | None = None) -> Measurement | None:
    """The fastest correct measurement whose choice `allowed` accepts, except that `prefer`'s
    (the heuristic's choice) stands unless another is HEURISTIC_MARGIN faster; None when
    none is correct."""
    good = [m for m in measurements if m.status == "ok" and m.ms is not None and allowed(m.choice)]
    if not good:
        return None
    fastest = min(good, key=lambda m: m.ms)
    preferred = next((m for m in good if m.choice == prefer), None) if prefer is not None else None
    if preferred is not None and preferred.ms <= fastest.ms * (1 + HEURISTIC_MARGIN):
        return preferred
    return fastest


@dataclass
class TuningRecord:
    key: TuningKey
    best: KernelChoice | str
    best_ms: float
    measurements: list[Measurement] = field(default_factory=list)
    version: str = ""
    measured_at: str = ""

    @property
    def timing(self) -> str:
        """"graph" when any candidate was timed by graph replay, else "stream" ("" when
        nothing was timed)."""
        timings = {m.timing for m in self.measurements if m.status == "ok"}
        return "graph" if "graph" in timings else ("stream" if timings else "")

    def best_of(self, allowed, prefer: KernelChoice | str | None = None) -> tuple[KernelChoice | str, float] | None:
        """The fastest correct candidate that `allowed(choice)` accepts, with its time; the
        heuristic's choice (`prefer`) unless another is HEURISTIC_MARGIN faster (`fastest_of`)."""
        fastest = fastest_of(self.measurements, allowed, prefer)
        return None if fastest is None else (fastest.choice, fastest.ms)

    def to_json(self) -> dict:
        return {"key": dataclasses.asdict(self.key), "best": choice_to_json(self.best), "best_ms": self.best_ms,
                "measurements": [m.to_json() for m in self.measurements], "boltir": self.version,
                "measured_at": self.measured_at}

    @staticmethod
    def from_json(data: dict) -> TuningRecord:
        try:
            return TuningRecord(TuningKey(**data["key"]), choice_from_json(data["best"]), float(data["best_ms"]),
                                [Measurement.from_json(m) for m in data.get("measurements", [])],
                                data.get("boltir", ""), data.get("measured_at", ""))
        except (TypeError, KeyError, ValueError) as error:
            raise BoltError(f"not a boltir tuning record ({type(error).__name__}: {error})") from None


# --------------------------------------------------------------------------- the file

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    {", ".join(f"{name} TEXT NOT NULL" for name in KEY_FIELDS)},
    best TEXT NOT NULL,
    best_ms REAL NOT NULL,
    measurements TEXT NOT NULL,
    boltir TEXT NOT NULL,
    measured_at TEXT NOT NULL,
    PRIMARY KEY ({", ".join(KEY_FIELDS)})
);
"""


class TuningDatabase:
    """A tuning database file; see the module docstring."""

    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path = path
        self.connection = connection

    @staticmethod
    def open(path: str | os.PathLike | None = None, *, create: bool = True, fresh: bool = False) -> TuningDatabase:
        """Opens (creating, unless `create` is False) the database at `path` (default:
        `default_path()`). `fresh` first moves an existing file aside to `PATH.old`."""
        path = Path(path).expanduser() if path else default_path()
        if fresh and path.exists():
            aside = path.with_name(path.name + ".old")
            for suffix in ("-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            os.replace(path, aside)
        if not path.exists() and not create:
            raise BoltError(f"no tuning database at {path}")
        if path.is_dir():
            raise BoltError(f"the tuning database {path} is a directory; --tuning-db takes a file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise BoltError(f"cannot open the tuning database {path}: {error}") from None
        database = TuningDatabase(path, connection)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                with database.transaction():
                    for statement in filter(str.strip, SCHEMA.split(";")):
                        connection.execute(statement)
                    connection.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
            elif "meta" not in tables or "records" not in tables:
                raise BoltError(f"{path} is an SQLite database, but not a boltir tuning database (no meta/records tables); "
                                f"{FRESH_HINT}")
            row = connection.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
            if row is None or row[0] != FORMAT:
                found = row[0] if row else "none"
                raise BoltError(f"the tuning database {path} has format '{found}', this boltir reads '{FORMAT}'; {FRESH_HINT}")
            connection.execute("SELECT count(*) FROM records").fetchone()
        except sqlite3.DatabaseError as error:
            connection.close()
            raise BoltError(f"the tuning database {path} is damaged or not a database ({error}); {FRESH_HINT}") from None
        except BoltError:
            connection.close()
            raise
        return database

    def close(self) -> None:
        self.connection.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    class _Transaction:
        def __init__(self, connection):
            self.connection = connection

        def __enter__(self):
            self.connection.execute("BEGIN IMMEDIATE")  # takes the write lock now: no upgrade deadlock

        def __exit__(self, kind, value, traceback):
            self.connection.execute("COMMIT" if kind is None else "ROLLBACK")

    def transaction(self):
        return TuningDatabase._Transaction(self.connection)

    def _run(self, sql: str, parameters=()):
        try:
            return self.connection.execute(sql, parameters)
        except sqlite3.DatabaseError as error:
            raise BoltError(f"the tuning database {self.path} is damaged ({error}); {FRESH_HINT}") from None

    # ----------------------------------------------------------------- records

    def store(self, record: TuningRecord) -> None:
        """Writes one record (replacing the key's old one) in its own transaction."""
        record.version = record.version or __version__
        record.measured_at = record.measured_at or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        row = (*dataclasses.astuple(record.key), json.dumps(choice_to_json(record.best), sort_keys=True),
               record.best_ms if math.isfinite(record.best_ms) else -1.0,
               json.dumps([m.to_json() for m in record.measurements], sort_keys=True), record.version, record.measured_at)
        try:
            with self.transaction():
                self.connection.execute(f"INSERT OR REPLACE INTO records VALUES ({', '.join('?' * len(row))})", row)
        except sqlite3.DatabaseError as error:
            raise BoltError(f"cannot write to the tuning database {self.path} ({error}); {FRESH_HINT}") from None

    def _record(self, row) -> TuningRecord:
        key = TuningKey(*row[: len(KEY_FIELDS)])
        best, best_ms, measurements, version, measured_at = row[len(KEY_FIELDS):]
        try:
            return TuningRecord(key, choice_from_json(json.loads(best)), best_ms,
                                [Measurement.from_json(m) for m in json.loads(measurements)], version, measured_at)
        except (ValueError, TypeError, KeyError, BoltError) as error:
            detail = error.message if isinstance(error, BoltError) else str(error)
            raise BoltError(f"the tuning database {self.path} holds a record boltir cannot read ({detail.removeprefix('error: ')}); "
                            f"{FRESH_HINT}") from None

    def lookup(self, key: TuningKey) -> TuningRecord | None:
        """The record of `key`; with `key.gpu` empty, the newest record of any GPU."""
        columns = KEY_FIELDS if key.gpu else KEY_FIELDS[1:]
        values = dataclasses.astuple(key) if key.gpu else key.without_gpu()
        where = " AND ".join(f"{name} = ?" for name in columns)
        row = self._run(f"SELECT * FROM records WHERE {where} ORDER BY measured_at DESC, gpu LIMIT 1", values).fetchone()
        return None if row is None else self._record(row)

    def records(self) -> list[TuningRecord]:
        rows = self._run(f"SELECT * FROM records ORDER BY {', '.join(KEY_FIELDS)}").fetchall()
        return [self._record(row) for row in rows]

    def __len__(self) -> int:
        return self._run("SELECT count(*) FROM records").fetchone()[0]

    # ----------------------------------------------------------------- moving

    def export_json(self) -> str:
        return json.dumps({"format": FORMAT, "records": [r.to_json() for r in self.records()]}, indent=1, sort_keys=True) + "\n"

    def import_json(self, text: str, source: str = "the import") -> tuple[int, int]:
        """Merges exported records in: a key's newer record wins. Returns (added or
        replaced, kept because ours was newer)."""
        try:
            data = json.loads(text)
        except ValueError as error:
            raise BoltError(f"{source} is not a boltir tuning export (not JSON: {error})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("records"), list):
            found = data.get("format", "none") if isinstance(data, dict) else "none"
            raise BoltError(f"{source} is not a boltir tuning export of format '{FORMAT}' (found format '{found}')")
        incoming = [TuningRecord.from_json(r) for r in data["records"]]
        added = kept = 0
        for record in incoming:
            ours = self.lookup(record.key) if record.key.gpu else None
            if ours is not None and ours.measured_at > record.measured_at:
                kept += 1
                continue
            self.store(record)
            added += 1
        return added, kept


# ------------------------------------------------------------- the shipped data

SHIPPED = Path(__file__).resolve().parent / "shipped"
"""Tuning exports installed with the package (`tuning-<gpu>.json`), graph-timed on that GPU."""


class ShippedTuning:
    """The records of every export in `SHIPPED`, read once: what a build on one of those
    GPUs takes where the user's database has no record (`DatabaseSelector`)."""

    _records: dict[TuningKey, TuningRecord] | None = None

    def __init__(self, path: Path = SHIPPED):
        self.path = path

    def _load(self) -> dict[TuningKey, TuningRecord]:
        if self._records is None:
            records: dict[TuningKey, TuningRecord] = {}
            for file in sorted(self.path.glob("*.json")):
                data = json.loads(file.read_text())
                if data.get("format") != FORMAT:
                    raise BoltError(f"the shipped tuning data {file} has format '{data.get('format')}', this boltir reads '{FORMAT}'")
                for record in map(TuningRecord.from_json, data["records"]):
                    records[record.key] = record
            self._records = records
        return self._records

    def records(self) -> list[TuningRecord]:
        return sorted(self._load().values(), key=dataclasses.astuple)

    def gpus(self) -> set[str]:
        return {key.gpu for key in self._load()}

    def lookup(self, key: TuningKey) -> TuningRecord | None:
        """The record of `key`, GPU included (shipped data serves only the GPU it was measured on)."""
        return self._load().get(key) if key.gpu else None


_shipped: ShippedTuning | None = None


def shipped_tuning() -> ShippedTuning:
    global _shipped
    if _shipped is None:
        _shipped = ShippedTuning()
    return _shipped


SCHEDULE_SHORT = {"cooperative": "coop", "pingpong": "pingpong", "warpspecialized": "ws", "streamk": "streamk"}
"""The 3.x kernel schedules as choice descriptions name them."""


def describe_choice(choice: KernelChoice | str) -> str:
    """A short name for a choice: `3.x 128x256x64 coop c2x1` (`st4`: 4 stages, not as many as
    fit), `2.x 128x128x32 s3 splitk2`."""
    if choice == UNFUSE:
        return "unfused"
    tb = "x".join(map(str, choice.tile.threadblock))
    if choice.family == "splitk_conv":  # our split-reduction conv: pixels x channels x cluster CTAs
        text = f"splitk {tb}"
    elif choice.family == "halo_conv":  # our wgmma conv for 64 channels: columns x rows x base-offset mode
        text = f"halo {tb}"
    elif choice.family == "wgsplit_gemm":  # our GEMM for few rows: tile rows x columns x cluster CTAs
        text = f"wgsplit {tb}"
    elif choice.arch == "sm90":
        schedule = SCHEDULE_SHORT.get(choice.kernel_schedule, "auto")
        cluster = choice.cluster or (1, 1, 1)
        text = f"3.x {tb} {schedule} c{cluster[0]}x{cluster[1]}"
        if choice.tile.stages:  # explicit stages (0: as many as fit)
            text += f" st{choice.tile.stages}"
    elif choice.family.startswith("b2b"):
        text = f"2.x b2b {tb}+{'x'.join(map(str, choice.tile1.threadblock))} {choice.residency}"
    elif choice.family == "depthwise_direct":  # our own kernel: one thread's rows x columns x channels (s: staged)
        text = f"direct {DirectTile.of(choice.tile).describe()}"
    elif choice.family == "skinny_gemm":  # our own GEMM for few rows: weight rows x warps x unroll
        text = f"skinny {tb}"
    elif choice.family == "stream_conv":  # our 1x1 conv for narrow channels: fragments x slices x warps
        text = f"pointwise {tb}"
    elif choice.family == "stem_conv":  # our conv for few input channels: tile rows x columns x warp fragments
        text = f"stem {tb}"
    else:
        text = f"2.x {tb} s{choice.tile.stages}"
    if choice.split_k > 1:
        text += f" splitk{choice.split_k}"
    return text

