"""Runs our depthwise conv kernel (boltir/backends/cuda/codegen/depthwise_kernels.py) on the
GPU and compares each result with the op-level interpreter on fresh random inputs: shapes,
strides 1 and 2, dilation, asymmetric padding, R = 3 / 5 / 7, every epilogue kind (bias,
ReLU6, hardswish, residual, second activation), f16 / bf16 / f32, channel counts that are
not a multiple of 8, the heuristic's tile and the tuner's other tiles, and the staged
window (`ahead` 1 to 3: its heuristic's tile on every shape, its neighbours on the first
eight). The bar: ‖Δ‖/‖ref‖ < 1e-2 for f16/bf16, 1e-3 for f32. Prints a pass/fail table
last; exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_depthwise [--only TEXT] [--list]
    source bench/setup_gpu.sh && python3 -m bench.check_depthwise --timing [--only TEXT] [--list]

`--timing`: MobileNetV2's five depthwise convs that move 16 MB or more (batch 32, f16,
bias + ReLU6), each as the heuristic's tile (the row walk) and as the staged window at
`depthwise_kernels.staged_tiles`; device time per call (CUDA-graph replays, inputs and
outputs rotated past the L2: bench.pointwise's `device_ms`), TB/s of the bytes moved once
(input, filter, bias, output), and ‖Δ‖/‖ref‖ against the heuristic's kernel. Prints the
table last. The timing against CUTLASS's depthwise conv and cuDNN is
`python3 -m bench.kernels --only dw`.
"""

from __future__ import annotations

import dataclasses
import sys

from bench.harness import BoundKernel, Case, build_timed, correctness_main, describe_choice
from boltir.backends.cuda.codegen import depthwise_kernels
from boltir.backends.cuda.select.candidates import candidates
from boltir.dialects import op as ops
from boltir.ir import parse_module
from tests.support.op_modules import conv_text

SMS = 132


def depthwise(n, h, w, c, r=3, stride=1, element="f16", epilogue="bias, clip(0.0, 6.0)", pad=None, dilation=1,
              pads=None) -> tuple[str, str]:
    """(label, op-level text) of one NHWC depthwise conv; `pads` is (top, left, bottom, right)."""
    text = conv_text(n, h, w, c, c, r, r, stride=stride, pad=pad, element=element, epilogue=epilogue, depthwise=True,
                     pads=pads, dilation=dilation)
    label = f"dw {element} {r}x{r}/{stride} {n}x{h}x{w}x{c}"
    if dilation != 1 or pads is not None:
        label += f" dil{dilation} pads{list(pads or (pad,) * 4)}"
    return f"{label} <{epilogue}>", text


def shapes() -> list[tuple[str, str]]:
    return [
        # MobileNetV2's depthwise layers (batch 2 here: correctness, not speed)
        depthwise(2, 112, 112, 32),
        depthwise(2, 112, 112, 96, stride=2),
        depthwise(2, 56, 56, 144),
        depthwise(2, 56, 56, 144, stride=2),
        depthwise(2, 28, 28, 192),
        depthwise(2, 14, 14, 384),
        depthwise(2, 14, 14, 576, stride=2),
        depthwise(2, 7, 7, 960),
        # epilogues
        depthwise(2, 17, 19, 64, epilogue="bias, hardswish"),
        depthwise(2, 17, 19, 64, epilogue="bias, relu, residual = add, then relu"),
        depthwise(1, 16, 16, 32, epilogue="residual = add"),
        depthwise(1, 16, 16, 32, epilogue="alpha = 0.5, beta = 2.0, bias, silu"),
        depthwise(1, 15, 15, 48, element="bf16", epilogue="bias, gelu"),
        depthwise(1, 15, 15, 48, element="f32", epilogue="bias, leaky_relu(0.1)"),
        # filters, strides, dilation, padding
        depthwise(2, 28, 28, 96, r=5),
        depthwise(2, 29, 29, 96, r=5, stride=2, element="bf16"),
        depthwise(1, 20, 20, 64, r=7),
        depthwise(1, 21, 23, 32, dilation=2, pad=2),
        depthwise(1, 21, 23, 32, stride=2, pads=(0, 1, 1, 0)),
        depthwise(1, 21, 23, 32, stride=2, dilation=2, pad=2),
        depthwise(1, 11, 11, 16, r=3, pad=0),
        # channels not a multiple of 8
        depthwise(2, 13, 13, 12),
        depthwise(2, 13, 13, 6, element="bf16"),
        depthwise(1, 13, 13, 3, stride=2),
        depthwise(1, 9, 9, 20, element="f32", r=5),
    ]


def tile_case(label: str, text: str, element: str, tile: depthwise_kernels.DirectTile) -> Case:
    """The case with our kernel at `tile` in place of the heuristic's."""
    override = {"tile": tile.as_tile(), "alignment": (tile.vector,) * 3}
    return Case(f"{label} tile {tile.describe()}", text, element, override=override, target="sm90", depthwise="direct")


def staged(op: ops.Conv2dOp, every: bool) -> list[depthwise_kernels.DirectTile]:
    """The staged window's tiles to check: all of `staged_tiles` (every), else its heuristic's
    tile walking 3 rows (the ring wraps; a last row group is cut where 3 does not divide P),
    one, two and three rows ahead (those the rules take)."""
    tiles = depthwise_kernels.staged_tiles(op, SMS)
    if every or not tiles:
        return tiles
    ahead = [dataclasses.replace(tiles[0], rows=3, ahead=a) for a in depthwise_kernels.AHEADS[1:]]
    return [t for t in ahead if depthwise_kernels.tile_reason(op, t) is None]


def cases() -> list[Case]:
    """Each shape with the heuristic's tile and the staged window's; the first few shapes
    with every tile the tuner would measure and the staged window's neighbours too."""
    out = []
    for index, (label, text) in enumerate(shapes()):
        element = "bf16" if " bf16 " in label else "f32" if " f32 " in label else "f16"
        out.append(Case(label, text, element, target="sm90", depthwise="direct"))
        op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
        if index < 8:
            for choice in candidates(op, "sm90", sms=SMS).choices[1:]:
                if choice.family == depthwise_kernels.FAMILY:
                    out.append(tile_case(label, text, element, depthwise_kernels.DirectTile.of(choice.tile)))
        out += [tile_case(label, text, element, tile) for tile in staged(op, every=index < 8)]
    return out


# ------------------------------------------------------------------------ timing


TIMED = [(112, 32, 1), (112, 96, 2), (56, 144, 1), (56, 144, 2), (28, 192, 1)]
"""MobileNetV2's depthwise convs that move 16 MB or more at batch 32: (side, C, stride)."""
BATCH = 32
FLOOR_TBPS = 2.5
TOLERANCE = 1e-2
"""‖Δ‖/‖ref‖ against the heuristic's kernel above which a timed kernel is WRONG (and not
counted among the best)."""


def timing_cases() -> list[tuple[str, tuple[int, int], int, list[Case]]]:
    """(label, (side, C), bytes moved once, cases) of each timed conv: the heuristic's tile
    first, then the row walk's and the staged window's tiles (staged_tiles)."""
    out = []
    for side, c, stride in TIMED:
        label, text = depthwise(BATCH, side, side, c, stride=stride)
        op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
        n, h, w, _ = op.input.type.get_shape()
        _, p, q, _ = op.output.type.get_shape()
        moved = 2 * (n * h * w * c + n * p * q * c + c * 9 + c)
        cases = [Case(label, text, "f16", target="sm90", depthwise="direct")]
        others = [depthwise_kernels.row_walk_tile(op, SMS), *depthwise_kernels.staged_tiles(op, SMS)]
        chosen = depthwise_kernels.default_tile(op, SMS)
        cases += [tile_case(label, text, "f16", tile) for tile in dict.fromkeys(others) if tile != chosen]
        out.append((label, (side, c), moved, cases))
    return out


def timing_main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="times the row walk against the staged window")
    parser.add_argument("--timing", action="store_true", required=True)
    parser.add_argument("--only", help="the convs whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop")
    parser.add_argument("--library", default="/tmp/boltir-check/depthwise-timing.so")
    args = parser.parse_args(argv)
    planned = [plan for plan in timing_cases() if not args.only or args.only in plan[0]]
    library = build_timed([case for *_, cases in planned for case in cases], args, depthwise_kernels.computes)
    if isinstance(library, int):
        return library

    import torch

    from bench.kernels import relative, rotations_for
    from bench.pointwise import device_ms
    from bench.tables import print_table

    stream = torch.cuda.Stream()
    rows, best = [], {}
    for label, (side, c), moved, cases in planned:
        rotations = rotations_for(moved)  # each rotation has its own input and output
        gen = torch.Generator(device="cuda").manual_seed(0)

        def rand(*size, scale=1.0, gen=gen):
            return ((torch.rand(*size, device="cuda", generator=gen) * 2 - 1) * scale).half()

        xs = [rand(BATCH, side, side, c) for _ in range(rotations)]
        weight, bias = rand(c, 3, 3, 1, scale=(3 / 9) ** 0.5), rand(c)
        reference = None
        for case in cases:
            try:
                with torch.cuda.stream(stream):
                    bound = [BoundKernel(library, case, {"x": x, "w": weight, "bias": bias}) for x in xs]
                    bound[0]()
                torch.cuda.synchronize()
                reference = bound[0].output.clone() if reference is None else reference
                error = relative(bound[0].output, reference)
                ms, how = device_ms(torch, stream, lambda i, bound=bound: bound[i](), rotations)
            except Exception as failure:  # noqa: BLE001 - a failing kernel is a row, not the end
                print(f"  {case.label}: {str(failure).splitlines()[0]}", flush=True)
                ms, how, error = float("nan"), "failed", float("nan")
            bound = None
            role = ("heuristic" if case is cases[0] else
                    "staged" if depthwise_kernels.marked_tile(case.op).ahead else "row walk")
            right = "ok" if error < TOLERANCE else "WRONG"
            rows.append((label.split(" <")[0], f"{moved / 1e6:.1f}", role, describe_choice(case), f"{ms:.4f}",
                         f"{moved / ms / 1e9:.2f}", f"{error:.1e} {right}", how))
            print("row:", " | ".join(rows[-1]), flush=True)
            if right == "ok":
                best.setdefault(label, {}).setdefault(role, []).append((moved / ms / 1e9, describe_choice(case)))
        torch.cuda.empty_cache()

    print(f"\nthe best of each (floor: {FLOOR_TBPS} TB/s on every depthwise conv moving 16 MB or more):")
    for label, roles in best.items():
        text = ", ".join(f"{role} {max(tbps)[1]} {max(tbps)[0]:.2f} TB/s" for role, tbps in roles.items())
        staged_best = max(roles.get("staged", [(0.0, "")]))[0]
        print(f"  {label.split(' <')[0]}: {text}{'' if staged_best >= FLOOR_TBPS else '  (staged under the floor)'}")
    print(f"\nGPU: {torch.cuda.get_device_name(0)}; batch {BATCH}, f16, bias + ReLU6; device time per call "
          f"(CUDA-graph replays, operands rotated past the L2); TB/s of input, filter, bias and output once; "
          f"err: ‖Δ‖/‖ref‖ against the heuristic's kernel")
    print_table(("conv", "MB", "role", "kernel", "ms", "TB/s", "err", "timed"), rows)
    return 0


def main() -> int:
    if "--timing" in sys.argv[1:]:
        return timing_main(sys.argv[1:])
    return correctness_main(__doc__.splitlines()[0], cases(), depthwise_kernels.computes, "/tmp/boltir-check/depthwise.so")


if __name__ == "__main__":
    sys.exit(main())
