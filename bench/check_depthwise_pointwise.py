"""Runs our depthwise-then-pointwise conv (boltir/backends/cuda/codegen/depthwise_pointwise_kernels.py,
made by fuse-depthwise-pointwise) on the GPU and compares each result with the op-level
interpreter on fresh random inputs: MobileNetV2's six pairs it takes (the depthwise conv at
112², 56² and 28², strides 1 and 2, the projection with and without the block's residual),
bf16, a 5x5 dilated window, no biases, partial row tiles and strips, and the tuner-style
tile variants (rows, columns, warps). The bar: ‖Δ‖/‖ref‖ < 1e-2. Prints a pass/fail table
last; exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_depthwise_pointwise [--only TEXT] [--list]
    source bench/setup_gpu.sh && python3 -m bench.check_depthwise_pointwise --timing [--batch 32] [--only TEXT]

`--timing`: each of MobileNetV2's six pairs at the batch, f16, as the default build runs it
(our depthwise kernel, then the 1x1 conv on the kernel select-kernels gives it, the
intermediate through DRAM: two launches in one graph) against the fused kernel at its
heuristic's tile and its neighbours. Device time per call (CUDA-graph replays, operands
rotated past the L2), TB/s of the bytes each moves once (the pair: the intermediate written
and read back too), ‖Δ‖/‖ref‖ of each fused kernel against the pair. Prints the table last.
"""

from __future__ import annotations

import dataclasses
import sys

from bench.harness import BoundKernel, Case, build_timed, correctness_main, describe_choice
from boltir.backends.cuda.codegen import depthwise_pointwise_kernels as dp
from tests.support.op_modules import conv_text, depthwise_pointwise_text

PAIRS = {  # label: (side, C, K, stride, residual): MobileNetV2's pairs the kernel takes
    "112² C32 -> 16": (112, 32, 16, 1, False),
    "112²/2 C96 -> 24": (112, 96, 24, 2, False),
    "56² C144 -> 24 + res": (56, 144, 24, 1, True),
    "56²/2 C144 -> 32": (56, 144, 32, 2, False),
    "28² C192 -> 32 + res": (28, 192, 32, 1, True),
    "28²/2 C192 -> 64": (28, 192, 64, 2, False),
}


def pair(label: str, n: int) -> str:
    side, c, k, stride, residual = PAIRS[label]
    pads = (1, 1, 1, 1) if stride == 1 else (0, 0, 1, 1)  # torch's symmetric 1 computes the same here; ONNX's exporters write 1,1,1,1
    return depthwise_pointwise_text(n=n, h=side, w=side, c=c, k=k, strides=(stride, stride), pads=pads, residual=residual)


def fused_case(label: str, text: str, element: str = "f16", tile: dp.PairTile | None = None) -> Case:
    """The pair fused on our kernel, at `tile` where given."""
    override = {"tile": tile.as_tile()} if tile is not None else {}
    return Case(f"{label}{f' tile {tile.describe()}' if tile else ''}", text, element, override=override, target="sm90",
                depthwise="direct", fuse_depthwise_pointwise=True)


def the_fused_op(text: str):
    case = fused_case("probe", text)
    from bench.harness import lower

    return lower(case).op


def neighbours(op) -> list[dp.PairTile]:
    """The heuristic's tile's neighbours the rules take: other rows, columns and warps."""
    tile = dp.default_tile(op)
    variants = [dataclasses.replace(tile, rows=rows) for rows in dp.ROWS]
    variants += [dataclasses.replace(tile, columns=columns) for columns in dp.COLUMNS]
    variants.append(dataclasses.replace(tile, warps=4 if tile.warps == 8 else 8))
    return [v for v in dict.fromkeys(variants) if v != tile and dp.tile_reason(op, v) is None]


def cases() -> list[Case]:
    out = []
    for label in PAIRS:
        text = pair(label, 2)
        out.append(fused_case(f"{label} N2", text))
        if label.startswith("28²"):
            out += [fused_case(f"{label} N2", text, tile=tile) for tile in neighbours(the_fused_op(text))]
    variants = {
        "bf16 20² C64 -> 32 + res": (depthwise_pointwise_text(n=2, h=20, w=20, c=64, k=32, element="bf16", residual=True), "bf16"),
        "5x5 dil2 13x11 C48 -> 24, no biases": (depthwise_pointwise_text(n=1, h=13, w=11, c=48, k=24, r=5, s=5,
                                                                         pads=(4, 4, 4, 4), dilations=(2, 2), bias=False), "f16"),
        "3x3/2 pads 0,0,1,1 15x17 C32 -> 40": (depthwise_pointwise_text(n=3, h=15, w=17, c=32, k=40, strides=(2, 2),
                                                                        pads=(0, 0, 1, 1)), "f16"),
        "7x7 C16 -> 8 (one fragment, part of a strip)": (depthwise_pointwise_text(n=1, h=7, w=7, c=16, k=8), "f16"),
    }
    for label, (text, element) in variants.items():
        out.append(fused_case(label, text, element))
        out += [fused_case(label, text, element, tile) for tile in (dp.PairTile(4, 8, 4), dp.PairTile(1, 1, 8))
                if dp.tile_reason(the_fused_op(text), tile) is None]
    return out


# ------------------------------------------------------------------------ timing


TOLERANCE = 1e-2


def timing_main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="times the fused kernel against the pair as the default build runs it")
    parser.add_argument("--timing", action="store_true", required=True)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--only", help="the pairs whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop")
    parser.add_argument("--library", default="/tmp/boltir-check/depthwise-pointwise-timing.so")
    args = parser.parse_args(argv)

    plans = []
    for label in PAIRS:
        if args.only and args.only not in label:
            continue
        text = pair(label, args.batch)
        side, c, k, stride, residual = PAIRS[label]
        pads = (1, 1, 1, 1) if stride == 1 else (0, 0, 1, 1)
        p = (side + pads[0] + pads[2] - 3) // stride + 1
        # the pair's halves as the default build runs them, each alone (arguments x, w, bias, residual)
        depthwise_text = conv_text(args.batch, side, side, c, c, 3, 3, stride=stride, pads=pads, depthwise=True,
                                   epilogue="bias, clip(0.0, 6.0)")
        pointwise_text = conv_text(args.batch, p, p, c, k, 1, 1, pad=0,
                                   epilogue="bias, residual = add" if residual else "bias")
        halves = [Case(f"{label} depthwise", depthwise_text, target="sm90", depthwise="direct"),
                  Case(f"{label} 1x1", pointwise_text, target="sm90")]
        fused = [fused_case(label, text)]
        fused += [fused_case(label, text, tile=tile) for tile in neighbours(the_fused_op(text))]
        plans.append((label, p, halves, fused))
    library = build_timed([case for *_, halves, fused in plans for case in halves + fused], args)
    if isinstance(library, int):
        return library

    import torch

    from bench.kernels import relative, rotations_for
    from bench.pointwise import device_ms, print_table

    stream = torch.cuda.Stream()
    rows = []
    for label, p, (dw_case, pw_case), fused in plans:
        side, c, k, stride, residual = PAIRS[label]
        n = args.batch
        fused_bytes = 2 * (n * side * side * c + c * 9 + c + k * c + k + n * p * p * k * (2 if residual else 1))
        pair_bytes = fused_bytes + 2 * 2 * n * p * p * c  # the intermediate written and read back
        rotations = rotations_for(pair_bytes)
        gen = torch.Generator(device="cuda").manual_seed(0)

        def rand(*size, scale=1.0, gen=gen):
            return ((torch.rand(*size, device="cuda", generator=gen) * 2 - 1) * scale).half()

        w0, b0 = rand(c, 3, 3, 1, scale=(3 / 9) ** 0.5), rand(c)
        w1, b1 = rand(k, 1, 1, c, scale=(3 / c) ** 0.5), rand(k)
        xs = [rand(n, side, side, c) for _ in range(rotations)]
        res = [rand(n, p, p, k) if residual else None for _ in range(rotations)]

        def inputs(i):
            named = {"x": xs[i], "w0": w0, "w1": w1, "b0": b0, "b1": b1}
            return named | ({"res": res[i]} if residual else {})

        with torch.cuda.stream(stream):
            dws = [BoundKernel(library, dw_case, {"x": xs[i], "w": w0, "bias": b0}) for i in range(rotations)]
            pws = [BoundKernel(library, pw_case, {"x": dws[i].output, "w": w1, "bias": b1}
                               | ({"residual": res[i]} if residual else {})) for i in range(rotations)]
            dws[0](), pws[0]()
        torch.cuda.synchronize()
        reference = pws[0].output.clone()
        ms, how = device_ms(torch, stream, lambda i: (dws[i](), pws[i]()), rotations)
        rows.append((label, f"N{n}", "pair (default build)", f"{describe_choice(dw_case)} + {describe_choice(pw_case)}",
                     f"{ms:.4f}", f"{pair_bytes / 1e6:.1f}", f"{pair_bytes / ms / 1e9:.2f}", "-", how))
        print("row:", " | ".join(rows[-1]), flush=True)
        dws = pws = None
        for case in fused:
            try:
                with torch.cuda.stream(stream):
                    bound = [BoundKernel(library, case, inputs(i)) for i in range(rotations)]
                    bound[0]()
                torch.cuda.synchronize()
                error = relative(bound[0].output, reference)
                ms, how = device_ms(torch, stream, lambda i, bound=bound: bound[i](), rotations)
            except Exception as failure:  # noqa: BLE001 - a failing kernel is a row, not the end
                print(f"  {case.label}: {str(failure).splitlines()[0]}", flush=True)
                ms, how, error = float("nan"), "failed", float("nan")
            bound = None
            rows.append((label, f"N{n}", "fused", describe_choice(case), f"{ms:.4f}", f"{fused_bytes / 1e6:.1f}",
                         f"{fused_bytes / ms / 1e9:.2f}", f"{error:.1e} {'ok' if error < TOLERANCE else 'WRONG'}", how))
            print("row:", " | ".join(rows[-1]), flush=True)
        torch.cuda.empty_cache()

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; f16; device time per call (CUDA-graph replays, operands rotated "
          "past the L2); MB and TB/s: the bytes each moves once (the pair's include the intermediate written and "
          "read back); err: ‖Δ‖/‖ref‖ against the pair")
    print_table(("pair", "batch", "how", "kernel", "ms", "MB", "TB/s", "err", "timed"), rows)
    return 0


def main() -> int:
    if "--timing" in sys.argv[1:]:
        return timing_main(sys.argv[1:])
    return correctness_main(__doc__.splitlines()[0], cases(), dp.computes, "/tmp/boltir-check/depthwise-pointwise.so")


if __name__ == "__main__":
    sys.exit(main())
