"""bolt-tune: the tuning database's command line.

    bolt-tune db show   [--tuning-db PATH] [--all]     the records as a table (--all: every candidate)
    bolt-tune db show --shipped [--all]                the tuning data shipped with boltir
    bolt-tune db export [--tuning-db PATH] [-o FILE]   JSON, to move to another machine or keep in a repository
    bolt-tune db import FILE [--tuning-db PATH]        merge an export in (a key's newer record wins)
    bolt-tune model MODEL.onnx [--arch sm90] ...       tune a model's kernels (needs a GPU) without building it

`--fresh-tuning-db` moves a damaged or foreign database aside and starts a new one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from boltir.diagnostics import BoltError
from boltir.target import DEFAULT_ARCH
from boltir.tools.common import run_tool
from boltir.version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bolt-tune", description="Tune kernels and manage boltir's tuning database.")
    parser.add_argument("--version", action="version", version=f"bolt-tune (boltir {__version__})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{db,model}")

    def common(sub):
        sub.add_argument("--tuning-db", metavar="PATH", default="",
                         help="the database (default: tuning.sqlite under $BOLTIR_CACHE_DIR or ~/.cache/boltir)")
        sub.add_argument("--fresh-tuning-db", action="store_true", help="move the database aside (PATH.old) and start a new one")
        sub.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")

    db = commands.add_parser("db", help="show, export or import the tuning database")
    actions = db.add_subparsers(dest="action", required=True, metavar="{show,export,import}")
    show = actions.add_parser("show", help="the records as a table")
    show.add_argument("--all", action="store_true", help="every candidate of every record, with its time or failure")
    show.add_argument("--shipped", action="store_true",
                      help="the tuning data shipped with boltir (a build on that GPU takes it where the database has no record)")
    common(show)
    export = actions.add_parser("export", help="write the records as JSON")
    export.add_argument("-o", "--output", metavar="FILE", help="the file (default: standard output)")
    common(export)
    imported = actions.add_parser("import", help="merge an exported JSON file in")
    imported.add_argument("file", metavar="FILE")
    common(imported)

    model = commands.add_parser("model", help="tune a model's kernels on this GPU (records them; builds nothing)")
    model.add_argument("model", metavar="MODEL.onnx")
    model.add_argument("--arch", default=DEFAULT_ARCH, help="the build's target: sm90 (default) or sm80")
    model.add_argument("--dtype", default="f16")
    model.add_argument("--cutlass", type=int, default=3, choices=(2, 3))
    model.add_argument("--input-shape", action="append", default=[], metavar="NAME=DIMS")
    common(model)
    return parser


def table(rows: list[tuple], header: tuple) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    lines = [" | ".join(str(x).ljust(w) for x, w in zip(row, widths)) for row in [header, *rows]]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def show(database, every: bool) -> str:
    from boltir.backends.cuda.tune.database import describe_choice

    records = database.records()
    if not records:
        return f"{database.path}: no records\n"
    rows = []
    for record in records:
        key = record.key
        ok = sum(m.status == "ok" for m in record.measurements)
        rows.append((key.gpu, key.arch, key.op_kind.removeprefix("op."), key.problem.split(" ")[0], key.epilogue.removeprefix("#op.epilogue"),
                     describe_choice(record.best), f"{record.best_ms:.4f}" if record.best_ms > 0 else "-",
                     f"{ok}/{len(record.measurements)}", record.timing or "-", record.measured_at))
        if every:
            for m in sorted(record.measurements, key=lambda m: (m.ms is None, m.ms or 0)):
                rows.append(("", "", "", "", "", "  " + describe_choice(m.choice), f"{m.ms:.4f}" if m.ms else "-", m.status,
                             m.timing, m.detail[:60]))
    text = table(rows, ("gpu", "arch", "op", "shapes", "epilogue", "best", "ms", "ok", "timing", "measured"))
    return text + f"{len(records)} records in {database.path}\n"


def tune_model(args) -> None:
    from boltir import compiler  # noqa: PLC0415 -- loaded on use
    from boltir.passes import statistics
    from boltir.tools.boltc import parse_input_shape

    input_shapes = dict(parse_input_shape(text) for text in args.input_shape)
    _, _, collected = compiler.lower_model(args.model, arch=args.arch, dtype=args.dtype, input_shapes=input_shapes,
                                           cutlass=args.cutlass, selector="tune", tuning_db=args.tuning_db)
    sys.stderr.write(statistics.format_statistics(collected, ["select-kernels"]))


def bolt_tune(args: argparse.Namespace) -> None:
    from boltir.backends.cuda.tune.database import TuningDatabase

    if args.fresh_tuning_db:
        TuningDatabase.open(args.tuning_db or None, fresh=True).close()
    if args.command == "model":
        tune_model(args)
        return
    if args.action == "show" and args.shipped:
        from boltir.backends.cuda.tune.database import shipped_tuning

        sys.stdout.write(show(shipped_tuning(), args.all))
    elif args.action == "show":
        with TuningDatabase.open(args.tuning_db or None, create=False) as database:
            sys.stdout.write(show(database, args.all))
    elif args.action == "export":
        database = TuningDatabase.open(args.tuning_db or None, create=False)
        text = database.export_json()
        if args.output:
            try:
                Path(args.output).write_text(text)
            except OSError as error:
                raise BoltError(f"cannot write {args.output}: {error.strerror}") from None
            sys.stderr.write(f"wrote {len(database)} record(s) to {args.output}\n")
        else:
            sys.stdout.write(text)
        database.close()
    else:
        try:
            text = Path(args.file).read_text()
        except OSError as error:
            raise BoltError(f"cannot read {args.file}: {error.strerror}") from None
        with TuningDatabase.open(args.tuning_db or None) as database:
            added, kept = database.import_json(text, args.file)
            sys.stderr.write(f"imported {added} record(s) into {database.path}" + (f"; kept {kept} newer one(s) already there" if kept else "") + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool("bolt-tune", lambda: bolt_tune(args), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
