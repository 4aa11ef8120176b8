"""Our wgmma conv for few input channels (boltir/backends/cuda/codegen/halo_conv_kernels.py) on
the GPU: correctness against the op-level interpreter, then graph-timed against the CUTLASS
3.x choice (the heuristic with `narrow_convs=cutlass`) and cuDNN.

Correctness: VGG-16's and ResNet-50's 3x3 convs on 64 channels and ResNet-50's blocked stem
(4x4 on 16 channels) at batch 2, 32 channels, odd sizes,
partial row and column tiles, 1x1 to 5x5 windows, asymmetric pads, two output-channel
blocks, one-row tiles, every epilogue kind, f16 and bf16, each in the four modes
(`HaloTile.mode`: 1 keeps the filter in shared memory; 2 in registers, wgmma's register-A
form; 3 runs each tile's epilogue under the next tile's products; 4, the heuristic's, is 1
with its staged rows written by stmatrix). The bar: ‖Δ‖/‖ref‖ < 1e-2 (outputs NaN-filled first, so a missed element fails).

Pooled (op.conv2d_max_pool, fuse-conv-pool): VGG-16's 224² conv with its 2x2 max pool, and
small pooled shapes (two channel blocks, bf16, 32 and 16 channels), in every mode, against
the interpreter's conv and pool.

Blocked (op.space_to_depth_conv2d, fuse-conv-space-to-depth): ResNet-50's stem with the f32
image blocked in the kernel, and small images (partial tiles, uneven pads, two channel blocks,
an f16 image, a bf16 conv), in modes 1 and 2, against the interpreter's space-to-depth and conv.

Timing: VGG-16's 3x3 64 -> 64 at 224² and 64 -> 128 at 112², ResNet-50's 3x3 64 -> 64 at
56², its blocked stem, the same stem blocking the f32 image itself (`BLOCKED_STEMS`) (CUTLASS's column: the heuristic's choice there, our stem kernel
at batch 32), at batch 32 and 1, bias + ReLU: ours (each mode the filter's registers allow, and the tuner's
three- and four-warpgroup tiles in modes 1 and 4), the CUTLASS choice, cuDNN
(channels_last conv + ReLU), each launched 10 times inside a captured CUDA graph (median
of 20 replays / 10); TFLOP/s and the share of the roofline bound (sm90's GpuTarget); and
the pooled 224² conv in each mode (its pool2d launch gone; the bound's bytes are the pooled
output's).

    source bench/setup_gpu.sh && python3 -m bench.check_halo_conv [--only TEXT] [--no-timing] [--timing-only TEXT] [--list] [--build-only]

(`--only` with a text no case has, and `--timing-only N32`: the timed convs alone.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from bench.check_stem_conv import graph_ms
from bench.tables import print_table
from bench.harness import (
    Case,
    build_library,
    check_cases,
    conv_timing_operands,
    describe_choice,
    lower_cases,
    own_kernel,
)
from boltir.backends.cuda.codegen import halo_conv_kernels
from boltir.dialects import op as ops
from boltir.ir import parse_module
from boltir.target import get_target
from tests.support.op_modules import blocked_stem_text, conv_text

TIMED_BATCHES = (32, 1)
"""Batches the model convs are timed at: 32, where the rule gives them the kernel, and 1,
where its two tiles per multiprocessor keep CUTLASS (is that right?)."""

MODEL_CONVS = {  # label: conv_text arguments
    "vgg16 3x3 64->64 224²": {"h": 224, "w": 224, "c": 64, "k": 64, "r": 3, "s": 3},
    "vgg16 3x3 64->128 112²": {"h": 112, "w": 112, "c": 64, "k": 128, "r": 3, "s": 3},
    "resnet50 3x3 64->64 56²": {"h": 56, "w": 56, "c": 64, "k": 64, "r": 3, "s": 3},
    "resnet50 s2d stem 4x4 16->64 112²": {"h": 115, "w": 115, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0},
    # VGG-16's first conv with its 3 channels padded to 16 (bench.models' sm90-halo16 build);
    # the sm90 build runs it on 4 channels (bench.check_stem_conv times that one)
    "vgg16 stem 3x3 16->64 224²": {"h": 224, "w": 224, "c": 16, "k": 64, "r": 3, "s": 3},
}


GENERAL_CONVS = {  # label: conv_text arguments; the general form (CUTLASS's with narrow_convs=halo-aligned)
    "repvgg_a0 3x3/2 48->48 112²": {"h": 112, "w": 112, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2},
    "repvgg_a0 3x3 48->48 56²": {"h": 56, "w": 56, "c": 48, "k": 48, "r": 3, "s": 3},
    "repvgg_a0 3x3/2 48->96 56²": {"h": 56, "w": 56, "c": 48, "k": 96, "r": 3, "s": 3, "stride": 2},
}
GENERAL_TILES = ((56, 2, 2, 2), (32, 2, 4, 2), (24, 3, 4, 2), (32, 2, 1, 2), (16, 4, 4, 2),
                 (56, 1, 4, 3), (56, 2, 4, 3), (32, 2, 4, 3), (56, 1, 2, 3),
                 (56, 2, 5, 2), (56, 2, 2, 2, True), (56, 2, 5, 2, True), (56, 1, 5, 2, True), (56, 1, 2, 3, True),
                 (56, 1, 4, 3, True), (32, 2, 4, 2, True))
"""(columns, rows, mode, patches[, tma]) timed on GENERAL_CONVS beside each mode's default tile:
a stride-2 patch is four times its tile, so the default keeps one row (one CTA of 4 warps a
multiprocessor); the first five put 8 to 16 warps on one, the next four keep two patches in
flight (a ring of three buffers); the last seven: mode 5, and patches by TMA (the
thirty-eighth session's profile of the 3x3/2 48 -> 48: issue-bound at 8 warps a
multiprocessor, its busiest pipe the integer one, DRAM at 37%)."""
TMA_MODES = (2, 4, 5)
"""The modes whose TMA form the correctness cases check and the model convs are timed in."""


def halo_case(label: str, text: str, element: str = "f16", shape: tuple[int, int] | None = None,
              mode: int = 1, pooled: bool = False, blocked: bool = False, patches: int = 2, tma: bool = False) -> Case | None:
    """The case with our kernel forced on tiles of `shape` (columns, rows; else the default
    tile's) in `mode` with `patches` patch buffers, by TMA where `tma` (`pooled`: the text's conv and 2x2 max pool become one
    op.conv2d_max_pool; `blocked`: the text's space-to-depth and conv become one
    op.space_to_depth_conv2d); None where that mode cannot take the conv (the filter in
    registers of a large window; the overlapped mode with an image to block)."""
    op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
    if shape is None:
        default = halo_conv_kernels.default_tile(op)
        shape = (default.columns, default.rows)
    tile = halo_conv_kernels.HaloTile(*shape, mode, patches, tma)
    if halo_conv_kernels.tile_reason(op, tile) is not None or (blocked and tile.overlapped):
        return None
    suffix = f" m{mode}" + ("" if patches == 2 else f"p{patches}") + (" tma" if tma else "")
    return Case(f"{label}{suffix}", text, element, override=own_kernel(halo_conv_kernels.FAMILY, "sm90", tile), target="sm90",
                fuse_pool=pooled, fuse_blocking=blocked)


def more_warps(conv: str, text: str, pooled: bool = False) -> list[Case]:
    """The timed conv on the tuner's three- and four-warpgroup tiles
    (`halo_conv_kernels.more_warps_tiles`; `pooled`: whole pooled rows), in each mode they
    take (`MORE_WARPS_MODES`)."""
    op = next(o for o in parse_module(text).walk() if isinstance(o, ops.Conv2dOp))
    return [case for mode in halo_conv_kernels.MORE_WARPS_MODES
            for tile in halo_conv_kernels.more_warps_tiles(op, pooled_rows=pooled, mode=mode)
            if (case := halo_case(f"{conv} {tile.columns}x{tile.rows}", text, shape=(tile.columns, tile.rows), mode=tile.mode,
                                  pooled=pooled)) is not None]


def general_tiles(conv: str, text: str) -> list[Case]:
    """The timed conv on GENERAL_TILES (those its shared memory takes)."""
    return [case for columns, rows, mode, patches, *tma in GENERAL_TILES
            if (case := halo_case(f"{conv} {columns}x{rows}", text, shape=(columns, rows), mode=mode,
                                  patches=patches, tma=bool(tma))) is not None]


def pooled_text(n: int, h: int, w: int, c: int, k: int, element: str = "f16") -> str:
    """A 3x3 conv (bias, ReLU) and a 2x2 max pool at stride 2 after it (VGG-16's stage ends)."""
    conv = conv_text(n, h, w, c, k, 3, 3, element=element)
    big, small = f"tensor<{n}x{h}x{w}x{k}x{element}>", f"tensor<{n}x{h // 2}x{w // 2}x{k}x{element}>"
    head, tail = conv.rsplit("  func.return %0 : ", 1)
    head = head.replace(f") -> {big} {{", f") -> {small} {{", 1)
    return (head + f"  %1 = op.pool2d %0 {{kind = \"max\", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : "
            f"{big} -> {small}\n  func.return %1 : {small}\n}}\n")


POOLED_CONVS = {  # label: pooled_text arguments (batch first)
    "vgg16 3x3 64->64 224² + maxpool": {"h": 224, "w": 224, "c": 64, "k": 64},
}

BLOCKED_STEMS = {  # label: blocked_stem_text arguments (batch first)
    "resnet50 stem, image blocked in the kernel (f32 3x224² -> 4x4 16->64 112²)": {"h": 224, "w": 224},
}
"""Timed: the space-to-depth stem as one op.space_to_depth_conv2d (fuse-conv-space-to-depth),
beside MODEL_CONVS' halo conv on the blocked tensor that the space-to-depth kernel writes."""


def cases() -> list[Case]:
    out = []
    for mode in halo_conv_kernels.MODES:
        for label, shape in MODEL_CONVS.items():
            out.append(halo_case(f"{label} N2", conv_text(2, **shape), mode=mode))
        shapes = [  # (n, h, w, k, r, s, extra, tile)
            (1, 13, 27, 64, 3, 3, {}, None),                             # partial row and column tiles
            (2, 9, 20, 128, 3, 3, {}, (16, 2)),                          # two channel blocks
            (1, 11, 9, 64, 5, 5, {"pads": (2, 1, 2, 3)}, (8, 1)),        # asymmetric pads, one-row tiles
            (1, 8, 40, 64, 1, 1, {"pad": 0}, (40, 2)),                    # a 1x1 window
            (1, 10, 30, 192, 4, 4, {"pad": 1}, (32, 1)),                  # 4x4 (an even window), three blocks
            (1, 9, 21, 64, 7, 7, {"pad": 3, "c": 16}, (24, 2)),          # 16 channels (32-byte rows), 7x7
            (2, 11, 13, 128, 3, 3, {"c": 32}, (16, 2)),                   # 32 channels (64-byte rows)
            (2, 13, 27, 64, 3, 3, {}, (16, 3)),                           # three warpgroups, partial tiles
            (1, 14, 40, 128, 3, 3, {}, (16, 4)),                          # four, a partial row tile, two blocks
        ]
        for n, h, w, k, r, s, extra, tile in shapes:
            extra = dict(extra)
            c = extra.pop("c", 64)
            for element in ("f16", "bf16"):
                label = f"{element} {r}x{s} {n}x{h}x{w}x{c}->{k} {extra or ''}" + (f" tile {tile[0]}x{tile[1]}" if tile else "")
                text = conv_text(n, h, w, c, k, r, s, element=element, **extra)
                out.append(halo_case(label, text, element, tile, mode))
        for n, h, w, c, k, element, tile in [(2, 224, 224, 64, 64, "f16", None), (1, 8, 40, 64, 128, "f16", (16, 2)),
                                             (2, 6, 24, 32, 64, "bf16", (16, 2)), (1, 10, 20, 16, 64, "f16", (8, 2)),
                                             (2, 10, 40, 64, 128, "f16", (16, 4)),  # two pooled rows a tile, the last partial
                                             (1, 224, 224, 64, 64, "f16", (56, 4))]:
            label = f"pooled {element} 3x3 {n}x{h}x{w}x{c}->{k} + maxpool" + (f" tile {tile[0]}x{tile[1]}" if tile else "")
            out.append(halo_case(label, pooled_text(n, h, w, c, k, element), element,
                                 tile, mode, pooled=True))
        for n, h, w, pads, k, image, element, tile in [
                (2, 224, 224, (3, 3, 3, 3), 64, "f32", "f16", None),          # ResNet-50's stem
                (1, 16, 30, (3, 3, 3, 3), 64, "f32", "f16", (8, 2)),          # a partial last column tile
                (2, 14, 20, (3, 1, 1, 3), 128, "f32", "f16", (8, 1)),         # uneven pads, two blocks, one-row tiles
                (1, 18, 22, (3, 3, 3, 3), 64, "f16", "f16", (16, 2)),         # an f16 image
                (1, 18, 22, (3, 3, 3, 3), 64, "f32", "bf16", (16, 2))]:       # bf16 conv
            label = f"blocked {image}->{element} 3x{h}x{w} pads {pads} -> 4x4 16->{k} N{n}"
            text = blocked_stem_text(n=n, h=h, w=w, pads=pads, k=k, image=image, element=element)
            out.append(halo_case(label, text, element, tile, mode,
                                 blocked=True))
        general = [  # (n, h, w, c, k, r, stride, extra, tile): stride 2, padded channels, partial blocks
            (2, 23, 21, 48, 48, 3, 2, {}, None), (1, 15, 30, 48, 48, 3, 2, {}, (8, 2)), (1, 17, 19, 64, 128, 3, 2, {}, (8, 1)),
            (2, 12, 20, 32, 64, 2, 2, {"pad": 0}, (8, 2)), (1, 14, 18, 48, 96, 3, 2, {"pads": (1, 0, 2, 1)}, (8, 3)),
            (2, 11, 26, 48, 48, 3, 1, {}, (16, 2)), (1, 9, 17, 24, 40, 3, 1, {}, (8, 2)), (1, 12, 16, 16, 72, 5, 2, {}, (8, 1)),
        ]
        for n, h, w, c, k, r, stride, extra, tile in general:
            for element in ("f16", "bf16"):
                label = (f"general {element} {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k} {extra or ''}"
                         + (f" tile {tile[0]}x{tile[1]}" if tile else ""))
                out.append(halo_case(label, conv_text(n, h, w, c, k, r, r, stride=stride, element=element, **extra), element,
                                     tile, mode))
        if mode != 3:  # three patch buffers: a ring, two tiles ahead (modes 1, 2 and 4)
            for n, h, w, c, k, r, stride, extra, tile in [*general[:3], general[5], (2, 13, 27, 64, 64, 3, 1, {}, (16, 1))]:
                label = (f"ring f16 {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k} {extra or ''}"
                         + (f" tile {tile[0]}x{tile[1]}" if tile else ""))
                out.append(halo_case(label, conv_text(n, h, w, c, k, r, r, stride=stride, **extra), "f16", tile, mode,
                                     patches=3))
            out.append(halo_case("ring pooled f16 3x3 1x8x40x64->128 + maxpool tile 16x2", pooled_text(1, 8, 40, 64, 128),
                                 "f16", (16, 2), mode, pooled=True, patches=3))
        out.append(halo_case("general f16 3x3/2 2x23x21x48->48 <bias, relu, residual = add, then relu>",
                             conv_text(2, 23, 21, 48, 48, 3, 3, stride=2, epilogue="bias, relu, residual = add, then relu"),
                             mode=mode))
        for epilogue in ("bias, hardswish", "bias, relu, residual = add, then relu", "residual = add", "none",
                         "alpha = 0.5, beta = 2.0, bias, silu", "bias, gelu", "bias, leaky_relu(0.1)"):
            out.append(halo_case(f"f16 3x3 1x12x24x64->64 <{epilogue}>", conv_text(1, 12, 24, 64, 64, 3, 3, epilogue=epilogue),
                                 mode=mode))
    out += tma_cases(general)
    return [case for case in out if case is not None]


def tma_cases(general: list) -> list[Case | None]:
    """The patches by TMA (TMA_MODES; mode 3 once): the model convs, the general form's
    cases (stride 2 in two planes, padded channels, partial blocks) in f16 and bf16, the
    32- and 64-byte swizzles, pads, partial tiles, a ring of three, a residual epilogue."""
    out = []
    for mode in TMA_MODES:
        for label, shape in MODEL_CONVS.items():
            out.append(halo_case(f"{label} N2", conv_text(2, **shape), mode=mode, tma=True))
        for n, h, w, c, k, r, stride, extra, tile in general:
            for element in ("f16", "bf16"):
                label = (f"general {element} {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k} {extra or ''}"
                         + (f" tile {tile[0]}x{tile[1]}" if tile else ""))
                out.append(halo_case(label, conv_text(n, h, w, c, k, r, r, stride=stride, element=element, **extra), element,
                                     tile, mode, tma=True))
        for n, h, w, c, k, r, extra, tile in [(1, 9, 21, 16, 64, 7, {"pad": 3}, (24, 2)), (2, 11, 13, 32, 128, 3, {}, (16, 2)),
                                               (1, 11, 9, 64, 64, 5, {"pads": (2, 1, 2, 3)}, (8, 1)),
                                               (1, 13, 27, 64, 64, 3, {}, None), (2, 13, 27, 64, 64, 3, {}, (16, 3))]:
            label = f"f16 {r}x{r} {n}x{h}x{w}x{c}->{k} {extra or ''}" + (f" tile {tile[0]}x{tile[1]}" if tile else "")
            out.append(halo_case(label, conv_text(n, h, w, c, k, r, r, **extra), "f16", tile, mode, tma=True))
        for n, h, w, c, k, r, stride, extra, tile in [*general[:3], (2, 13, 27, 64, 64, 3, 1, {}, (16, 1))]:
            label = (f"ring f16 {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k} {extra or ''}"
                     + (f" tile {tile[0]}x{tile[1]}" if tile else ""))
            out.append(halo_case(label, conv_text(n, h, w, c, k, r, r, stride=stride, **extra), "f16", tile, mode,
                                 patches=3, tma=True))
        out.append(halo_case("general f16 3x3/2 2x23x21x48->48 <bias, relu, residual = add, then relu>",
                             conv_text(2, 23, 21, 48, 48, 3, 3, stride=2, epilogue="bias, relu, residual = add, then relu"),
                             mode=mode, tma=True))
    for n, h, w, c, k, r, stride, extra, tile in general[:2]:
        out.append(halo_case(f"general f16 {r}x{r}/{stride} {n}x{h}x{w}x{c}->{k}" + (f" tile {tile[0]}x{tile[1]}" if tile else ""),
                             conv_text(n, h, w, c, k, r, r, stride=stride, **extra), "f16", tile, 3, tma=True))
    out.append(halo_case("f16 3x3 2x13x27x64->64 tile 16x2", conv_text(2, 13, 27, 64, 64, 3, 3), "f16", (16, 2), 3, tma=True))
    return out


def timing_rows(library, plans) -> list[tuple]:
    import torch
    import torch.nn.functional as F

    stream = torch.cuda.Stream()
    target = get_target("sm90")
    rows = []
    for label, timed_cases in plans:
        op = timed_cases[0].op
        x, weight, bias, out, flops, moved = (blocked_timing_operands(op) if isinstance(op, ops.SpaceToDepthConv2dOp)
                                              else conv_timing_operands(op))
        bound = target.bound_seconds(flops, moved) * 1e3
        times = {}
        for case in timed_cases:
            try:
                size = library.workspace_size(case.op)
                workspace = torch.empty(max(size, 1), device="cuda", dtype=torch.uint8)
                launch = library.bind(case.op, [x.data_ptr(), weight.data_ptr(), bias.data_ptr(), None, out.data_ptr()],
                                      workspace=workspace.data_ptr(), workspace_bytes=size, stream=stream.cuda_stream)
                times[describe_choice(case)] = graph_ms(launch, stream)
            except Exception as error:  # noqa: BLE001 - a kernel that fails to run is a row, not the end
                print(f"{label} {describe_choice(case)}: {str(error).splitlines()[0]}", flush=True)
                times[describe_choice(case)] = float("nan")
        if isinstance(op, ops.SpaceToDepthConv2dOp):  # cuDNN's stem is bench.kernels' 7x7/2 row
            for name, ms in times.items():
                rows.append((label, name, ms, flops / (ms * 1e-3) / 1e12, bound, f"{100 * bound / ms:.0f}%"))
            continue
        x_cl, w_cl = x.permute(0, 3, 1, 2), weight.permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)

        def cudnn_call(x_cl=x_cl, w_cl=w_cl, bias=bias, pad=op.prop_value("pads")[0], stride=tuple(op.prop_value("strides"))):
            F.relu(F.conv2d(x_cl, w_cl, bias, stride=stride, padding=pad), inplace=True)

        times["cudnn"] = graph_ms(cudnn_call, stream)
        for name, ms in times.items():
            rows.append((label, name, ms, flops / (ms * 1e-3) / 1e12 if ms == ms else float("nan"), bound,
                         f"{100 * bound / ms:.0f}%" if ms == ms else "-"))
    return rows


def blocked_timing_operands(op: ops.SpaceToDepthConv2dOp) -> tuple:
    """Device tensors for timing an op.space_to_depth_conv2d (the f32 NCHW image, OHWI
    filter, bias, NHWC output), its FLOPs (the conv's on the blocked tensor) and the bytes
    it moves once (the image, not the blocked tensor)."""
    import torch

    n, c, h, w = op.input.type.get_shape()
    k, r, s, cb = op.filter.type.get_shape()
    _, p, q, _ = op.output.type.get_shape()
    x = torch.rand(n, c, h, w, device="cuda", dtype=torch.float32) * 2 - 1
    weight = torch.randn(k, r, s, cb, device="cuda", dtype=torch.float16) * (2 / (r * s * cb)) ** 0.5
    bias = torch.randn(k, device="cuda", dtype=torch.float16) * 0.1
    out = torch.empty(n, p, q, k, device="cuda", dtype=torch.float16)
    return x, weight, bias, out, 2 * n * p * q * k * r * s * cb, 4 * x.numel() + 2 * (weight.numel() + k + out.numel())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the correctness cases whose label contains this text (or one of these, comma-separated)")
    parser.add_argument("--list", action="store_true", help="lower every case and print its kernel; no GPU")
    parser.add_argument("--build-only", action="store_true", help="compile the kernels (correctness and timing) and stop")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--timing-only", help="time the convs whose label contains this text (or one of these, comma-separated)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--library", default="/tmp/boltir-check/halo_conv.so")
    args = parser.parse_args()

    texts = args.only.split(",") if args.only else None  # any of these (comma-separated)
    rows, lowered = lower_cases([case for case in cases() if texts is None or any(text in case.label for text in texts)],
                                None, halo_conv_kernels.computes)
    plans = []
    if not args.no_timing:
        for batch in TIMED_BATCHES:
            for convs, more_tiles in ((MODEL_CONVS, more_warps), (GENERAL_CONVS, general_tiles)):
                for label, shape in convs.items():
                    text, conv = conv_text(batch, **shape), f"{label} N{batch}"
                    timed = [case for mode in halo_conv_kernels.MODES if (case := halo_case(conv, text, mode=mode)) is not None]
                    timed += [case for mode in TMA_MODES if (case := halo_case(conv, text, mode=mode, tma=True)) is not None]
                    timed += more_tiles(conv, text)
                    timed.append(Case(f"{conv} cutlass", text, target="sm90"))
                    _, timed_lowered = lower_cases(timed)
                    plans.append((conv, timed_lowered))
            for label, shape in POOLED_CONVS.items():
                text, conv = pooled_text(batch, **shape), f"{label} N{batch}"
                timed = [case for mode in halo_conv_kernels.MODES
                         if (case := halo_case(conv, text, mode=mode, pooled=True)) is not None]
                timed += more_warps(conv, text, pooled=True)
                _, timed_lowered = lower_cases(timed)
                plans.append((conv, timed_lowered))
            for label, shape in BLOCKED_STEMS.items():
                text, conv = blocked_stem_text(n=batch, **shape), f"{label} N{batch}"
                timed = [case for mode in halo_conv_kernels.MODES
                         if (case := halo_case(conv, text, mode=mode, blocked=True)) is not None]
                _, timed_lowered = lower_cases(timed)
                plans.append((conv, timed_lowered))
    if args.timing_only:
        texts = args.timing_only.split(",")
        plans = [(conv, timed) for conv, timed in plans if any(text in conv for text in texts)]
    if args.list:
        for case in lowered + [c for _, cs in plans for c in cs]:
            print(f"{case.label:70s} {describe_choice(case)}")
        return 1 if rows else 0
    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    library = build_library(lowered + [c for _, cs in plans for c in cs], args.library)
    print(f"built the kernels of {len(lowered)} cases and {len(plans)} timed convs in {time.monotonic() - start:.0f} s",
          flush=True)
    if args.build_only:
        return 1 if rows else 0

    import torch

    rows += check_cases(library, lowered, np.random.default_rng(args.seed), on_failure=print_where_wrong)
    timing = timing_rows(library, plans) if plans else []
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: the op-level interpreter; seed {args.seed}")
    print_table(("case", "kernel", "rel err", "bar", "result"), rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    for mode in halo_conv_kernels.MODES:
        mine = [row for row in rows if row[0].endswith(f"m{mode}")]
        print(f"mode {mode}: {sum(row[-1] == 'pass' for row in mine)} of {len(mine)} passed")
    ring = [row for row in rows if row[0].endswith("p3") or row[0].endswith("p3 tma")]
    print(f"three patch buffers: {sum(row[-1] == 'pass' for row in ring)} of {len(ring)} passed")
    tma = [row for row in rows if row[0].endswith(" tma")]
    print(f"patches by TMA: {sum(row[-1] == 'pass' for row in tma)} of {len(tma)} passed")
    if timing:
        print("\ngraph-timed ms per launch, batch 32, bias + ReLU (cuDNN: channels_last conv + ReLU)")
        print_table(("conv", "kernel", "ms", "TFLOP/s", "bound ms", "bound/ms"), timing)
        best = fastest_correct_mode(rows, [row for row in timing if row[0].endswith("N32")])
        print(f"fastest correct mode on the timed convs: {best or 'none'}")
    return 1 if failed else 0


def where_wrong(got: np.ndarray, expected: np.ndarray, tile: halo_conv_kernels.HaloTile) -> list[str]:
    """Where a failing NHWC output differs from the interpreter's, along the axes that point
    at a cause: the window's start modulo 8 pixels (the swizzle phase a descriptor starts
    at: the base-offset question), the row within a tile (the warpgroup), the column tile,
    and the output channel's 16-row slice (the warp of the accumulator layout). Each line
    gives the share of wrong elements per value."""
    bad = ~np.isfinite(got) | (np.abs(got - expected) > 0.05 * (np.abs(expected) + 0.1))
    _, p, q, k = got.shape
    axes = {
        "column mod 8": np.arange(q) % 8,
        "row in tile": np.arange(p) % tile.rows,
        "column tile": np.arange(q) // tile.columns,
        "channel // 16": np.arange(k) // 16 % 4,
    }
    lines = [f"{bad.mean():.1%} of the elements wrong, {int((~np.isfinite(got)).sum())} never written"]
    for name, index in axes.items():
        axis = {"column mod 8": 2, "row in tile": 1, "column tile": 2, "channel // 16": 3}[name]
        shares = []
        for value in np.unique(index):
            selected = np.take(bad, np.flatnonzero(index == value), axis=axis)
            shares.append(f"{value}: {selected.mean():.0%}")
        lines.append(f"{name}: " + ", ".join(shares))
    return lines


def print_where_wrong(case, got, expected) -> None:
    tile = halo_conv_kernels.marked_tile(case.op)
    print(f"where {case.label} is wrong ({tile.describe()}):", *("  " + line for line in where_wrong(got, expected, tile)),
          sep="\n", flush=True)


def fastest_correct_mode(rows, timing) -> int | None:
    """The mode whose correctness cases all pass and whose timed convs take least in all
    (each conv at that mode's fastest tile of one or two rows: GENERAL_TILES times several),
    among the modes timed on every conv with no failed run; None if no mode passes."""
    def mode_of(kernel: str) -> int | None:  # "halo_conv 112x2m3" -> 3, "halo_conv 112x2" -> 1
        if not kernel.startswith("halo_conv"):
            return None
        tile = kernel.split()[-1]
        if int(tile.split("x")[1].split("m")[0].rstrip("t")) > 2 or "p" in tile or tile.endswith("t"):
            return None  # more_warps' three- and four-row tiles, three patches, TMA: not a mode's default tile
        return int(tile.split("m")[1]) if "m" in tile else 1

    correct = [mode for mode in halo_conv_kernels.MODES
               if (mine := [row for row in rows if row[0].endswith(f"m{mode}")]) and all(row[-1] == "pass" for row in mine)]
    convs = {row[0] for row in timing}
    totals = {}
    for mode in correct:
        times = {conv: [row[2] for row in timing if row[0] == conv and mode_of(row[1]) == mode] for conv in convs}
        if all(times.values()) and all(t == t for ts in times.values() for t in ts):  # every conv, no NaN
            totals[mode] = sum(min(ts) for ts in times.values())
    return min(totals, key=totals.get) if totals else None

if __name__ == "__main__":
    sys.exit(main())
