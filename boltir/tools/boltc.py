"""boltc: the boltir compiler driver. Compiling models arrives with the importers and the
CUDA backend; for now it prints its usage and points at what runs today."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from boltir import __version__

NOT_YET = (
    "boltc cannot compile models yet: the ONNX/PyTorch importers and the CUDA backend "
    "are not in this version.\nToday: build or write graph IR, transform it with "
    "`bolt-opt`, and run it with `bolt-run`."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boltc",
        description="Compile a model (ONNX or PyTorch) into a CUDA runtime library built from CUTLASS templates.",
        epilog=NOT_YET,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("model", nargs="?", metavar="MODEL", help="the model to compile (not available yet)")
    parser.add_argument("--version", action="version", version=f"boltc (boltir {__version__})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    parser.print_usage()
    if args.model is not None:
        print(f"error: {NOT_YET.splitlines()[0]}", file=sys.stderr)
        return 1
    print(NOT_YET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
