"""bolt-profile: every launch of a compiled model timed on the GPU, against its roofline bound.

    bolt-profile out/                              # random inputs (seed 0)
    bolt-profile out/ --inputs in.npz --alone --marginal --top 10
    bolt-profile out/ --plot roofline.png           # also the launches as a roofline picture

`out/` is what `boltc MODEL -o out/` writes. The launches are timed inside a captured CUDA
graph (`CompiledModel.profile`); the table lists the slowest first with each one's share,
TFLOP/s, GB/s and its bound over its time (`boltir.runtime.format_profile`), then the
launches summed per kernel family. `--alone` adds each launch timed by itself, `--marginal`
what each adds to a replay of the whole graph, `--plot` draws the launches under the
target's roofline (boltir/tools/roofline_plot.py; matplotlib, `boltir[plot]`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from boltir.diagnostics import BoltError
from boltir.manifest import TensorSpec, read_manifest
from boltir.tools.bolt_run import load_inputs, random_array
from boltir.tools.common import run_tool
from boltir.version import __version__


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bolt-profile",
        description="Time every launch of a compiled model on the GPU against its roofline bound.",
    )
    parser.add_argument("directory", metavar="DIR", help="a compiled model (boltc MODEL -o DIR)")
    parser.add_argument("--inputs", metavar="IN.npz", help="inputs keyed by model input name (the rest are random)")
    parser.add_argument("--random-inputs", metavar="SEED", type=int, default=0,
                        help="the seed of the random inputs (normal floats, small integers; default 0)")
    parser.add_argument("--repeats", metavar="N", type=positive, default=20, help="timed replays per launch (default 20)")
    parser.add_argument("--alone", action="store_true", help="also time each launch by itself (an 'alone' column)")
    parser.add_argument("--marginal", action="store_true",
                        help="also time what each launch adds to a replay of the whole graph (a 'marginal' column)")
    parser.add_argument("--top", metavar="N", type=positive, help="list only the N slowest launches")
    parser.add_argument("--plot", metavar="FILE.png", help="also draw the launches under the target's roofline (PNG)")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"bolt-profile (boltir {__version__})")
    return parser


def read_static_manifest(directory: Path) -> dict:
    """The manifest of a build with one static size (bolt-profile times one size)."""
    manifest = read_manifest(directory)
    if "buckets" in manifest:
        raise BoltError(f"'{directory}' is a bucketed build: bolt-profile times one static size; compile that size "
                        "with boltc --input-shape")
    return manifest


def profile_inputs(specs: Sequence[TensorSpec], given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """One array per model input: `given`'s where it has one (checked against the model's
    shape and dtype), else random (normal floats, integers in [0, 8), mixed booleans)."""
    names = [spec.name for spec in specs]
    if unknown := sorted(set(given) - set(names)):
        raise BoltError(f"--inputs has '{unknown[0]}', which is not an input of the model (its inputs: {', '.join(names)})")
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in specs:
        if spec.name in given:
            value = given[spec.name]
            if tuple(value.shape) != spec.shape or value.dtype != spec.numpy_dtype:
                raise BoltError(f"input '{spec.name}' is {value.dtype}[{', '.join(map(str, value.shape))}] in --inputs, "
                                f"the model takes {spec.describe()}")
            inputs[spec.name] = value
        else:
            inputs[spec.name] = random_array(spec.shape, spec.numpy_dtype, rng)
    return inputs


def bolt_profile(args: argparse.Namespace) -> None:
    from boltir.runtime import CompiledModel, format_profile, format_profile_by_family

    directory = Path(args.directory)
    manifest = read_static_manifest(directory)
    specs = [TensorSpec.from_manifest(entry) for entry in manifest["inputs"]]
    inputs = profile_inputs(specs, load_inputs(args.inputs) if args.inputs else {}, args.random_inputs)
    model = CompiledModel(directory, manifest=manifest)
    try:
        launches = model.profile(repeats=args.repeats, alone=args.alone, marginal=args.marginal, **inputs)
    finally:
        model.close()
    print(f"{directory}: {len(launches)} launches, {manifest['arch']} {manifest['dtype']}, median of {args.repeats} "
          "replays inside a captured graph")
    print(format_profile(launches, top=args.top))
    print()
    print(format_profile_by_family(launches))
    if args.plot:
        from boltir.target import get_target
        from boltir.tools.roofline_plot import plot_launches

        if plot_launches(launches, get_target(manifest["arch"]), manifest["dtype"], str(directory), args.plot):
            print(f"wrote {args.plot}")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool("bolt-profile", lambda: bolt_profile(args), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
