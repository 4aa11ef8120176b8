"""Memory-bound 1x1 convs (issue 15) against their bound: MobileNetV2's 1x1 convs and
ResNet-50's bottleneck 1x1s at batch 32, and MobileNetV2's blocked stem (a 2x2 window on
16 channels: our streaming conv against our stem conv, `stem`), fp16, each as the sm90
heuristic's kernel, the
persistent 3.x GEMM (`narrow_pointwise=False`), the kernel it picked before 1x1 convs ran
as persistent GEMMs (`pointwise_gemms=False`), the sm80 build's 2.x kernel, our streaming
conv at each of its tiles where it takes the conv (`stream_conv_kernels.tiles`),
and every candidate the tuner would time (`candidates.py`: the
persistent GEMM's tiles on the conv's buffers, the 3.x implicit-GEMM conv's, 2.x), against
cuDNN (eager, channels_last) and optionally torch.compile. Every kernel is checked against
eager (‖Δ‖/‖ref‖ < 1e-2). The bound is the bytes moved once (input, filter, bias, output,
residual) at the target's DRAM bandwidth; TB/s is those bytes over the measured time.
Prints every kernel's row, then one summary row per conv, the table last.

    source bench/setup_gpu.sh && python3 -m bench.pointwise [--only TEXT] [--torch-compile]
    python3 -m bench.pointwise --list            # the cases and distinct kernels, no GPU
    python3 -m bench.pointwise --build-only      # compile every kernel into the object cache

Timing: device time per call, CUDA-graph replays of back-to-back calls (10, or one per
input set if more; median of 30 replays after a warm-up), on both sides; inputs rotate
among at least two copies, enough to exceed three L2s (`bench.kernels.rotations_for`).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.tables import print_table
from bench.harness import BoundKernel, Case, build_library, describe_choice, generator_of, lower, profile_launches
from bench.kernels import INNER, REPEATS, WARMUP, relative, rotations_for
from boltir.backends.cuda.codegen import stream_conv_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.select.choice import KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.ir import parse_module
from boltir.target import get_target
from tests.support.op_modules import conv_text

SMS = 132
FLOOR_BYTES = 16e6
"""Issue 15's floor: memory-bound convs that move this much or more at >= 2.5 TB/s."""
FLOOR_TBPS = 2.5
TOLERANCE = 1e-2


@dataclass(frozen=True)
class Pointwise:
    label: str
    side: int
    """Output rows and columns."""
    c: int
    k: int
    epilogue: str
    batch: int = 32
    window: int = 1
    """R = S; the input is `side + window - 1` square (no padding, stride 1)."""

    @property
    def pixels(self) -> int:
        return self.batch * self.side * self.side

    @property
    def input_side(self) -> int:
        return self.side + self.window - 1

    @property
    def residual(self) -> bool:
        return "residual" in self.epilogue

    @property
    def bytes(self) -> int:
        taps = self.window * self.window
        return 2 * (self.batch * self.input_side ** 2 * self.c + self.pixels * self.k * (2 if self.residual else 1)
                    + self.k * taps * self.c + self.k)

    @property
    def flops(self) -> int:
        return 2 * self.pixels * self.c * self.k * self.window * self.window

    def text(self) -> str:
        return conv_text(self.batch, self.input_side, self.input_side, self.c, self.k, self.window, self.window, pad=0,
                         epilogue=self.epilogue)


RELU6 = "bias, clip(0.0, 6.0)"
SHAPES = [
    # bench/kernels.py's "mb" rows, as there (+bias+relu)
    Pointwise("mb conv1x1 N32 C64 56² K256", 56, 64, 256, "bias, relu"),
    Pointwise("mb conv1x1 N32 C16 112² K96", 112, 16, 96, "bias, relu"),
    # ResNet-50's bottleneck 1x1s at 56²: the last one adds the shortcut, then ReLU
    Pointwise("resnet50 1x1 64->256 56² +res", 56, 64, 256, "bias, residual = add, then relu"),
    Pointwise("resnet50 1x1 256->64 56²", 56, 256, 64, "bias, relu"),
    Pointwise("resnet50 1x1 64->64 56²", 56, 64, 64, "bias, relu"),
    # MobileNetV2's: expand 1x1s end in ReLU6, project 1x1s are linear (+ the shortcut where shapes match)
    Pointwise("mnv2 project 112² 32->16", 112, 32, 16, "bias"),
    Pointwise("mnv2 expand 112² 16->96", 112, 16, 96, RELU6),
    Pointwise("mnv2 project 56² 96->24", 56, 96, 24, "bias"),
    Pointwise("mnv2 expand 56² 24->144", 56, 24, 144, RELU6),
    Pointwise("mnv2 project 56² 144->24 +res", 56, 144, 24, "bias, residual = add"),
    Pointwise("mnv2 expand 28² 32->192", 28, 32, 192, RELU6),
    Pointwise("mnv2 expand 14² 64->384", 14, 64, 384, RELU6),
    Pointwise("mnv2 expand 7² 160->960", 7, 160, 960, RELU6),
    Pointwise("mnv2 project 7² 960->160 +res", 7, 960, 160, "bias, residual = add"),
    # MobileNetV2's stem after space-to-depth-stem: 2x2 on the 16 padded channels
    Pointwise("mnv2 blocked stem 112² 2x2 16->32", 112, 16, 32, RELU6, window=2),
    # correctness only: rows (3 * 17²) and K (40) that no tile divides, C under the K tile
    Pointwise("odd 3x17² 24->40 +res", 17, 24, 40, "bias, residual = add, then relu", batch=3),
]


def override_of(choice: KernelChoice) -> dict:
    """A harness override that makes a case's kernel exactly `choice`."""
    return {f.name: getattr(choice, f.name) for f in dataclasses.fields(choice)}


def plan_cases(shape: Pointwise, with_candidates: bool) -> list[tuple[str, Case]]:
    """(role, lowered case) of every kernel timed for one conv: the heuristic's, the one
    before, the sm80 build's, then the other candidates (each kernel once)."""
    text = shape.text()
    (op,) = [o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp)]
    heuristic = HeuristicSelector(sms=SMS).select(op, "sm90")
    gemm = HeuristicSelector(sms=SMS, narrow_pointwise=False).select(op, "sm90")
    before = HeuristicSelector(sms=SMS, pointwise_gemms=False, narrow_pointwise=False,
                               stream_windows=False).select(op, "sm90")
    stem = HeuristicSelector(sms=SMS, stream_windows=False).select(op, "sm90")
    roles = [("heuristic", heuristic), ("3.x gemm", gemm), ("stem", stem), ("before", before)]
    if stream_conv_kernels.conv_reason(op) is None:
        roles += [("ours", KernelChoice(stream_conv_kernels.FAMILY, "sm80", tile.as_tile(), (8, 8, 8)))
                  for tile in stream_conv_kernels.tiles(op)]
    if with_candidates:
        roles += [("candidate", choice) for choice in candidates(op, "sm90", SMS, 3).choices]
    planned, seen = [], set()
    for role, choice in roles:
        if choice in seen:
            continue
        seen.add(choice)
        label = f"{shape.label} {role}"
        try:
            planned.append((role, lower(Case(label, text, override=override_of(choice), target="sm90"))))
        except Exception as error:  # noqa: BLE001 - a candidate the rules refuse is skipped, said why
            print(f"skipped {label}: {str(error).splitlines()[0]}")
    planned.append(("sm80 build", lower(Case(f"{shape.label} sm80", text, target="sm80"))))
    return planned


def describe(case: Case) -> str:
    text = describe_choice(case)
    if not isinstance(case.op, cutlass.TemplateOp):
        return text  # one of our own kernels
    tile = case.op.tile.value
    if case.op.prop_value("arch") == "sm90" and tile.threadblock[2] != 64:
        text += f" k{tile.threadblock[2]}"  # describe_choice's 3.x text leaves K out; the K tile varies here
    return text


def device_ms(torch, stream, fn, rotations: int) -> tuple[float, str]:
    """Device time per call of fn(i): INNER calls (or one per input set, if more) captured
    once as a CUDA graph on `stream`, the median of REPEATS replays; host-issued calls
    where capture fails. Every input set is used in each replay, so that the sets
    together outgrow the L2. Under harness.PROFILE_ENV: two plain calls, NaN."""
    if profile_launches(lambda: fn(0), stream):
        return float("nan"), "profile"
    calls = max(INNER, rotations)
    with torch.cuda.stream(stream):
        for i in range(max(WARMUP, rotations)):
            fn(i % rotations)
        torch.cuda.synchronize()
        graph, how = torch.cuda.CUDAGraph(), "graph"
        try:
            with torch.cuda.graph(graph, stream=stream):
                for i in range(calls):
                    fn(i % rotations)
            run = graph.replay
        except Exception:  # noqa: BLE001 - a launcher that cannot be captured is timed from the host
            torch.cuda.synchronize()
            graph, how = None, "host"

            def run():
                for i in range(calls):
                    fn(i % rotations)
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPEATS)]
        for i in range(REPEATS):
            starts[i].record(stream)
            run()
            ends[i].record(stream)
        torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) / calls for s, e in zip(starts, ends)), how


def measure(shape: Pointwise, cases, library, args, torch) -> tuple[list, dict]:
    """Every kernel's (role, case, ms, how, error) and the peers' times for one conv."""
    import torch.nn.functional as F

    stream = torch.cuda.Stream()
    rot = rotations_for(shape.bytes)
    gen = torch.Generator(device="cuda").manual_seed(0)

    def rand(*size, scale=1.0):
        return ((torch.rand(*size, device="cuda", generator=gen) * 2 - 1) * scale).half()

    n, side, c, k, window = shape.batch, shape.side, shape.c, shape.k, shape.window
    xs = [rand(n, shape.input_side, shape.input_side, c) for _ in range(rot)]
    residuals = [rand(n, side, side, k) for _ in range(rot)] if shape.residual else [None] * rot
    weight, bias = rand(k, window, window, c, scale=(3 / (c * window * window)) ** 0.5), rand(k)
    w_cl = weight.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
    xs_cl = [x.permute(0, 3, 1, 2) for x in xs]  # NCHW views of NHWC memory: channels_last

    def peer(x, r):
        y = F.conv2d(x, w_cl, bias)
        if r is not None:
            y = y + r.permute(0, 3, 1, 2)
        return y.clamp(0, 6) if "clip" in shape.epilogue else y.relu() if "relu" in shape.epilogue else y

    reference = peer(xs_cl[0], residuals[0]).permute(0, 2, 3, 1)
    rows = []
    for role, case in cases:
        bound = None
        try:
            with torch.cuda.stream(stream):
                bound = [BoundKernel(library, case, {"x": x, "w": weight, "bias": bias,
                                                     **({"residual": r} if r is not None else {})})
                         for x, r in zip(xs, residuals)]
                bound[0]()
            torch.cuda.synchronize()
            error = relative(bound[0].output, reference)
            ms, how = device_ms(torch, stream, lambda i, bound=bound: bound[i](), rot)
        except Exception as failure:  # noqa: BLE001 - a failing kernel is reported, not fatal
            print(f"  {case.label}: {str(failure).splitlines()[0]}", flush=True)
            ms, how, error = float("nan"), "failed", float("nan")
        rows.append((role, case, ms, how, error))
        print(f"  {role:10s} {describe(case):44s} {ms:.4f} ms {shape.bytes / ms / 1e9:5.2f} TB/s  err {error:.1e} ({how})", flush=True)
        del bound
    peers = {"cudnn": device_ms(torch, stream, lambda i: peer(xs_cl[i], residuals[i]), rot)[0]}
    if args.torch_compile:
        torch._dynamo.reset()
        compiled = torch.compile(peer)
        try:
            peers["compile"] = device_ms(torch, stream, lambda i: compiled(xs_cl[i], residuals[i]), rot)[0]
        except Exception as failure:  # noqa: BLE001 - report, keep measuring the rest
            print(f"torch.compile failed on {shape.label}: {str(failure).splitlines()[0]}")
            peers["compile"] = float("nan")
    torch.cuda.empty_cache()
    return rows, peers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="the convs whose label contains this text (comma-separated: any of them)")
    parser.add_argument("--library", default="/tmp/boltir-bench/pointwise.so")
    parser.add_argument("--list", action="store_true", help="print the cases and the distinct kernels, then stop (no GPU)")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop (fills the object cache)")
    parser.add_argument("--no-candidates", action="store_true",
                        help="time the heuristic's kernels (now, the 3.x GEMM, before, sm80) and our streaming kernel's tiles only")
    parser.add_argument("--torch-compile", action="store_true", help="also time torch.compile (default mode) on each conv")
    args = parser.parse_args()
    shapes = [s for s in SHAPES if not args.only or any(text in s.label for text in args.only.split(","))]
    planned = [(shape, plan_cases(shape, not args.no_candidates)) for shape in shapes]
    kernels: dict[str, set] = {}
    for _, cases in planned:
        for _, case in cases:
            generator = generator_of(case.op)
            kernels.setdefault(generator.kernel_arch(case.op), set()).add(generator.kernel_name(case.op))
    print(f"{sum(len(c) for _, c in planned)} cases; distinct kernels: "
          + ", ".join(f"{arch} {len(names)}" for arch, names in sorted(kernels.items())), flush=True)
    if args.list:
        for shape, cases in planned:
            print(f"{shape.label}: {shape.bytes / 1e6:.1f} MB")
            for role, case in cases:
                print(f"  {role:10s} {describe(case)}")
        return 0
    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library([case for _, cases in planned for _, case in cases], args.library)
    print(f"built the library in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 0

    import torch

    torch.backends.cudnn.benchmark = True
    target = get_target("sm90")
    every, summary, missed = [], [], []
    for shape, cases in planned:
        print(f"{shape.label}: {shape.bytes / 1e6:.1f} MB", flush=True)
        rows, peers = measure(shape, cases, library, args, torch)
        bound_ms = target.bound_seconds(shape.flops, shape.bytes) * 1e3
        for role, case, ms, how, error in rows:
            every.append((shape.label, role, describe(case), f"{ms:.4f}", f"{shape.bytes / ms / 1e9:.2f}",
                          f"{100 * bound_ms / ms:.0f}%", f"{error:.1e}", how))
        correct = [r for r in rows if r[4] < TOLERANCE]
        wrong = [r for r in rows if not r[4] < TOLERANCE]
        by_role = {r[0]: r for r in rows}
        heuristic, legacy = by_role.get("heuristic"), by_role["sm80 build"]
        before = by_role.get("before", heuristic or legacy)  # the same kernel as the heuristic's where it did not change
        best = min(correct, key=lambda r: r[2]) if correct else None
        ours = heuristic[2] if heuristic and heuristic[4] < TOLERANCE else float("nan")
        tbps = shape.bytes / ours / 1e9
        if shape.bytes >= FLOOR_BYTES and not tbps >= FLOOR_TBPS:
            missed.append(shape.label)
        summary.append((
            shape.label, f"{shape.bytes / 1e6:.1f}", f"{bound_ms:.4f}", describe(heuristic[1]) if heuristic else "-",
            f"{ours:.4f}", f"{tbps:.2f}", f"{100 * bound_ms / ours:.0f}%",
            f"{describe(before[1])} {before[2]:.4f}", f"{legacy[2]:.4f}",
            f"{describe(best[1])} {best[2]:.4f} ({shape.bytes / best[2] / 1e9:.2f} TB/s)" if best else "-",
            f"{peers['cudnn']:.4f}", f"{peers.get('compile', float('nan')):.4f}", f"{len(wrong)} of {len(rows)}",
        ))
    print(f"\nGPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; fp16, f32 accumulation, N = 32; device time "
          f"per call (graph replays of >= {INNER} calls, median of {REPEATS}); bound = bytes / {target.dram_bytes_per_second / 1e12:.2f} "
          f"TB/s (or FLOPs at peak); times in ms\n")
    print_table(("conv", "kind", "kernel", "ms", "TB/s", "of bound", "err", "timing"), every)
    print(f"\nIssue 15's floor: convs moving >= {FLOOR_BYTES / 1e6:.0f} MB at >= {FLOOR_TBPS} TB/s with the heuristic's kernel: "
          + ("met" if not missed else "missed by " + ", ".join(missed)) + "\n")
    print_table(("conv", "MB", "bound", "heuristic kernel", "ms", "TB/s", "of bound", "before (kernel ms)", "sm80 2.x",
                 "best (kernel ms)", "cuDNN", "compile", "wrong"), summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
