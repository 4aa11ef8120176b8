"""Hardware-native search on the GPU (issue 8): tunes the distinct GEMM / conv / b2b ops of
ResNet-50 and BERT-base (batch 32) and the reference GEMM, conv and back-to-back workloads (bench/kernels.py's) into
a tuning database, timing each model's tuning cold (its keys absent) and warm (present);
then prints one row per op, all measured in this run: the heuristic's choice and time (it is
always candidate 1 of the search, timed by the same profiler), the tuned choice and time,
PyTorch eager (cuBLAS / cuDNN) and torch.compile (default mode) on the same op.

    source bench/setup_gpu.sh && python3 -m bench.tune --db /tmp/tuning.sqlite [--models resnet50,bert] [--facts]
    python3 -m bench.tune --plan-only      # no GPU: the ops and their candidate counts
    python3 -m bench.tune --db /tmp/fresh.sqlite --batches 1,32 --facts --write-shipped $OUT/tuning-h200.json
        # re-times the shipped data by graph replay (a scratch database: the current shipped
        # file is merged into it); copy the file into boltir/backends/cuda/tune/shipped/

Timing: the profiler's (ours) is the median of 15 replays of a CUDA graph of 10 launches,
inputs rotated past L2: device time. The peers' follows bench/kernels.py (CUDA events, median
of 30 samples of 10 calls, inputs rotated likewise), issued from the host ("eager",
"torch.compile") and as replays of a captured graph ("eager graph", and "alone graph": the
GEMM or conv with no epilogue, i.e. cuBLAS / cuDNN alone). The kernel floors of issue 8
are printed last, from device time on both sides.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from boltir.backends.cuda.tune.database import describe_choice
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from tests.support.op_modules import b2b_gemm_text, conv_text, gemm_text

SELECTABLE = (ops.GemmOp, ops.Conv2dOp, ops.B2bGemmOp, ops.B2bConv2dOp)
# the reference workloads (`--facts`), the shapes of bench/kernels.py's `workloads()`
FACTS_GEMMS = [(4096, 3072, 768), (4096, 768, 3072), (32, 4096, 4096), (8192, 8192, 8192), (25088, 64, 64), (1024, 1024, 1024)]
FACTS_CONVS = [(32, 56, 56, 64, 64, 3, 1), (32, 56, 56, 256, 64, 1, 1), (32, 28, 28, 128, 128, 3, 1), (32, 7, 7, 512, 512, 3, 1),
               (32, 224, 224, 4, 64, 7, 2)]
FACTS_B2B = [(409600, 576, 64, 128), (131072, 128, 128, 128), (16384, 64, 256, 64)]


def write_shipped(database, path: Path) -> Path:
    """This GPU's records as a shipped tuning export: the package's current file for this
    GPU in its order, each record that the database holds newer (what this run measured)
    in its place, then the database's records of keys the file lacks. Records not measured
    again stay byte for byte, so the file's diff is what this run measured. A user's build
    on this GPU takes them where their database has none."""
    import json

    from boltir.backends.cuda.tune.database import FORMAT, SHIPPED
    from boltir.backends.cuda.tune.tuner import gpu_identity

    gpu = gpu_identity()[0]
    current = SHIPPED / f"tuning-{gpu.removeprefix('NVIDIA ').lower().replace(' ', '-')}.json"
    shipped = json.loads(current.read_text())["records"] if current.exists() else []
    ours = {json.dumps(r.to_json()["key"], sort_keys=True): r.to_json() for r in database.records() if r.key.gpu == gpu}
    records = []
    for record in shipped:
        newer = ours.pop(json.dumps(record["key"], sort_keys=True), None)
        records.append(newer if newer is not None and newer["measured_at"] > record["measured_at"] else record)
    records += ours.values()
    stale = sum(any(m.get("timing") != "graph" for m in r["measurements"]) for r in records)
    if stale:
        print(f"note: {stale} of {len(records)} records of the {gpu} are not graph-timed (re-run their tuning to replace them)")
    path.write_text(json.dumps({"format": FORMAT, "records": records}, indent=1, sort_keys=True) + "\n")
    return path


def facts_ops() -> list[tuple[str, object]]:
    from boltir.ir import make_context, parse_module

    texts = [(f"gemm+bias+relu {m}x{n}x{k}", gemm_text(m, n, k)) for m, n, k in FACTS_GEMMS]
    texts += [(f"conv{r}x{r}/{s} N{n} C{c} {h}² K{k} +bias+relu", conv_text(n, h, w, c, k, r, r, stride=s))
              for n, h, w, c, k, r, s in FACTS_CONVS]
    texts += [(f"b2b M={m} K0={k0} N0={n0} N1={n1}", b2b_gemm_text(m, k0, n0, n1)) for m, k0, n0, n1 in FACTS_B2B]
    out = []
    for label, text in texts:
        module = parse_module(text, f"<{label}>", ctx=make_context())
        out.append((label, next(o for o in module.walk() if isinstance(o, SELECTABLE))))
    return out


def model_ops(name: str, batch: int, work: Path, arch: str) -> list[tuple[str, object]]:
    """The distinct selectable ops of a bench model after the op-level passes (first use order)."""
    from bench import models
    from boltir.compiler import lower_model
    from boltir.pipelines import default_pipeline

    onnx_path = work / f"{name}_b{batch}.onnx"
    if not onnx_path.exists():
        model = models.make_model(name)
        models.export(name, model, models.example_inputs(name, batch), onnx_path)
    module, _, _ = lower_model(onnx_path, arch=arch, dtype="f16", pipeline=default_pipeline(dtype="f16", arch=arch))
    from boltir.backends.cuda.tune.database import tuning_key

    seen, out = set(), []
    for op in module.walk():
        if isinstance(op, SELECTABLE):
            key = tuning_key(op, arch)
            if key not in seen:
                seen.add(key)
                out.append((f"{name} b{batch} {op.name.removeprefix('op.')} {key.problem.split(' ')[0]}", op))
    return out


# ------------------------------------------------------------------ the peers


def torch_peer(op):
    """(make, flops, bytes): `make()` draws one set of random inputs (channels_last convs,
    fp16) and returns (fused, alone): PyTorch computing `op`, and its GEMM or conv alone
    (cuBLAS / cuDNN with no epilogue; None for b2b). None where the epilogue has no simple
    PyTorch spelling."""
    import torch
    import torch.nn.functional as F

    acts = {"none": lambda x: x, "relu": F.relu, "gelu": F.gelu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "silu": F.silu}

    def epilogue_of(epilogue):
        first, second = epilogue.first_activation.kind, epilogue.second_activation.kind
        if first not in acts or second not in acts or epilogue.residual_kind not in ("none", "add", "mul"):
            return None
        alpha = epilogue.alpha.value.data

        def apply(acc, bias, residual):
            acc = acc * alpha if alpha != 1.0 else acc
            if bias is not None:
                acc = acc + bias
            acc = acts[first](acc)
            if residual is not None:
                acc = acc + residual if epilogue.residual_kind == "add" else acc * residual
            return acts[second](acc)
        return apply

    def rand(shape, scale=1.0):
        return ((torch.rand(*shape, device="cuda") * 2 - 1) * scale).half()

    nbytes = 2 * sum(math.prod(tensor_shape(v.type)) for v in (*op.operands, *op.results))
    if isinstance(op, ops.GemmOp):
        apply = epilogue_of(op.epilogue)
        if apply is None:
            return None

        def make():
            a, b = rand(tensor_shape(op.a.type)), rand(tensor_shape(op.b.type), (3 / op.problem[2]) ** 0.5)
            bias = rand(tensor_shape(op.bias.type)) if op.bias is not None else None
            residual = rand(tensor_shape(op.residual.type)) if op.residual is not None else None
            left = a if op.prop_value("layout_a") == "row" else a.transpose(-1, -2)
            right = b if op.prop_value("layout_b") == "row" else b.transpose(-1, -2)
            return (lambda: apply(torch.matmul(left, right), bias, residual)), (lambda: torch.matmul(left, right))
        return make, 2 * math.prod(tensor_shape(op.output.type)) * op.problem[2], nbytes
    if isinstance(op, ops.Conv2dOp):
        apply = epilogue_of(op.epilogue)
        pads = op.prop_value("pads")
        if apply is None or op.prop_value("layout") != "NHWC" or pads[0] != pads[2] or pads[1] != pads[3]:
            return None
        n, h, w, c = tensor_shape(op.input.type)
        k, r, s, cg = tensor_shape(op.filter.type)
        _, p, q, _ = tensor_shape(op.output.type)
        stride, dilation, groups = tuple(op.prop_value("strides")), tuple(op.prop_value("dilations")), op.prop_value("groups")

        def make():
            x = rand((n, c, h, w)).to(memory_format=torch.channels_last)
            weight = rand((k, cg, r, s), (3 / (r * s * cg)) ** 0.5).to(memory_format=torch.channels_last)
            bias = rand((k,)).view(1, -1, 1, 1) if op.bias is not None else None
            residual = rand((n, k, p, q)).to(memory_format=torch.channels_last) if op.residual is not None else None

            def alone():
                return F.conv2d(x, weight, None, stride, (pads[0], pads[1]), dilation, groups)
            return (lambda: apply(alone(), bias, residual)), alone
        return make, 2 * n * p * q * k * r * s * cg, nbytes
    if isinstance(op, ops.B2bGemmOp):
        m, k0 = math.prod(tensor_shape(op.a.type)[:-1]), tensor_shape(op.a.type)[-1]
        n0, n1 = tensor_shape(op.b0.type)[0], tensor_shape(op.b1.type)[0]

        def make():
            x, w0, w1 = rand((m, k0)), rand((n0, k0), (3 / k0) ** 0.5), rand((n1, n0), (3 / n0) ** 0.5)
            b0, b1 = rand((n0,)), rand((n1,))
            return (lambda: F.relu(F.linear(F.relu(F.linear(x, w0, b0)), w1, b1))), None
        return make, 2 * m * (k0 * n0 + n0 * n1), nbytes
    return None


PEER_COLUMNS = ("eager", "eager graph", "alone graph", "torch.compile")


def peer_times(op, compile_budget: dict) -> dict[str, str]:
    """PyTorch on `op`, inputs rotated past L2 as the profiler's are: eager issued from the
    host (`time_ms`), eager and the GEMM / conv alone as replays of a captured CUDA graph
    (`graph_time_ms`: device time, as the profiler times ours), and torch.compile's default
    mode while `compile_budget["left"]` seconds last."""
    import torch

    from bench.kernels import graph_time_ms, rotations_for, time_ms

    peer = torch_peer(op)
    if peer is None:
        return dict.fromkeys(PEER_COLUMNS, "n/a")
    make, _, nbytes = peer
    sets = [make() for _ in range(rotations_for(nbytes))]
    fused = [f for f, _ in sets]
    alone = [a for _, a in sets]
    out = {}
    with torch.no_grad():
        out["eager"] = f"{time_ms(lambda i: fused[i](), len(sets)):.4f}"
        out["eager graph"] = f"{graph_time_ms(lambda i: fused[i](), len(sets)):.4f}"
        out["alone graph"] = f"{graph_time_ms(lambda i: alone[i](), len(sets)):.4f}" if alone[0] is not None else "n/a"
        out["torch.compile"] = "skipped"
        if compile_budget["left"] > 0:
            start = time.monotonic()
            try:
                fast = torch.compile(fused[0])
                fast()
                out["torch.compile"] = f"{time_ms(lambda i: fast()):.4f}"
            except Exception as failure:  # noqa: BLE001 - a peer that fails is a cell
                out["torch.compile"] = f"failed: {str(failure).splitlines()[0][:30]}"
            compile_budget["left"] -= time.monotonic() - start
    return out


def floors(rows: list[dict]) -> list[str]:
    """Issue 8's kernel floors from the reference workloads' rows, on device time for both sides."""
    def ms(row, column):
        try:
            return float(row[column])
        except (KeyError, ValueError):
            return None

    lines = []
    for m, n, k in [(4096, 3072, 768), (4096, 768, 3072), (8192, 8192, 8192)]:
        row = next((r for r in rows if r["op"] == f"gemm+bias+relu {m}x{n}x{k}"), None)
        if row and ms(row, "alone graph") and row["tuned_ms"] > 0:
            ratio = ms(row, "alone graph") / row["tuned_ms"]
            lines.append(f"floor gemm+bias+relu {m}x{n}x{k}: cuBLAS matmul alone / tuned = {ratio:.3f} "
                         f"(needs >= 0.95): {'met' if ratio >= 0.95 else 'NOT met'}")
    convs = [r for r in rows if r["op"].startswith("conv") and ms(r, "eager graph") and r["tuned_ms"] > 0]
    if len(convs) == len(FACTS_CONVS):
        for column in ("eager graph", "eager"):
            mean = math.exp(sum(math.log(ms(r, column) / r["tuned_ms"]) for r in convs) / len(convs))
            lines.append(f"floor conv+bias+relu, geomean cuDNN {column} / tuned over {len(convs)} convs = {mean:.3f} "
                         f"(needs >= 1.2): {'met' if mean >= 1.2 else 'NOT met'}")
    return lines


# ------------------------------------------------------------------ main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="/tmp/boltir-tuning.sqlite")
    parser.add_argument("--models", default="resnet50,bert")
    parser.add_argument("--batches", default="32", help="comma-separated batch sizes of the models")
    parser.add_argument("--facts", action="store_true", help="tune the reference workloads (FACTS_*) too")
    parser.add_argument("--arch", default="sm90")
    parser.add_argument("--work", default="/tmp/boltir-models")
    parser.add_argument("--plan-only", action="store_true", help="list the ops and their candidates; no GPU")
    parser.add_argument("--build-only", action="store_true",
                        help="compile every candidate into the object cache and stop (no GPU; for carrying the cache)")
    parser.add_argument("--only", help="only the ops whose label contains this text")
    parser.add_argument("--max-candidates", type=int, default=None,
                        help="at most this many candidates an op, the heuristic's choice first (default: all)")
    parser.add_argument("--skip", default="", help="comma-separated model:batch groups to leave out, e.g. bert:1")
    parser.add_argument("--compile-peer-seconds", type=float, default=240.0,
                        help="how long torch.compile of the peers may take in all (then: skipped)")
    parser.add_argument("--export", help="export the database to this JSON file at the end")
    parser.add_argument("--write-shipped", metavar="FILE",
                        help="after tuning, write this GPU's records (graph-timed) as shipped tuning data: FILE is "
                        "$OUT/tuning-h200.json, copied into boltir/backends/cuda/tune/shipped/ after the run")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    groups = [(f"{name} b{batch}", model_ops(name, batch, work, args.arch)) for name in filter(None, args.models.split(","))
              for batch in (int(b) for b in args.batches.split(",")) if f"{name}:{batch}" not in args.skip.split(",")]
    if args.facts:
        groups.append(("facts", facts_ops()))
    if args.only:
        groups = [(name, [item for item in items if args.only in item[0]]) for name, items in groups]
        groups = [(name, items) for name, items in groups if items]
    if args.plan_only:
        from boltir.backends.cuda.select.candidates import candidates

        for name, items in groups:
            counts = [len(candidates(op, args.arch, 132, 3, at_most=args.max_candidates).choices) for _, op in items]
            print(f"{name}: {len(items)} distinct ops, {sum(counts)} candidates ({min(counts)}-{max(counts)} per op)")
        return 0

    from boltir.backends.cuda.tune.database import TuningDatabase
    from boltir.backends.cuda.tune.tuner import Tuner

    database = TuningDatabase.open(args.db)
    if args.build_only:
        import tempfile

        for name, items in groups:
            tuner = Tuner(database, args.arch, 3, progress="always", gpu=("(building only)", 132, args.arch),
                          max_candidates=args.max_candidates)
            _, jobs = tuner.plan([op for _, op in items])
            start = time.monotonic()
            with tempfile.TemporaryDirectory() as scratch:
                tuner._build(jobs, Path(scratch))
            print(f"{name}: compiled the candidates of {len(jobs)} ops in {time.monotonic() - start:.0f} s", flush=True)
        return 0
    timings = []
    records = {}
    for name, items in groups:
        for phase in ("cold", "warm"):
            tuner = Tuner(database, args.arch, 3, progress="always", max_candidates=args.max_candidates)
            start = time.monotonic()
            found = tuner.tune([op for _, op in items])
            seconds = time.monotonic() - start
            timings.append((name, phase, len(items), f"{seconds:.1f}"))
            print(f"tuning {name} ({phase}): {seconds:.1f} s for {len(items)} ops", flush=True)
            for line in tuner.report:
                print("  ", line)
            records.update(found)
    if args.export:
        Path(args.export).write_text(database.export_json())
        print("exported", len(database), "records to", args.export)
    if args.write_shipped:
        print("wrote the shipped tuning data", write_shipped(database, Path(args.write_shipped)))

    import torch

    torch.backends.cudnn.benchmark = True
    budget = {"left": args.compile_peer_seconds}
    rows, cells = [], []
    tuner = Tuner(database, args.arch, 3)
    header = ("op", "heuristic", "heur ms", "tuned", "tuned ms", *PEER_COLUMNS, "eager graph/tuned", "candidates ok")
    print("\nper-op rows as measured (the table follows):", flush=True)
    for name, items in groups:
        for label, op in items:
            record = records[tuner.key(op)]
            heuristic = record.measurements[0]
            ok = [m for m in record.measurements if m.status == "ok"]
            failed = len(record.measurements) - len(ok)
            peers = peer_times(op, budget)
            try:
                speedup = f"{float(peers['eager graph']) / record.best_ms:.2f}" if record.best_ms > 0 else "-"
            except ValueError:
                speedup = "-"
            rows.append({"op": label, "tuned_ms": record.best_ms, **peers})
            cells.append((label, describe_choice(heuristic.choice), f"{heuristic.ms:.4f}" if heuristic.ms else heuristic.status,
                          describe_choice(record.best), f"{record.best_ms:.4f}", *(peers[c] for c in PEER_COLUMNS), speedup,
                          f"{len(ok)}/{len(record.measurements)}" + (f" ({failed} failed)" if failed else "")))
            print("row:", " | ".join(cells[-1]), flush=True)
    print(f"\nGPU: {torch.cuda.get_device_name(0)}; times in ms (ours: {records and next(iter(records.values())).timing} timing)")
    from bench.tables import print_table

    print_table(header, cells)
    for line in floors(rows):
        print(line)
    print("\ntuning time (s)")
    print_table(("ops of", "phase", "distinct ops", "seconds"), timings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
