"""Our conv for few input channels (boltir/backends/cuda/codegen/stem_conv_kernels.py) on the
GPU: correctness against the op-level interpreter, then graph-timed against the CUTLASS
choice and cuDNN.

Correctness: the three stems (VGG-16's 3x3 on 4 channels, ResNet-50's and MobileNetV2's
after space-to-depth) at batch 2, odd sizes, strides 1 and 2, R = 1..7, C = 1..16,
dilation and asymmetric pads, every epilogue kind, f16 and bf16, the heuristic's tile and
the tuner's other tiles. The bar: ‖Δ‖/‖ref‖ < 1e-2 (outputs initialized to NaN, so a
missed element fails).

Timing: the three stems at batch 1 and 32, bias + activation, each kernel launched 10
times inside a captured CUDA graph (the median of 20 replays, divided by 10); ours (the
heuristic's tile, or the default tile where the heuristic keeps CUTLASS), the CUTLASS
kernel select-kernels picks without ours (few_channels=cutlass, the halo and streaming
convs off), and cuDNN (torch.nn.functional.conv2d on channels_last f16 + the activation,
captured the same way). `bound` is the roofline bound (FLOPs of the op-level conv at 660 TFLOP/s, input +
filter + bias + output bytes at 4 TB/s: sm90's GpuTarget); `%` is bound / ours.

    source bench/setup_gpu.sh && python3 -m bench.check_stem_conv [--only TEXT] [--no-timing] [--timing-only TEXT] [--list]
    python3 -m bench.check_stem_conv --build-only      # compile every kernel (fills the object cache); no GPU
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

from bench.tables import print_table
from bench.harness import conv_timing_operands, profile_launches
from boltir.backends.cuda.codegen import cutlass_kernels, stem_conv_kernels
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.toolchain.kernel_library import KernelLibrary
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry, run
from boltir.ir import make_context, parse_module
from boltir.target import get_target
from tests.passes.equivalence import random_inputs
from tests.support.op_modules import conv_text
from tests.support.torch_arrays import to_numpy_f32, to_torch

SMS = 132
STEMS = {
    # name: conv_text arguments (NHWC input as the pipeline leaves it), activation for cuDNN
    "vgg16 3x3 C4->64": ({"h": 224, "w": 224, "c": 4, "k": 64, "r": 3, "s": 3}, "relu"),
    "resnet50 s2d 4x4 C16->64": ({"h": 115, "w": 115, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0}, "relu"),
    "mobilenetv2 s2d 2x2 C16->32": ({"h": 113, "w": 113, "c": 16, "k": 32, "r": 2, "s": 2, "pad": 0, "epilogue": "bias, clip(0.0, 6.0)"}, "relu6"),
}


@dataclass
class Case:
    label: str
    text: str
    few_channels: str = "stem"
    tile: stem_conv_kernels.StemTile | None = None
    module: object = None  # the op-level module
    op: object = None  # the lowered kernel op


def lower(case: Case) -> Case:
    ctx = make_context()
    case.module = parse_module(case.text, f"<{case.label}>", ctx=ctx)
    module = case.module.clone()
    # CUTLASS's choice: neither ours nor the halo or streaming conv, whose sm90 rules would take
    # the blocked stems first
    others = {"narrow_convs": "cutlass", "narrow_windows": "stem"} if case.few_channels == "cutlass" else {}
    SelectKernelsPass(selector="heuristic", arch="sm90", sms=SMS, few_channels=case.few_channels, **others).apply(ctx, module)
    for target in module.walk():
        if not isinstance(target, ops.Conv2dOp) or case.few_channels != "stem":
            continue
        # this check is for our kernel: where the heuristic keeps a small grid on CUTLASS
        # (ResNet-50's blocked stem at batch 1 and 2), ours runs with its default tile
        tile = case.tile
        if tile is None and KernelChoice.from_attr(target.attributes[KERNEL_ATTR]).family != stem_conv_kernels.FAMILY:
            tile = stem_conv_kernels.default_tile(target, SMS)
        if tile is not None:
            target.attributes[KERNEL_ATTR] = KernelChoice(stem_conv_kernels.FAMILY, "sm80", tile.as_tile(), (8, 8, 8)).to_attr()
    LowerOpToCutlassPass().apply(ctx, module)
    (case.op,) = [o for o in find_entry(module).body.ops if isinstance(o, cutlass.TemplateOp) or stem_conv_kernels.computes(o)]
    return case


def describe(case: Case) -> str:
    if stem_conv_kernels.computes(case.op):
        return f"ours {stem_conv_kernels.marked_tile(case.op).describe()}"
    return f"{case.op.name} {case.op.prop_value('arch')} {'x'.join(map(str, case.op.tile.value.threadblock))}"


def build(cases: list[Case], path: str) -> KernelLibrary:
    jobs = {}
    for case in cases:
        generator = stem_conv_kernels if stem_conv_kernels.computes(case.op) else cutlass_kernels
        name = generator.kernel_name(case.op)
        jobs.setdefault(name, CompileJob(name, generator.emit_translation_unit([case.op]), generator.kernel_arch(case.op)))
    return KernelLibrary(build_shared_library(list(jobs.values()), path, progress="always"))


def correctness_cases() -> list[Case]:
    out = []
    for name, (shape, _) in STEMS.items():
        text = conv_text(2, **shape)
        out.append(Case(f"{name} N2", text))
        op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
        for choice in candidates(op, "sm90", sms=SMS).choices[1:]:
            if choice.family == stem_conv_kernels.FAMILY:
                tile = stem_conv_kernels.StemTile.of(choice.tile)
                out.append(Case(f"{name} N2 tile {tile.describe()}", text, tile=tile))
    shapes = [  # (n, h, w, c, k, r, stride, extra)
        (1, 224, 224, 3, 64, 7, 2, {}), (2, 31, 29, 3, 32, 3, 2, {}), (2, 17, 23, 1, 16, 5, 1, {}),
        (1, 33, 35, 2, 24, 3, 1, {}), (1, 19, 21, 5, 40, 7, 2, {}), (2, 15, 16, 6, 8, 1, 1, {}),
        (1, 23, 19, 7, 64, 2, 1, {"pad": 0}), (2, 20, 20, 8, 64, 3, 2, {}), (1, 13, 29, 9, 48, 4, 1, {"pad": 1}),
        (1, 27, 25, 12, 96, 3, 1, {}), (1, 12, 12, 13, 128, 3, 1, {}), (2, 37, 41, 16, 64, 6, 2, {}),
        (1, 21, 23, 4, 32, 3, 1, {"dilation": 2, "pad": 2}), (1, 25, 22, 4, 16, 3, 2, {"pads": (0, 1, 2, 0)}),
    ]
    for n, h, w, c, k, r, stride, extra in shapes:
        for element in ("f16", "bf16"):
            label = f"{element} {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k} {extra or ''}"
            text = conv_text(n, h, w, c, k, r, r, stride=stride, element=element, **extra)
            # the heuristic leaves 1x1 convs to the GEMM rules: ours by its default tile
            op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
            out.append(Case(label, text, tile=stem_conv_kernels.default_tile(op, SMS) if r == 1 else None))
    for epilogue in ("bias, hardswish", "bias, relu, residual = add, then relu", "residual = add", "none",
                     "alpha = 0.5, beta = 2.0, bias, silu", "bias, gelu", "bias, leaky_relu(0.1)"):
        out.append(Case(f"f16 3x3/1 2x19x21x4->32 <{epilogue}>", conv_text(2, 19, 21, 4, 32, 3, 3, epilogue=epilogue)))
    return out


def check(library: KernelLibrary, case: Case, rng) -> float:
    import torch

    inputs = random_inputs(case.module, rng)
    (expected,) = run(case.module, inputs)
    arguments = stem_conv_kernels.launch_arguments(case.op)
    names = {arg: f"arg{i}" for i, arg in enumerate(case.op.parent_op().body.block.args)}  # the lowered module's
    tensors = [None if v is None else to_torch(inputs[names[v]]) for v in arguments.operands[:-1]]
    output = to_torch(np.full(expected.shape, np.nan, numpy_dtype(case.op.output.type.element_type)))
    library.launch(case.op, [None if t is None else t.data_ptr() for t in tensors] + [output.data_ptr()])
    torch.cuda.synchronize()
    got, ref = to_numpy_f32(output).astype(np.float64), expected.astype(np.float64)
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)) if np.isfinite(got).all() else float("inf")


def graph_ms(launch, stream, repeats: int = 10, samples: int = 20) -> float:
    """One launch's time: `repeats` launches captured in a CUDA graph, median replay / repeats
    (NaN, two plain launches, under harness.PROFILE_ENV)."""
    import torch

    if profile_launches(launch, stream):
        return float("nan")

    with torch.cuda.stream(stream):
        launch()  # warm-up (and the launcher's one-time occupancy query) outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(repeats):
            launch()
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / repeats)
    return float(np.median(times))


def timing_plans(only: str | None) -> list[tuple]:
    """(name, batch, activation, our lowered case, CUTLASS's) for every timed conv whose name
    contains one of `only`'s comma-separated texts (all where None)."""
    plans = []
    for name, (shape, activation) in STEMS.items():
        if only and not any(text in name for text in only.split(",")):
            continue
        for batch in (1, 32):
            text = conv_text(batch, **shape)
            plans.append((name, batch, activation, lower(Case(f"{name} N{batch}", text)),
                          lower(Case(f"{name} N{batch} cutlass", text, few_channels="cutlass"))))
    return plans


def timing_rows(library: KernelLibrary, plans: list[tuple]) -> list[tuple]:
    import torch
    import torch.nn.functional as F

    stream = torch.cuda.Stream()
    target = get_target("sm90")
    rows = []
    for name, batch, activation, ours, theirs in plans:
        op = ours.op
        x, weight, bias, out, flops, moved = conv_timing_operands(op)
        pad, stride = op.prop_value("pads")[0], tuple(op.prop_value("strides"))
        timed = []
        for case in (ours, theirs):
            workspace_bytes = library.workspace_size(case.op)
            workspace = torch.empty(max(workspace_bytes, 1), device="cuda", dtype=torch.uint8)
            launch = library.bind(case.op, [x.data_ptr(), weight.data_ptr(), bias.data_ptr(), None, out.data_ptr()],
                                  workspace=workspace.data_ptr(), workspace_bytes=workspace_bytes, stream=stream.cuda_stream)
            timed.append(graph_ms(launch, stream))
        x_cl, w_cl = x.permute(0, 3, 1, 2), weight.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
        act = F.relu if activation == "relu" else F.relu6
        def cudnn_call(act=act, x_cl=x_cl, w_cl=w_cl, bias=bias, pad=pad, stride=stride):
            act(F.conv2d(x_cl, w_cl, bias, stride=stride, padding=pad), inplace=True)
        cudnn = graph_ms(cudnn_call, stream)
        bound = target.bound_seconds(flops, moved) * 1e3
        rows.append((name, batch, describe(ours), timed[0], describe(theirs), timed[1], cudnn, bound,
                     f"{100 * bound / timed[0]:.0f}%", f"{moved / timed[0] / 1e9:.2f}"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the correctness cases whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--timing-only", help="time the convs whose name contains this text (or one of these, comma-separated)")
    parser.add_argument("--build-only", action="store_true", help="compile the kernels (correctness and timing) and stop")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default="/tmp/boltir-check/stem_conv.so")
    args = parser.parse_args()

    rows, lowered = [], []
    for case in correctness_cases():
        if args.only and args.only not in case.label:
            continue
        try:
            lowered.append(lower(case))
            assert stem_conv_kernels.computes(case.op), f"lowered to {case.op.name}, not our kernel"
        except Exception as error:  # noqa: BLE001 - a case that cannot lower is a failure row
            rows.append((case.label, "-", "-", "lowering failed: " + str(error).splitlines()[0], "FAIL"))
    if args.list:
        for case in lowered:
            print(f"{case.label:60s} {describe(case)}")
        return 1 if rows else 0

    import os

    plans = [] if args.no_timing else timing_plans(args.timing_only)
    os.makedirs(os.path.dirname(args.library), exist_ok=True)
    start = time.monotonic()
    library = build([c for c in lowered if stem_conv_kernels.computes(c.op)] + [c for plan in plans for c in plan[3:]],
                    args.library)
    print(f"built the kernels of {len(lowered)} cases and {len(plans)} timed convs in {time.monotonic() - start:.0f} s",
          flush=True)
    if args.build_only:
        return 1 if rows else 0

    import torch

    rng = np.random.default_rng(args.seed)
    for case in lowered:
        try:
            error = check(library, case, rng)
            rows.append((case.label, describe(case), f"{error:.2e}", "< 1e-02", "pass" if error < 1e-2 else "FAIL"))
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            rows.append((case.label, describe(case), "-", str(error).splitlines()[0][:60], "FAIL"))
    failed = sum(row[-1] != "pass" for row in rows)
    timing = timing_rows(library, plans) if plans else []

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: the op-level interpreter; seed {args.seed}")
    print_table(("case", "kernel", "rel err", "bar", "result"), rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    if timing:
        print("\ngraph-timed ms per launch (bias + activation fused; cuDNN: channels_last conv + activation)")
        print_table(("stem", "N", "ours", "ours ms", "cutlass choice", "cutlass ms", "cudnn ms", "bound ms",
                     "bound/ours", "ours TB/s"), timing)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
