"""boltc: the boltir compiler driver.

    boltc model.onnx --emit graph -o model.mlir [--input-shape data=1x3x224x224]
    boltc model.onnx --emit op [--dtype f16|bf16|f32] [--arch sm80|sm90] [--pass-stats]
    boltc --print-pipeline [--dtype ...] [--arch ...]
    boltc model.onnx -o out/ --keep-f32 /head/Conv,/head/Sigmoid    (these ops compute in f32)
    boltc model.onnx --emit op --pipeline 'fold-batchnorm,lower-graph-to-op' --pass-plugin mine.py

    boltc model.onnx -o out/ [--arch sm80|sm90] [--cutlass 2|3] [--dtype f16|bf16|f32] [--debug-dump]
    boltc model.onnx --emit cutlass|cuda [-o FILE|DIR]
    boltc model.onnx --roofline [--arch ...] [--input-shape ...] [--dtype ...]
    boltc model.onnx -o out/ --input-shape data=1..64x3x224x224 [--buckets data:0=1,2,4,8,16,32,64]

Without `--emit`, boltc compiles the model into the directory `-o` names: the shared
library, the weights and manifest.json (see boltir/compiler.py), which
`boltir.runtime.load` runs. `--emit graph` writes the model as imported; `--emit op` runs
the default pipeline (see boltir/pipelines.py) up to the operator level; `--emit cutlass`
adds kernel selection, lowering to CUTLASS instances and memory planning; `--emit cuda`
writes the CUDA translation units (into `-o DIR`, or all to standard output). `bolt-opt`
and `bolt-run` read the IR levels back. `--roofline` prints every launch's FLOPs, bytes
and bound time on the target (boltir/backends/cuda/roofline.py), without compiling.
A dimension given as a range (`1..64`) compiles one bucket per size of `--buckets` into
one directory (boltir/buckets.py); `boltir.runtime.load` runs each call on the smallest
bucket that holds it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from boltir.diagnostics import BoltError
from boltir.target import DEFAULT_ARCH
from boltir.tools.common import run_tool
from boltir.version import __version__

EMIT_LEVELS = ("graph", "op", "cutlass", "cuda")


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`name=1x3x224x224` -> ("name", (1, 3, 224, 224)); the name may hold '=' itself."""
    name, separator, dims = text.rpartition("=")
    try:
        if not separator or not name:
            raise ValueError
        shape = tuple(int(d) for d in dims.lower().split("x"))
        if any(d < 0 for d in shape):
            raise ValueError
    except ValueError:
        raise BoltError(f"--input-shape '{text}' is not NAME=DIMS, as in data=1x3x224x224") from None
    return name, shape


def parse_keep_f32(texts: Sequence[str]) -> tuple[str, ...]:
    """`--keep-f32 a,b --keep-f32 c` -> ("a", "b", "c"); an empty name is an error."""
    names = tuple(name.strip() for text in texts for name in text.split(","))
    if any(not name for name in names):
        raise BoltError(f"--keep-f32 '{','.join(texts)}' has an empty op name; give OPNAMES as name1,name2")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boltc",
        description="Compile an ONNX model into a CUDA runtime library built from CUTLASS templates, "
        "or write one of its intermediate levels (--emit).",
    )
    parser.add_argument("model", nargs="?", metavar="MODEL.onnx",
                        help="the ONNX model to compile, or a graph-level MODEL.mlir (as boltc --emit graph writes it)")
    parser.add_argument(
        "--emit",
        choices=EMIT_LEVELS,
        help="stop at this level and write it: graph = the model as imported, before any optimization; "
        "op = after the graph and operator-level passes; cutlass = after kernel selection, lowering and memory "
        "planning; cuda = the CUDA sources. Without --emit, compile into the directory -o names",
    )
    parser.add_argument("--roofline", action="store_true",
                        help="print every launch's FLOPs, bytes moved and roofline bound on the --arch target, and their "
                        "total; compiles nothing (no GPU, no nvcc)")
    parser.add_argument("--debug-dump", action="store_true",
                        help="after compiling, run the model launch by launch on random inputs on the GPU and compare "
                        "every result with the interpreter; names the first launch that diverges")
    parser.add_argument("--dtype", default="f16", help="precision of activations and weights: f16 (default), bf16, f32")
    parser.add_argument("--keep-f32", action="append", default=[], metavar="OPNAMES",
                        help="comma-separated op names (ONNX node names) that compute in f32, with their weights, in an "
                        "f16/bf16 model: for ops whose values f16 cannot hold (repeatable)")
    parser.add_argument("--arch", default=DEFAULT_ARCH, help="the GPU target: sm90 (H100/H200, default) or sm80 (A100)")
    parser.add_argument("--cutlass", type=int, default=3, choices=(2, 3),
                        help="the newest CUTLASS generation: 3 (default: 3.x kernels on sm90 where they run) or 2")
    tuning = parser.add_mutually_exclusive_group()
    tuning.add_argument("--tune", action="store_true",
                        help="measure the kernel candidates the tuning database lacks on this machine's GPU, record them, "
                        "and build with the fastest (needs a GPU)")
    tuning.add_argument("--no-tune", action="store_true",
                        help="take kernels from the tuning database where it has them, else the heuristic (the default)")
    parser.add_argument("--tuning-db", metavar="PATH", default="",
                        help="the tuning database (default: tuning.sqlite under $BOLTIR_CACHE_DIR or ~/.cache/boltir)")
    parser.add_argument("--fresh-tuning-db", action="store_true",
                        help="move the tuning database aside (to PATH.old) and start a new one: for a damaged or foreign database")
    parser.add_argument("--pipeline", metavar="STRING", help="run this pass pipeline instead of the default one")
    parser.add_argument("--print-pipeline", action="store_true", help="print the pipeline string and exit")
    parser.add_argument(
        "--pass-plugin", action="append", default=[], metavar="FILE.py", help="load the passes defined in FILE.py"
    )
    parser.add_argument("--pass-stats", action="store_true", help="report what each pass changed, on stderr")
    parser.add_argument("-o", "--output", metavar="FILE|DIR",
                        help="the output directory when compiling; the file (or, for --emit cuda, directory) an --emit level is written to (default: standard output)")
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="fix an input's shape, e.g. data=1x3x224x224 (repeatable); needed for dynamic dimensions",
    )
    parser.add_argument("--buckets", action="append", default=[], metavar="NAME:DIM=SIZES",
                        help="the sizes of a ranged dimension that get their own kernels, e.g. data:0=1,2,4,8,16,32,64 "
                        "(repeatable; default: the powers of two inside the range and its maximum)")
    parser.add_argument("--elide-weights", action="store_true", help="leave weight blobs out (for reading only)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"boltc (boltir {__version__})")
    return parser


MLIR_HINT = "boltc compiles graph-level modules (boltc --emit graph writes one); run passes on this one with bolt-opt"


def is_mlir_file(path: str) -> bool:
    """A .mlir file, or a text file that reads as MLIR (an ONNX file is a binary protobuf)."""
    if path.endswith(".mlir"):
        return True
    try:
        with open(path, "rb") as stream:
            head = stream.read(4096).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return any(word in head for word in ("func.func", "builtin.module", "module {", "module attributes"))


def model_argument(path: str, input_shapes: dict):
    """What the compiler takes for MODEL: an ONNX path as it is, or the graph-level module
    a .mlir file holds (one error for a module at a lower level, with what to use instead)."""
    if not is_mlir_file(path):
        return path
    from boltir.ir import parse_module

    if input_shapes:
        raise BoltError("--input-shape fixes an ONNX model's inputs; a .mlir module's shapes are in its @main")
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise BoltError(f"cannot read '{path}': {getattr(error, 'strerror', None) or error}") from None
    module = parse_module(text, path)
    levels = sorted({op.name.split(".")[0] for op in module.walk() if op.name.split(".")[0] in ("op", "cutlass")})
    if levels:
        raise BoltError(f"{path} is a module at the {levels[-1]} level; {MLIR_HINT}")
    return module


def write_atomically(path: str, text: str) -> None:
    """Writes through a temporary file beside `path`, so a failure leaves no half file."""
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=f".{target.name}.")
    except OSError as error:
        raise BoltError(f"cannot write '{path}': {error.strerror}") from error
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise BoltError(f"cannot write '{path}': {error.strerror}") from error
        raise


def boltc(args: argparse.Namespace) -> None:
    from xdsl.dialects.builtin import ModuleOp

    from boltir.frontends.onnx import import_model
    from boltir.ir import make_context, print_module
    from boltir.passes import statistics
    from boltir.pipelines import (
        available_passes,
        default_pipeline,
        parse_pipeline_spec,
        run_passes,
    )

    keep_f32 = parse_keep_f32(args.keep_f32)
    if keep_f32 and args.pipeline is not None:
        raise BoltError("--keep-f32 adds to the default pipeline; with --pipeline, give convert-precision{keep_f32=...} in it")
    pipeline = args.pipeline if args.pipeline is not None else default_pipeline(dtype=args.dtype, arch=args.arch,
                                                                                keep_f32=keep_f32)
    if args.print_pipeline:
        print(pipeline)
        return
    if args.model is None:
        raise BoltError("no model given; usage: boltc MODEL.onnx -o DIR, or boltc MODEL.onnx --emit graph|op|cutlass|cuda")
    if args.roofline and (args.emit or args.output):
        raise BoltError("--roofline prints a table on standard output; it takes neither --emit nor -o")
    if args.emit is None or args.emit in ("cutlass", "cuda") or args.buckets or any(".." in t for t in args.input_shape):
        compile_or_emit(args, pipeline)
        return
    passes = parse_pipeline_spec(pipeline, available_passes(args.pass_plugin)) if args.emit == "op" else []
    input_shapes = dict(parse_input_shape(text) for text in args.input_shape)
    model = model_argument(args.model, input_shapes)
    module = model if isinstance(model, ModuleOp) else import_model(model, input_shapes)
    ctx = make_context()
    with statistics.collecting() as collected:
        run_passes(module, passes, ctx)
    if args.pass_stats:
        sys.stderr.write(statistics.format_statistics(collected, [p.name for p in passes]))
    text = print_module(module, ctx, elide_weights=args.elide_weights)
    if args.output:
        write_atomically(args.output, text)
    else:
        sys.stdout.write(text)


def compile_or_emit(args: argparse.Namespace, op_pipeline: str) -> None:
    """The whole compiler: a model directory, or the cutlass / cuda level."""
    from boltir import compiler  # noqa: PLC0415 -- loaded on use
    from boltir.ir import print_module
    from boltir.passes import statistics

    if args.fresh_tuning_db:
        from boltir.backends.cuda.tune.database import TuningDatabase

        TuningDatabase.open(args.tuning_db or None, fresh=True).close()
    selector = "tune" if args.tune else "db"
    pipeline = ",".join([op_pipeline, *compiler.backend_passes(args.arch, args.cutlass, selector, args.tuning_db)])
    if any(".." in text for text in args.input_shape) or args.buckets:
        compile_buckets(args, pipeline)
        return
    input_shapes = dict(parse_input_shape(text) for text in args.input_shape)
    if args.roofline:
        rows = compiler.roofline(model_argument(args.model, input_shapes), arch=args.arch, dtype=args.dtype, input_shapes=input_shapes,
                                 pipeline=pipeline, plugins=args.pass_plugin)
        sys.stdout.write(format_roofline(rows))
        return
    if args.emit is None:
        if not args.output:
            raise BoltError("compiling needs an output directory: boltc MODEL.onnx -o DIR")
        if Path(args.output).is_file():
            raise BoltError(f"-o {args.output} is a file; compiling writes a directory")
        result = compiler.compile(model_argument(args.model, input_shapes), args.output, arch=args.arch, dtype=args.dtype, input_shapes=input_shapes,
                                  pipeline=pipeline, plugins=args.pass_plugin, progress=True)
        if args.pass_stats:
            sys.stderr.write(statistics.format_statistics(result.statistics, None))
        compiler.warn_fallbacks(result)
        tuning = result.manifest["tuning"]
        if tuning["state"] != "tuned":
            sys.stderr.write(f"note: {tuning['state']}: {tuning['kernels_from_heuristic'] or 0} kernel(s) chosen by the heuristic"
                             + ("" if args.tune else " (boltc --tune measures them on this GPU)") + "\n")
        sys.stderr.write(f"wrote {result.directory}/ ({len(result.manifest['launches'])} launches, "
                         f"arena {result.manifest['arena_bytes'] / 2**20:.1f} MiB)\n")
        if args.debug_dump:
            import numpy as np

            from boltir.runtime import load

            model = load(result.directory, debug=True)
            rng = np.random.default_rng(0)
            model(**{spec.name: rng.standard_normal(spec.shape).astype(spec.numpy_dtype) for spec in model.inputs})
        return
    module, pipeline, collected = compiler.lower_model(model_argument(args.model, input_shapes), arch=args.arch, dtype=args.dtype,
                                                       input_shapes=input_shapes, pipeline=pipeline,
                                                       plugins=args.pass_plugin)
    if args.pass_stats:
        sys.stderr.write(statistics.format_statistics(collected, None))
    if args.emit == "cutlass":
        text = print_module(module, elide_weights=args.elide_weights)
        if args.output:
            write_atomically(args.output, text)
        else:
            sys.stdout.write(text)
        return
    from boltir.backends.cuda.codegen.host_program import build_program

    program = build_program(module)
    if args.output:
        directory = Path(args.output)
        directory.mkdir(parents=True, exist_ok=True)
        for unit in program.units:
            write_atomically(str(directory / f"{unit.name}.cu"), unit.source)
    else:
        for unit in program.units:
            sys.stdout.write(f"// ===== {unit.name}.cu\n{unit.source}\n")


def compile_buckets(args: argparse.Namespace, pipeline: str) -> None:
    """Input ranges (--input-shape data=1..64x...) and --buckets: one directory for every bucket."""
    from boltir import buckets, compiler
    from boltir.shape_ranges import parse_input_shape as parse_ranged_shape

    if args.emit or args.roofline or not args.output:
        raise BoltError("input ranges compile one model per bucket into a directory: give -o DIR "
                        "(not --emit or --roofline; fix the sizes with --input-shape NAME=AxBxC for those)")
    if Path(args.output).is_file():
        raise BoltError(f"-o {args.output} is a file; compiling writes a directory")
    input_shapes = dict(parse_ranged_shape(text) for text in args.input_shape)
    result = buckets.compile_buckets(args.model, args.output, input_shapes=input_shapes, buckets=args.buckets,
                                     arch=args.arch, dtype=args.dtype, pipeline=pipeline, plugins=args.pass_plugin)
    compiler.warn_fallbacks(result)
    sizes = "; ".join(f"{', '.join(s['dims'])}: {','.join(map(str, s['sizes']))}" for s in result.manifest["symbols"])
    sys.stderr.write(f"wrote {result.directory}/ ({len(result.manifest['buckets'])} buckets: {sizes}; "
                     f"arena {result.manifest['arena_bytes'] / 2**20:.1f} MiB)\n")


def format_roofline(rows: Sequence) -> str:
    """One line per launch (index, op, kernel family, MFLOP, MB, bound µs, and a note where
    the count is bytes only), then `total: <GFLOP> GFLOP, <MB> MB, bound <ms> ms`. MB are
    10^6 bytes, as the bandwidth's."""
    op_width = max([len("op"), *(len(row.op) for row in rows)])
    family_width = max([len("family"), *(len(row.family) for row in rows)])
    lines = [f"{'#':>4}  {'op':<{op_width}}  {'family':<{family_width}}  {'MFLOP':>12} {'MB':>10} {'bound µs':>10}"]
    for row in rows:
        note = f"  ({row.note})" if row.note else ""
        lines.append(f"{row.index:>4}  {row.op:<{op_width}}  {row.family:<{family_width}}  {row.flops / 1e6:12.3f} "
                     f"{row.bytes / 1e6:10.3f} {row.bound_seconds * 1e6:10.3f}{note}")
    flops, moved, bound = sum(r.flops for r in rows), sum(r.bytes for r in rows), sum(r.bound_seconds for r in rows)
    lines.append(f"total: {flops / 1e9:.4f} GFLOP, {moved / 1e6:.3f} MB, bound {bound * 1e3:.4f} ms")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool("boltc", lambda: boltc(args), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
