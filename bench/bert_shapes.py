"""BERT-base's launches at several (batch, sequence) shapes, each timed inside a captured
graph against its roofline bound: which kernels a shape's heuristic choices make slow
(issue 16). Static builds from one dynamic ONNX export (bench/buckets.py's).

    source bench/setup_gpu.sh && python3 -m bench.bert_shapes 1x128 8x32 8x64 [--work /tmp/bert-shapes]

Per shape: the first encoder layer's launches in launch order (µs, bound µs, kernel), the
slowest launches and the kernel families. The profile's sum is above a graph replay's time:
each launch is timed with events around it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

FIRST_LAYER = 12
"""Launches shown in order: the embeddings' four and the first layer's seven, and one more."""


def main() -> int:
    import torch

    import boltir.compiler
    from bench.buckets import dynamic_export
    from bench.models import make_model
    from boltir.runtime import format_profile, format_profile_by_family, load

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="BATCHxSEQUENCE, e.g. 1x128")
    parser.add_argument("--work", default="/tmp/bert-shapes")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    path = dynamic_export("bert", make_model("bert"), work / "bert_dynamic.onnx")
    for shape in args.shapes:
        batch, sequence = (int(part) for part in shape.split("x"))
        shapes = {"input_ids": (batch, sequence), "token_type_ids": (batch, sequence)}
        result = boltir.compiler.compile(path, work / f"b{batch}s{sequence}", arch="sm90", dtype="f16",
                                         input_shapes=shapes, progress=False)
        model = load(result.directory)
        ids = torch.randint(0, 30000, (batch, sequence)).cuda()
        launches = model.profile(input_ids=ids, token_type_ids=torch.zeros_like(ids))
        print(f"\n==== BERT b{batch} s{sequence}: the first launches in launch order")
        for launch in launches[:FIRST_LAYER]:
            bound = launch.bound_ms * 1000 if launch.bound_ms is not None else float("nan")
            print(f"{launch.index:3} {launch.ms * 1000:8.1f} us  bound {bound:6.1f} us  {launch.op:<16} {launch.kernel}")
        print(format_profile(launches, top=6), format_profile_by_family(launches), sep="\n", flush=True)
        model.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
