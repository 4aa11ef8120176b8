"""bolt-run: run `@main` of an IR file in the numpy interpreter (as mlir-cpu-runner does).

    bolt-run model.mlir --inputs in.npz -o out.npz

Inputs are keyed by model input name or by position (`arg0`, `arg1`...). Outputs are
stored as `result_0`, `result_1`..., and summarized on stdout when no `-o` is given.
"""

from __future__ import annotations

import argparse
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from boltir.diagnostics import BoltError
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry, input_names, run
from boltir.ir import parse_module
from boltir.tools.common import run_tool
from boltir.version import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bolt-run",
        description="Run @main of a boltir IR file in the numpy interpreter.",
    )
    parser.add_argument("input_file", metavar="FILE.mlir", help="the IR to run")
    parser.add_argument(
        "--inputs", metavar="IN.npz", help="inputs, keyed by model input name or by position (arg0, arg1...)"
    )
    parser.add_argument(
        "--random-inputs",
        metavar="SEED",
        type=int,
        nargs="?",
        const=0,
        help="fill the inputs not given in --inputs with random data from SEED (default 0)",
    )
    parser.add_argument("-o", "--output", metavar="OUT.npz", help="write the outputs as result_0, result_1...")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"bolt-run (boltir {__version__})")
    return parser


def load_inputs(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            if not isinstance(archive, np.lib.npyio.NpzFile):
                raise BoltError(f"'{path}' holds a single array; --inputs needs an .npz archive (numpy.savez)")
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError as error:
        raise BoltError(f"cannot read inputs '{path}': no such file") from error
    except IsADirectoryError as error:
        raise BoltError(f"cannot read inputs '{path}': it is a directory") from error
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as error:
        raise BoltError(f"cannot read inputs '{path}': not a numpy .npz archive (numpy.savez writes one)") from error


def random_array(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """A random input: normal floats, integers in [0, 8), mixed booleans."""
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return rng.integers(0, 8, shape).astype(dtype)


def random_inputs(module, given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Random values for the inputs that `given` lacks: normal floats, small integers."""
    rng = np.random.default_rng(seed)
    entry = find_entry(module)
    filled = dict(given)
    for index, (name, arg_type) in enumerate(zip(input_names(entry), entry.function_type.inputs, strict=True)):
        if name in given or f"arg{index}" in given:
            continue
        filled[name] = random_array(tuple(arg_type.get_shape()), numpy_dtype(arg_type.element_type), rng)
    return filled


def read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise BoltError(f"cannot read '{path}': no such file") from error
    except IsADirectoryError as error:
        raise BoltError(f"cannot read '{path}': it is a directory") from error
    except UnicodeDecodeError as error:
        raise BoltError(f"'{path}' is not UTF-8 text (byte {error.start})") from error
    except OSError as error:
        raise BoltError(f"cannot read '{path}': {error.strerror}") from error


def summarize(name: str, value: np.ndarray) -> str:
    shape = "x".join(map(str, value.shape)) or "scalar"
    flat = value.reshape(-1)
    head = ", ".join(f"{v:.6g}" if value.dtype.kind == "f" else str(v) for v in flat[:6])
    more = ", ..." if flat.size > 6 else ""
    return f"{name}: {shape} {value.dtype} [{head}{more}]"


def bolt_run(args: argparse.Namespace) -> None:
    module = parse_module(read_text(args.input_file), args.input_file)
    inputs = load_inputs(args.inputs) if args.inputs else {}
    if args.random_inputs is not None:
        inputs = random_inputs(module, inputs, args.random_inputs)
    start = time.perf_counter()
    outputs = run(module, inputs)
    elapsed = time.perf_counter() - start
    results = {f"result_{i}": value for i, value in enumerate(outputs)}
    if args.output:
        try:
            np.savez(args.output, **results)
        except OSError as error:
            raise BoltError(f"cannot write '{args.output}': {error.strerror}") from error
        print(f"wrote {len(results)} output(s) to {args.output} ({elapsed:.2f} s in the interpreter)")
    else:
        for name, value in results.items():
            print(summarize(name, value))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool("bolt-run", lambda: bolt_run(args), debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
