"""boltc: the boltir compiler driver.

    boltc model.onnx --emit graph -o model.mlir [--input-shape data=1x3x224x224]
    boltc model.onnx --emit op [--dtype f16|bf16|f32] [--arch sm80|sm90] [--pass-stats]
    boltc --print-pipeline [--dtype ...] [--arch ...]
    boltc model.onnx --emit op --pipeline 'fold-batchnorm,lower-graph-to-op' --pass-plugin mine.py

`--emit graph` writes the model as imported; `--emit op` runs the default pipeline (see
boltir/pipelines.py) up to the operator level. `bolt-opt` and `bolt-run` read both back.
Compiling to CUDA arrives with the backend.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from boltir import __version__
from boltir.diagnostics import BoltError
from boltir.tools.common import run_tool

EMIT_LEVELS = ("graph", "op")


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boltc",
        description="Compile a model into a CUDA runtime library built from CUTLASS templates. "
        "This version imports ONNX models and writes their graph IR (--emit graph).",
    )
    parser.add_argument("model", nargs="?", metavar="MODEL.onnx", help="the ONNX model to compile")
    parser.add_argument(
        "--emit",
        choices=EMIT_LEVELS,
        help="stop at this level and write its IR: graph = the model as imported, before any optimization; "
        "op = after the graph and operator-level passes",
    )
    parser.add_argument("--dtype", default="f16", help="precision of activations and weights: f16 (default), bf16, f32")
    parser.add_argument("--arch", default="sm90", help="the GPU: sm90 (H100/H200, default) or sm80 (A100)")
    parser.add_argument("--pipeline", metavar="STRING", help="run this pass pipeline instead of the default one")
    parser.add_argument("--print-pipeline", action="store_true", help="print the pipeline string and exit")
    parser.add_argument(
        "--pass-plugin", action="append", default=[], metavar="FILE.py", help="load the passes defined in FILE.py"
    )
    parser.add_argument("--pass-stats", action="store_true", help="report what each pass changed, on stderr")
    parser.add_argument("-o", "--output", metavar="FILE", help="where to write (default: standard output)")
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="fix an input's shape, e.g. data=1x3x224x224 (repeatable); needed for dynamic dimensions",
    )
    parser.add_argument("--elide-weights", action="store_true", help="leave weight blobs out (for reading only)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"boltc (boltir {__version__})")
    return parser


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
    from boltir.frontends.onnx import import_model
    from boltir.ir import make_context, print_module
    from boltir.passes import statistics
    from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes

    pipeline = args.pipeline if args.pipeline is not None else default_pipeline(dtype=args.dtype, arch=args.arch)
    if args.print_pipeline:
        print(pipeline)
        return
    if args.model is None:
        raise BoltError("no model given; usage: boltc MODEL.onnx --emit graph|op")
    if args.emit is None:
        raise BoltError("compiling to CUDA is not in this version yet; use --emit graph or --emit op to write IR")
    passes = parse_pipeline_spec(pipeline, available_passes(args.pass_plugin)) if args.emit == "op" else []
    input_shapes = dict(parse_input_shape(text) for text in args.input_shape)
    module = import_model(args.model, input_shapes)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool("boltc", lambda: boltc(args), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
