"""Runs our depthwise-then-pointwise conv (boltir/backends/cuda/codegen/depthwise_pointwise_kernels.py,
made by fuse-depthwise-pointwise) on the GPU and compares each result with the op-level
interpreter on fresh random inputs: MobileNetV2's pairs it takes (the depthwise conv at
112², 56² and 28², strides 1 and 2, the projection with and without the block's residual)
and its whole blocks with their expansion (`expand=true`), bf16, a 5x5 dilated window, no
biases, partial row tiles and strips, and the tuner-style tile variants (rows, columns,
warps). The bar: ‖Δ‖/‖ref‖ < 1e-2. Prints a pass/fail table last; exits 1 if any fails.

    source bench/setup_gpu.sh && python3 -m bench.check_depthwise_pointwise [--only TEXT] [--list]
    source bench/setup_gpu.sh && python3 -m bench.check_depthwise_pointwise --timing [--batch 32] [--only TEXT]

`--timing`: MobileNetV2's blocks the kernel takes, at the batch, f16: as the default build
runs them (the expansion on its kernel, our depthwise kernel, the projection on its kernel:
launches in one graph, the intermediates through DRAM), with the pair fused (the expansion,
then our kernel), and the whole block fused (our kernel with the expansion), each fused
form at its heuristic's tile and its neighbours. Device time per call (CUDA-graph
replays, operands rotated past the L2), TB/s of the bytes each path moves once (its
intermediates written and read back included), ‖Δ‖/‖ref‖ against the default build's.
Prints the table last.
"""

from __future__ import annotations

import dataclasses
import sys

from bench.harness import BoundKernel, Case, build_timed, correctness_main, describe_choice
from boltir.backends.cuda.codegen import depthwise_pointwise_kernels as dp
from boltir.dialects.shapes import window_output_size
from tests.support.op_modules import conv_text, depthwise_pointwise_text, inverted_residual_text

PAIRS = {  # label: (side, C, K, stride, residual): MobileNetV2's pairs the kernel takes
    "112² C32 -> 16": (112, 32, 16, 1, False),
    "112²/2 C96 -> 24": (112, 96, 24, 2, False),
    "56² C144 -> 24 + res": (56, 144, 24, 1, True),
    "56²/2 C144 -> 32": (56, 144, 32, 2, False),
    "28² C192 -> 32 + res": (28, 192, 32, 1, True),
    "28²/2 C192 -> 64": (28, 192, 64, 2, False),
}

BLOCKS = {  # label: (side, Cin, C, K, stride): MobileNetV2's blocks, Cin = 0 where it has no expansion
    "block0 112² 32 -> 16": (112, 0, 32, 16, 1),
    "block1 112²/2 16 -> 96 -> 24": (112, 16, 96, 24, 2),
    "block2 56² 24 -> 144 -> 24 + res": (56, 24, 144, 24, 1),
    "block3 56²/2 24 -> 144 -> 32": (56, 24, 144, 32, 2),
    "block4 28² 32 -> 192 -> 32 + res": (28, 32, 192, 32, 1),
    "block6 28²/2 32 -> 192 -> 64": (28, 32, 192, 64, 2),
    "block7 14² 64 -> 384 -> 64 + res": (14, 64, 384, 64, 1),
}
"""Timed. The residual is the block's input where the stride is 1 and Cin = K."""


def pads_of(stride: int) -> tuple[int, int, int, int]:
    # ONNX's exporters write 1,1,1,1 at stride 2 too; 0,0,1,1 computes the same output at even sides
    return (1, 1, 1, 1) if stride == 1 else (0, 0, 1, 1)


def pair(label: str, n: int) -> str:
    side, c, k, stride, residual = PAIRS[label]
    return depthwise_pointwise_text(n=n, h=side, w=side, c=c, k=k, strides=(stride, stride), pads=pads_of(stride),
                                    residual=residual)


def block(label: str, n: int) -> str:
    side, cin, c, k, stride = BLOCKS[label]
    if not cin:
        return depthwise_pointwise_text(n=n, h=side, w=side, c=c, k=k, strides=(stride, stride), pads=pads_of(stride))
    return inverted_residual_text(n=n, h=side, w=side, cin=cin, c=c, k=k, stride=stride, pads=pads_of(stride))


def fused_case(label: str, text: str, element: str = "f16", tile: dp.PairTile | None = None, expand: bool = False) -> Case:
    """The pair (`expand`: the block) fused on our kernel, at `tile` where given."""
    override = {"tile": tile.as_tile()} if tile is not None else {}
    return Case(f"{label}{f' tile {tile.describe()}' if tile else ''}", text, element, override=override, target="sm90",
                depthwise="direct", fuse_depthwise_pointwise="expand" if expand else True)


def the_fused_op(text: str, expand: bool = False):
    """The fused op the pass makes of `text` (lowered alone), or None where it leaves more
    than one op (an expansion it does not take)."""
    from bench.harness import lower

    try:
        return lower(fused_case("probe", text, expand=expand)).op
    except RuntimeError:
        return None


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
    for label in BLOCKS:  # the whole blocks the pass fuses with their expansion
        text = block(label, 2)
        if BLOCKS[label][1] and the_fused_op(text, expand=True) is not None:
            out.append(fused_case(f"{label} N2", text, expand=True))
    variants = [  # (label, text, element, expand)
        ("bf16 20² C64 -> 32 + res",
         depthwise_pointwise_text(n=2, h=20, w=20, c=64, k=32, element="bf16", residual=True), "bf16", False),
        ("5x5 dil2 13x11 C48 -> 24, no biases", depthwise_pointwise_text(n=1, h=13, w=11, c=48, k=24, r=5, s=5,
                                                                         pads=(4, 4, 4, 4), dilations=(2, 2), bias=False),
         "f16", False),
        ("3x3/2 pads 0,0,1,1 15x17 C32 -> 40",
         depthwise_pointwise_text(n=3, h=15, w=17, c=32, k=40, strides=(2, 2), pads=(0, 0, 1, 1)), "f16", False),
        ("7x7 C16 -> 8 (one fragment, part of a strip)", depthwise_pointwise_text(n=1, h=7, w=7, c=16, k=8), "f16", False),
        ("block bf16 15x13 24 -> 48 -> 24 + res",
         inverted_residual_text(n=2, h=15, w=13, cin=24, c=48, k=24, element="bf16"), "bf16", True),
        ("block 9x9 8 -> 32 -> 16, stride 2", inverted_residual_text(n=1, h=9, w=9, cin=8, c=32, k=16, stride=2), "f16", True),
    ]
    for label, text, element, expand in variants:
        op = the_fused_op(text, expand=expand)
        out.append(fused_case(label, text, element, expand=expand))
        out += [fused_case(label, text, element, tile, expand=expand) for tile in (dp.PairTile(4, 8, 4), dp.PairTile(1, 1, 8))
                if dp.tile_reason(op, tile) is None]
    return out


# ------------------------------------------------------------------------ timing


TOLERANCE = 1e-2


def unfused_cases(label: str, n: int) -> list[tuple[str, Case]]:
    """The block's convs as the default build runs them, each alone (arguments x, w, bias,
    residual), with their roles: the expansion (where it has one), the depthwise conv, the
    projection."""
    side, cin, c, k, stride = BLOCKS[label]
    pads = pads_of(stride)
    p = window_output_size(side, 3, stride, pads[0], pads[2], 1)
    out = []
    if cin:
        out.append(("expand", Case(f"{label} expand", conv_text(n, side, side, cin, c, 1, 1, pad=0,
                                                                 epilogue="bias, clip(0.0, 6.0)"), target="sm90")))
    out.append(("depthwise", Case(f"{label} depthwise", conv_text(n, side, side, c, c, 3, 3, stride=stride, pads=pads,
                                                                  depthwise=True, epilogue="bias, clip(0.0, 6.0)"),
                                  target="sm90", depthwise="direct")))
    residual = stride == 1 and cin == k
    out.append(("project", Case(f"{label} project", conv_text(n, p, p, c, k, 1, 1, pad=0,
                                                              epilogue="bias, residual = add" if residual else "bias"),
                                target="sm90")))
    return out


def timing_main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="times the fused kernel against the blocks as the default build runs them")
    parser.add_argument("--timing", action="store_true", required=True)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--only", help="the blocks whose label contains this text")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernel library and stop")
    parser.add_argument("--library", default="/tmp/boltir-check/depthwise-pointwise-timing.so")
    args = parser.parse_args(argv)

    plans = []  # (label, {path: [cases]}) with every fused form's tiles as paths of their own
    for label in BLOCKS:
        if args.only and args.only not in label:
            continue
        side, cin, c, k, stride = BLOCKS[label]
        unfused = unfused_cases(label, args.batch)
        paths = {"default build": unfused}
        pair_text = depthwise_pointwise_text(n=args.batch, h=side, w=side, c=c, k=k, strides=(stride, stride),
                                             pads=pads_of(stride), residual=stride == 1 and cin == k and bool(cin))
        pair_op = the_fused_op(pair_text)
        for tile in [None, *neighbours(pair_op)]:
            name = f"pair fused {(tile or dp.default_tile(pair_op)).describe()}"
            paths[name] = unfused[:-2] + [("pair", fused_case(f"{label} pair", pair_text, tile=tile))]
        if cin:
            text = block(label, args.batch)
            block_op = the_fused_op(text, expand=True)
            if block_op is not None:
                for tile in [None, *neighbours(block_op)]:
                    paths[f"block fused {(tile or dp.default_tile(block_op)).describe()}"] = [
                        ("block", fused_case(f"{label} block", text, tile=tile, expand=True))]
        plans.append((label, paths))
    cases = list({id(case): case for _, paths in plans for path in paths.values() for _, case in path}.values())
    library = build_timed(cases, args)
    if isinstance(library, int):
        return library

    import torch

    from bench.kernels import relative, rotations_for
    from bench.pointwise import device_ms
    from bench.tables import print_table

    stream = torch.cuda.Stream()
    rows = []
    for label, paths in plans:
        side, cin, c, k, stride = BLOCKS[label]
        n, pads = args.batch, pads_of(stride)
        p = window_output_size(side, 3, stride, pads[0], pads[2], 1)
        residual = stride == 1 and cin == k
        narrow = cin or c
        weights = 2 * ((c * cin + c if cin else 0) + c * 9 + c + k * c + k)
        ends = 2 * (n * side * side * narrow + n * p * p * k * (2 if residual else 1))
        expanded, middle = 2 * n * side * side * c, 2 * n * p * p * c  # the intermediates, written and read back
        gen = torch.Generator(device="cuda").manual_seed(0)

        def rand(*size, scale=1.0, gen=gen):
            return ((torch.rand(*size, device="cuda", generator=gen) * 2 - 1) * scale).half()

        we, be = (rand(c, 1, 1, cin, scale=(3 / cin) ** 0.5), rand(c)) if cin else (None, None)
        w0, b0 = rand(c, 3, 3, 1, scale=(3 / 9) ** 0.5), rand(c)
        w1, b1 = rand(k, 1, 1, c, scale=(3 / c) ** 0.5), rand(k)
        rotations = rotations_for(ends + 2 * (expanded if cin else 0) + 2 * middle)
        xs = [rand(n, side, side, narrow) for _ in range(rotations)]
        named = {"w0": w0, "w1": w1, "b0": b0, "b1": b1, "we": we, "be": be}
        alone = {"expand": (we, be), "depthwise": (w0, b0), "project": (w1, b1)}
        reference = None
        for path, chain in paths.items():
            moved = ends + weights + 2 * middle * (path == "default build") + 2 * expanded * (
                bool(cin) and not path.startswith("block"))
            try:
                bounds = []
                with torch.cuda.stream(stream):
                    for i in range(rotations):
                        previous, bound = xs[i], []
                        for role, case in chain:
                            if role in alone:  # one conv alone: x, w, bias (and the block's input as residual)
                                w, bias = alone[role]
                                feed = {"x": previous, "w": w, "bias": bias}
                                feed |= {"residual": xs[i]} if role == "project" and residual else {}
                            else:  # our kernel: the pair's or the block's argument names
                                feed = {"x": previous} | {name: v for name, v in named.items() if v is not None}
                                feed |= {"res": xs[i]} if residual and role == "pair" else {}
                            bound.append(BoundKernel(library, case, feed))
                            previous = bound[-1].output
                        bounds.append(bound)
                    for kernel in bounds[0]:
                        kernel()
                torch.cuda.synchronize()
                out = bounds[0][-1].output
                reference = out.clone() if reference is None else reference
                error = relative(out, reference)
                ms, how = device_ms(torch, stream, lambda i, bounds=bounds: [kernel() for kernel in bounds[i]], rotations)
            except Exception as failure:  # noqa: BLE001 - a failing kernel is a row, not the end
                print(f"  {label} {path}: {str(failure).splitlines()[0]}", flush=True)
                ms, how, error = float("nan"), "failed", float("nan")
            bounds = None
            kernels = " + ".join(describe_choice(case) for _, case in chain)
            rows.append((label, f"N{n}", path, kernels, f"{ms:.4f}", f"{moved / 1e6:.1f}", f"{moved / ms / 1e9:.2f}",
                         f"{error:.1e} {'ok' if error < TOLERANCE else 'WRONG'}", how))
            print("row:", " | ".join(rows[-1]), flush=True)
        torch.cuda.empty_cache()

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; f16; device time per call of each path's launches (CUDA-graph "
          "replays, operands rotated past the L2); MB and TB/s: the bytes the path moves once (its intermediates "
          "written and read back included); err: ‖Δ‖/‖ref‖ against the default build's output")
    print_table(("block", "batch", "path", "kernels", "ms", "MB", "TB/s", "err", "timed"), rows)
    return 0


def main() -> int:
    if "--timing" in sys.argv[1:]:
        return timing_main(sys.argv[1:])
    return correctness_main(__doc__.splitlines()[0], cases(), dp.computes, "/tmp/boltir-check/depthwise-pointwise.so")


if __name__ == "__main__":
    sys.exit(main())
