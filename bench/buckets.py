"""Bucketed builds on the GPU (issue 19): one library for a range of sizes against a
static build per size.

- ResNet-50, batch 1..64 in seven buckets: every bucket size against its own static
  build (goal: within 1.05x), and a batch-24 call (padded to 32) against the static
  batch-32 build (goal: within 1.1x);
- BERT-base at batch 8, sequence 32..512 in five buckets: each bucket size against its
  static build and torch.compile(mode="reduce-overhead"), and a 200-token call (padded
  to 256, key_lengths 200) against its reference;
- compile time of the bucketed builds against one static build (goal: <= 3x for seven
  buckets, the shared kernels compiling once): the bucketed build and one static build
  per model (ResNet-50 b32, BERT s128) start from an empty object cache ($BOLTIR_CACHE_DIR
  under --work), so their times are cold; the other static builds reuse the bucketed
  build's objects, since only their graph times are compared.

Every bucketed call is checked against PyTorch fp32 on the same (unpadded) input by
`boltir.accuracy`'s relative error. Timing: bench/models.py's `time_ms` (CUDA events,
median of 50 after 10 warm-ups) of a whole call on device tensors: the bucketed model's
call (copy into its staging, its bucket's CUDA graph, the slice) against the static
model's CUDA-graph replay.

    source bench/setup_gpu.sh && python3 -m bench.buckets [--models resnet50,bert] [--work /tmp/buckets]
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import time
from pathlib import Path

from bench.models import (
    example_inputs,
    export,
    forward,
    make_model,
    relative_error,
    replay_ms,
    time_ms,
)

RESNET_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
BERT_BATCH, BERT_BUCKETS = 8, (32, 64, 128, 256, 512)


def dynamic_export(name: str, model, path: Path) -> Path:
    """The ONNX model with a dynamic batch (ResNet) or batch and sequence (BERT)."""
    import torch

    if path.exists():
        return path
    inputs = example_inputs(name, 2)
    names = list(inputs)
    axes = {n: ({0: "batch", 1: "sequence"} if name == "bert" else {0: "batch"}) for n in names}
    real_export = torch.onnx.export

    def with_axes(*args, **kwargs):
        return real_export(*args, dynamic_axes={**axes, "output": next(iter(axes.values()))}, **kwargs)

    torch.onnx.export = with_axes
    try:
        export(name, model, inputs, path)
    finally:
        torch.onnx.export = real_export
    return path


def timed_compile(work: Path, label: str, build, cache_label: str | None = None) -> tuple[object, float]:
    """Runs `build(directory)`; (its result, seconds). With no `cache_label` the object
    cache starts empty (a cold compile); with one, it reuses that build's cache."""
    cache = work / f"cache-{cache_label or label}"
    if cache_label is None:
        shutil.rmtree(cache, ignore_errors=True)
    os.environ["BOLTIR_CACHE_DIR"] = str(cache)
    start = time.monotonic()
    result = build(work / label)
    return result, time.monotonic() - start


def static_ms(onnx_path: Path, shapes: dict, work: Path, label: str, device_inputs: dict,
              warm_from: str | None = None) -> tuple[float, float]:
    """(graph-replay ms, compile s) of a static build at these shapes: cold, or with the
    objects of build `warm_from` (only one static build per model needs a cold time, and
    the others' kernels are the bucketed build's)."""
    import boltir.compiler
    from boltir.runtime import load

    result, seconds = timed_compile(work, label, lambda out: boltir.compiler.compile(
        onnx_path, out, arch="sm90", dtype="f16", input_shapes=shapes, progress=False), warm_from)
    compiled = load(result.directory)
    ms = replay_ms(compiled, device_inputs)
    compiled.close()
    return ms, seconds


def resnet(work: Path, sizes: tuple[int, ...] = RESNET_BUCKETS) -> list[tuple]:
    import torch

    from boltir.buckets import compile_buckets
    from boltir.runtime import load

    model = make_model("resnet50")
    path = dynamic_export("resnet50", model, work / "resnet50_dynamic.onnx")
    result, bucketed_s = timed_compile(work, "resnet50_buckets", lambda out: compile_buckets(
        path, out, input_shapes={"image": ((1, sizes[-1]), 3, 224, 224)}, buckets={"image:0": sizes}, arch="sm90",
        dtype="f16", progress=False))
    bucketed = load(result.directory)
    rows = []
    static_seconds = None
    statics = {}  # size -> (ms, s): the batch-24 call reuses the static batch-32 build
    for batch in (*sizes, *([24] if sizes[-1] >= 24 else [])):
        inputs = example_inputs("resnet50", batch)
        device = {k: v.cuda() for k, v in inputs.items()}
        with torch.no_grad():
            reference = forward("resnet50", model, inputs).float()
        (ours,) = bucketed(**device)
        error = relative_error(ours, reference)
        ms = time_ms(lambda: bucketed(**device))  # noqa: B023 - timed now
        size = next(b for b in sizes if b >= batch)
        static_device = {k: torch.nn.functional.pad(v, (0, 0, 0, 0, 0, 0, 0, size - batch)) for k, v in device.items()}
        if size not in statics:
            statics[size] = static_ms(path, {"image": (size, 3, 224, 224)}, work, f"resnet50_b{size}", static_device,
                                      None if size == 32 else "resnet50_buckets")
        static, seconds = statics[size]
        static_seconds = seconds if size == 32 else static_seconds
        goal = 1.1 if size != batch else 1.05
        rows.append((f"resnet50 b{batch}" + (f" (bucket {size})" if size != batch else ""), f"{ms:.3f}",
                     f"{static:.3f} (static b{size})", f"{ms / static:.3f}", f"<= {goal}", f"{error:.1e}"))
    bucketed.close()
    if static_seconds is not None:
        rows.append((f"resnet50 compile, {len(sizes)} buckets", f"{bucketed_s:.0f} s", f"{static_seconds:.0f} s (static b32)",
                     f"{bucketed_s / static_seconds:.2f}", "<= 3", "-"))
    return rows


def bert(work: Path) -> list[tuple]:
    import torch

    from boltir.buckets import compile_buckets
    from boltir.runtime import load

    model = make_model("bert")
    path = dynamic_export("bert", model, work / "bert_dynamic.onnx")
    shapes = {name: (BERT_BATCH, (BERT_BUCKETS[0], BERT_BUCKETS[-1])) for name in ("input_ids", "token_type_ids")}
    result, bucketed_s = timed_compile(work, "bert_buckets", lambda out: compile_buckets(
        path, out, input_shapes=shapes, buckets={"input_ids:1": BERT_BUCKETS}, arch="sm90", dtype="f16", progress=False))
    bucketed = load(result.directory)
    peer = copy.deepcopy(model).half().cuda()
    reduce = torch.compile(peer, mode="reduce-overhead")
    rows, static_seconds = [], None
    for length in (*BERT_BUCKETS, 200):
        ids = torch.randint(0, 30000, (BERT_BATCH, length))
        inputs = {"input_ids": ids, "token_type_ids": torch.zeros_like(ids)}
        device = {k: v.cuda() for k, v in inputs.items()}
        with torch.no_grad():
            reference = forward("bert", model, inputs).float()
            overhead = time_ms(lambda: forward("bert", reduce, device))  # noqa: B023 - timed now
        (ours,) = bucketed(**device)
        error = relative_error(ours, reference)
        ms = time_ms(lambda: bucketed(**device))  # noqa: B023
        size = next(b for b in BERT_BUCKETS if b >= length)
        if size == length:
            static, seconds = static_ms(path, {k: (BERT_BATCH, size) for k in shapes}, work, f"bert_s{size}", device,
                                        None if size == 128 else "bert_buckets")
            static_seconds = seconds if size == 128 else static_seconds
            static_cell = f"{static:.3f} (static s{size})"
        else:
            static_cell = "-"
        rows.append((f"bert b{BERT_BATCH} s{length}" + (f" (bucket {size})" if size != length else ""), f"{ms:.3f}",
                     static_cell, f"{overhead:.3f} (RO)", "-", f"{error:.1e}"))
    bucketed.close()
    rows.append((f"bert compile, {len(BERT_BUCKETS)} buckets", f"{bucketed_s:.0f} s", f"{static_seconds:.0f} s (static s128)",
                 f"{bucketed_s / static_seconds:.2f}", "-", "-"))
    return rows


HEADER = ("case", "bucketed ms / s", "static ms / s", "ratio or peer", "goal", "err vs fp32")


def main() -> int:
    from bench.tables import print_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,bert")
    parser.add_argument("--work", default="/tmp/boltir-buckets")
    parser.add_argument("--resnet-buckets", default=",".join(map(str, RESNET_BUCKETS)),
                        help="ResNet-50's bucket sizes (a quick check: 1,2)")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.models.split(","):
        sizes = tuple(int(size) for size in args.resnet_buckets.split(","))
        rows += resnet(work, sizes) if name == "resnet50" else bert(work)
        print(f"{name} done", flush=True)
    print_table(HEADER, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
