"""Kernel selection: which CUTLASS template instance computes each op-level GEMM, conv
and back-to-back op.

A `KernelSelector` answers, for one op, a `KernelChoice` (the template's parameters) or
`UNFUSE` (for a b2b op that should run as its two halves). `select-kernels` asks the
selector named in the pipeline and writes the answer on the op as its `kernel`
attribute; `lower-op-to-cutlass` reads it. `HeuristicSelector` decides from the shapes
alone, deterministically, and never touches a GPU; a profiling selector comes later
behind the same interface.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import (
    cutlass_sm90,
    depthwise_kernels,
    depthwise_pointwise_kernels,
    halo_conv_kernels,
    skinny_gemm_kernels,
    splitk_conv_kernels,
    stem_conv_kernels,
    stream_conv_kernels,
    wgsplit_gemm_kernels,
)
from boltir.backends.cuda.codegen.cutlass_common import (
    batch_layout,
    depthwise_output_tile,
    gemm_batching,
)
from boltir.backends.cuda.codegen.epilogues import plan_epilogue
from boltir.backends.cuda.launch_costs import launch_cost
from boltir.backends.cuda.select.choice import UNFUSE, KernelChoice
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dialects.cutlass import Tile
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import numpy_dtype
from boltir.target import get_target

# ------------------------------------------------------------------------ heuristics


def element_bits(value) -> int:
    return numpy_dtype(value.type.element_type).itemsize * 8


def depthwise_pixels(r: int, s: int, strides, dilations, bits: int, channels: int) -> int:
    """The most output pixels (64, 32 or 16) a direct depthwise conv threadblock can take
    with f32 accumulators: CUTLASS stages them in the shared memory of one stage's input
    tile (halo included), which they must not outgrow."""
    for pixels in (64, 32, 16):
        h, w = depthwise_output_tile(pixels)
        window = ((h - 1) * strides[0] + (r - 1) * dilations[0] + 1) * ((w - 1) * strides[1] + (s - 1) * dilations[1] + 1)
        if h * w * 32 <= window * bits:
            return pixels
    return 16


def widest_alignment(bits: int, *extents: int) -> int:
    """The widest access (at most 128 bits) that divides every contiguous extent."""
    alignment = 128 // bits
    while alignment > 1 and any(extent % alignment for extent in extents):
        alignment //= 2
    return alignment


def instruction_shape(bits: int) -> tuple[int, int, int]:
    """mma.sync shapes: 16x8x16 for 16-bit inputs, 16x8x8 for tf32."""
    return (16, 8, 16) if bits == 16 else (16, 8, 8)


# Threadblock and warp tiles that CUTLASS's own Sm80 kernels use, largest first.
GEMM_TILES: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...] = (
    ((256, 128, 32), (64, 64, 32)),
    ((128, 256, 32), (64, 64, 32)),
    ((128, 128, 32), (64, 64, 32)),
    ((128, 64, 32), (64, 32, 32)),
    ((64, 128, 32), (32, 64, 32)),
    ((64, 64, 32), (32, 32, 32)),
)


def tile_for_bits(threadblock, warp, bits: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """tf32 moves twice the bytes per element: halve K to keep the tile's footprint."""
    if bits == 32:
        return (threadblock[0], threadblock[1], 16), (warp[0], warp[1], 16)
    return threadblock, warp


def most_stages(threadblock, bits: int, arch: str, cap: int = 5) -> int:
    m, n, k = threadblock
    per_stage = (m * k + k * n) * bits // 8
    return max(2, min(cap, get_target(arch).shared_memory_bytes // per_stage))


def grid_efficiency(m: int, n: int, batch: int, tile_m: int, tile_n: int, sms: int) -> tuple[float, int]:
    """How much of the last wave and of the edge tiles does useful work, and the tile count."""
    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n) * batch
    waves = math.ceil(tiles / sms)
    wave_use = tiles / (waves * sms)
    edge_use = (m * n) / (math.ceil(m / tile_m) * tile_m * math.ceil(n / tile_n) * tile_n)
    return wave_use * edge_use, tiles


def tile_score(m: int, n: int, batch: int, tile_m: int, tile_n: int, sms: int) -> tuple[float, int]:
    """The heuristics' ranking of a tile for an M x N (x batch) output, and its tile count:
    big tiles reuse more data, so they score higher unless they leave the GPU idle (a
    partial last wave, padded edge tiles, fewer tiles than multiprocessors)."""
    efficiency, tiles = grid_efficiency(m, n, batch, tile_m, tile_n, sms)
    return efficiency * (tile_m * tile_n) ** 0.25 * min(1.0, tiles / sms) ** 0.5, tiles


BATCHED_GEMM_TILES = tuple(pair for pair in GEMM_TILES if pair[0][0] == pair[0][1])
"""The tiles a truly batched 2.x GEMM (A and B both batched: attention) may take. On the
H200 every non-square 2.x tile (128x64, 64x128, K 32 or 64) failed to launch for BERT-base
b32's batched products (384 batches, CUTLASS kErrorInternal), while 128x128 and 64x64 ran
(a tuner run recorded in bench/RESULTS.md); the cause is not known."""


def choose_gemm_tile(m: int, n: int, k: int, batch: int, bits: int, arch: str, sms: int = 0,
                     tiles=GEMM_TILES) -> tuple[Tile, int]:
    """The largest of `tiles` whose grid keeps the GPU busy; then split-k for small grids.
    `sms` is the GPU's multiprocessor count (0: the arch's flagship, 108 or 132)."""
    sms = sms or get_target(arch).multiprocessors
    best = None
    for threadblock, warp in tiles:
        threadblock, warp = tile_for_bits(threadblock, warp, bits)
        score, tiles = tile_score(m, n, batch, threadblock[0], threadblock[1], sms)
        if best is None or score > best[0] + 1e-9:
            best = (score, threadblock, warp, tiles)
    _, threadblock, warp, tiles = best
    stages = most_stages(threadblock, bits, arch, cap=4 if threadblock[0] * threadblock[1] >= 128 * 256 else 5)
    split_k = 1
    if tiles < sms and k >= 8 * threadblock[2] * 2:
        # Under one wave: slices of K fill the rest, each at least 4 K tiles long.
        split_k = min(max(1, round(sms / tiles)), k // (threadblock[2] * 4), 16)
    return Tile(threadblock, warp, instruction_shape(bits), stages), split_k


def swizzle_for(m: int, n: int) -> int:
    """Rasterize big grids in groups, so that neighbours share L2 lines."""
    if m >= 4096 and n >= 4096:
        return 8
    if m * n >= 1024 * 1024:
        return 4
    return 1


HOPPER_GEMM_TILES: tuple[tuple[tuple[int, int, int], str], ...] = (
    ((128, 256, 64), "cooperative"),
    ((256, 128, 64), "cooperative"),
    ((128, 192, 64), "cooperative"),
    ((128, 128, 64), "cooperative"),
    ((128, 64, 64), "cooperative"),
    ((64, 128, 64), "pingpong"),
    ((64, 64, 64), "pingpong"),
)
"""CUTLASS 3.x GEMM tiles and schedules the sm90 heuristic picks from, largest first.
128x192 is there for N = 768 (BERT's hidden size): four column tiles, one wave of 128 CTAs
at M = 4096, where it measured faster on the H200 than the 128x64 tile the list chose
without it (bench/RESULTS.md)."""

def covering_columns(k: int, narrow: bool = False) -> int | None:
    """The tile width that covers K output channels in one column tile where no 64-, 128-
    or 256-wide tile does (K of 65-255 rounded up to 16: RepVGG-A0's 96 and 192; with
    `narrow`, also K under 64: its 48), else None."""
    cover = -(-k // 16) * 16
    return cover if (narrow and cover < 64) or (64 < cover < 256 and cover != 128) else None


def hopper_conv_tile(pixels: int, k: int, sms: int, cover: bool = True) -> tuple[int, int, int]:
    """The 3.x implicit-GEMM conv's tile (one consumer warpgroup: M is 64 or 128): N = 128
    once K is over 64 channels (filter reuse, and an input pixel read by fewer column
    tiles), else 64; with `cover`, N = K where that is 65-255 channels but 128
    (`covering_columns`: no product or store padded away, each input pixel read once);
    M = 128 unless that leaves fewer tiles than SMs; N = 64 after all where the grid is
    under a quarter wave. On the H200 this picked the fastest tile of the reference and
    memory-bound convs in bench/RESULTS.md; the wave-quantization score of the GEMMs did
    not (this kernel is not persistent: two CTAs share an SM). On the H100 the covering
    tiles took RepVGG-A0's 3x3s at batch 32 from 0.0260 ms (128x128) to 0.0206 (128x96)
    at 96 channels and from 0.0238 (64x128) to 0.0144 (64x192) at 192."""
    n = (cover and covering_columns(k)) or (128 if k > 64 else 64)
    m = 128 if math.ceil(pixels / 128) * math.ceil(k / n) >= sms else 64
    if m == 64 and n > 64 and math.ceil(pixels / 64) * math.ceil(k / n) * 4 <= sms:
        # Under a quarter wave each CTA walks the whole reduction alone: twice the CTAs of
        # 64 columns finish sooner (batch-1 3x3 convs at 7² and 14², bench/RESULTS.md).
        n = 64
    return (m, n, 64)


def hopper_tile(threadblock: tuple[int, int, int], schedule: str) -> Tile:
    """The `cutlass.tile` of a 3.x instance: the warpgroup's share and the wgmma shape
    follow from the schedule; stages = 0 fills the shared memory the epilogue leaves."""
    warp = cutlass_sm90.expected_warp_tile(schedule, threadblock)
    return Tile(threadblock, warp, (64, threadblock[1], 16), 0)


def choose_hopper_gemm(m: int, n: int, k: int, batch: int, sms: int) -> tuple[Tile, str, tuple[int, int, int], int]:
    """Tile and schedule by the same score as the 2.x tiles (full waves, no edge waste,
    big tiles), 64x32 where `cutlass_sm90.narrow_columns_pay` says so;
    a 2x1 cluster (two CTAs of one column share B's tile by TMA multicast)
    once the grid is two waves or more of an even number of tile rows; split-k (the
    stream-K scheduler, cooperative; reduced in f32, so any epilogue) when the grid is
    under half a wave, K is long and M is over 256."""
    best = None
    for threadblock, schedule in HOPPER_GEMM_TILES:
        score, tiles = tile_score(m, n, batch, threadblock[0], threadblock[1], sms)
        if best is None or score > best[0] + 1e-9:
            best = (score, threadblock, schedule, tiles)
    _, threadblock, schedule, tiles = best
    if threadblock == (64, 64, 64) and cutlass_sm90.narrow_columns_pay(m, n, sms, batch):
        threadblock = (64, 32, 64)
        tiles = math.ceil(m / 64) * math.ceil(n / 32) * batch
    rows = math.ceil(m / threadblock[0])
    cluster = (2, 1, 1) if tiles >= 2 * sms and rows % 2 == 0 else (1, 1, 1)
    split_k = 1
    # Not at M <= 256: there stream-K slices measured over twice as slow as unsplit 64x64
    # ping-pong tiles in BERT-base's graph on the H200 (its FFN2; bench/RESULTS.md).
    if tiles * 2 <= sms and k >= 16 * threadblock[2] and m > 256:
        threadblock, schedule = (128, 128, 64), "cooperative"
        tiles = math.ceil(m / 128) * math.ceil(n / 128) * batch
        split_k = max(1, min(round(sms / tiles), k // (threadblock[2] * 8), 8))
    return hopper_tile(threadblock, schedule), schedule, cluster, split_k


# ------------------------------------------------ 1x1 convs as persistent GEMMs (sm90)

POINTWISE_MAX_CHANNELS = 96
"""A 1x1 conv whose C or K is at most this does a few dozen FLOPs per byte it moves: it is
bound by DRAM bandwidth, and runs as a persistent 3.x GEMM (`cutlass_sm90`'s pointwise
convs) so that loads of the next tiles overlap the stores of this one."""
POINTWISE_MIN_BYTES = 8 * 2**20
"""Below this many bytes moved (a few microseconds at DRAM speed) the launch and the
persistent kernel's setup weigh more than streaming: the heuristic keeps the conv kernels.
A first guess, not a measurement: bench/pointwise.py times both routes."""


def pointwise_shape(op: ops.Conv2dOp) -> tuple[int, int, int] | None:
    """(output pixels, C, K) of a 1x1 conv (stride 1, no padding) that a 3.x GEMM can run
    on its own buffers, whatever its channels; else None."""
    problem = hopper_conv_problem(op)
    if problem is None or cutlass_sm90.pointwise_shape_reason(tensor_shape(op.filter.type), op.prop_value("pads"),
                                                              op.prop_value("strides")):
        return None
    return problem


def pointwise_problem(op: ops.Conv2dOp) -> tuple[int, int, int] | None:
    """`pointwise_shape` of a memory-bound 1x1 conv (C or K at most POINTWISE_MAX_CHANNELS);
    else None."""
    problem = pointwise_shape(op)
    return None if problem is None or min(problem[1:]) > POINTWISE_MAX_CHANNELS else problem


NARROW_POINTWISE_CHANNELS = 64
"""A memory-bound 1x1 conv whose C or K is under this runs on our streaming kernel
(`narrow_pointwise_problem`): there the persistent 3.x GEMM's k-tile is one or two MMA
steps and its epilogue's stores bound it (1.3-1.8 TB/s on MobileNetV2's 16 -> 96,
24 -> 144 and 32 -> 16 convs at batch 32 on the H200, bench/RESULTS.md), while with 64 or
more on the narrow side it streams at 2.9-3.3 TB/s."""


def narrow_pointwise_problem(op: ops.Conv2dOp) -> stream_conv_kernels.StreamTile | None:
    """The tile our 1x1 conv for narrow channel counts (codegen/stream_conv_kernels.py)
    gives the op where the heuristic gives it the op, else None: a memory-bound 1x1 conv
    (`pointwise_problem`) that moves POINTWISE_MIN_BYTES or more, with C or K under
    NARROW_POINTWISE_CHANNELS, that the kernel takes."""
    problem = pointwise_problem(op)
    if problem is None or stream_conv_kernels.conv_reason(op) is not None:
        return None
    pixels, c, k = problem
    if min(c, k) >= NARROW_POINTWISE_CHANNELS or pointwise_bytes(pixels, c, k, op.residual is not None) < POINTWISE_MIN_BYTES:
        return None
    return stream_conv_kernels.default_tile(op)


STREAM_WINDOW_CHANNELS = 16
"""A small-window conv on at most this many input channels (space-to-depth-stem's blocked
stems) that is memory-bound runs on our streaming conv (`narrow_window_problem`): our
stem conv, which stages each tile's patch in shared memory and stores through it, ran
MobileNetV2's blocked stem (2x2 on 16 channels, 39 MB at batch 32) at 1.3 TB/s in the
model (bench/RESULTS.md)."""


def narrow_window_problem(op: ops.Conv2dOp, arch: str) -> stream_conv_kernels.StreamTile | None:
    """The tile our streaming conv (codegen/stream_conv_kernels.py) gives a conv with a
    window larger than 1x1 where the heuristic gives it the op, else None: one the kernel
    takes (stride 1, no padding), on at most STREAM_WINDOW_CHANNELS input channels, that
    moves POINTWISE_MIN_BYTES or more and is bound by DRAM rather than by the tensor cores
    on the target, by the roofline's counts (`launch_costs`; ResNet-50's blocked stem, 4x4
    on 16 channels to 64, is not: the halo conv's)."""
    if stream_conv_kernels.conv_reason(op) is not None:
        return None
    _, r, s, c = tensor_shape(op.filter.type)
    if r * s == 1 or c > STREAM_WINDOW_CHANNELS:
        return None
    cost, target = launch_cost(op), get_target(arch)
    if cost.bytes < POINTWISE_MIN_BYTES or cost.flops / target.peak_flops("f16") >= cost.bytes / target.dram_bytes_per_second:
        return None
    return stream_conv_kernels.default_tile(op)


def pointwise_bytes(pixels: int, c: int, k: int, residual: bool) -> int:
    """What a 16-bit pointwise conv moves: input, filter and output once (and the residual)."""
    return 2 * (pixels * (c + k * (2 if residual else 1)) + k * c)


def pointwise_gemm_tile(c: int, k: int) -> tuple[tuple[int, int, int], str]:
    """The persistent GEMM's tile and schedule for a pointwise conv: the K tile covers C
    up to 32 (the narrowest K tile of the 3.x rules), else 64; the N
    tile covers K up to 256 (each input pixel read once), else the widest of 256 / 192 /
    128 that pads K least. One consumer warpgroup holds a 128 x N tile while N <= 128
    (ping-pong: one warpgroup's epilogue overlaps the other's MMAs); wider tiles split M
    between two (cooperative), keeping each thread at 128 accumulators or fewer."""
    tile_k = 32 if c <= 32 else 64
    if k <= 256:
        tile_n = -(-k // 16) * 16
    else:
        tile_n = min((256, 192, 128), key=lambda n: (math.ceil(k / n) * n, -n))
    return (128, tile_n, tile_k), "pingpong" if tile_n <= 128 else "cooperative"


def pointwise_choice(threadblock: tuple[int, int, int], schedule: str) -> KernelChoice:
    """A pointwise conv's 3.x choice: the conv family, a persistent GEMM schedule."""
    return KernelChoice("conv2d_fprop", "sm90", hopper_tile(threadblock, schedule), (8, 8, 8), 1, 1, "optimized",
                        cluster=(1, 1, 1), kernel_schedule=schedule)


def batches_operands(op: ops.GemmOp) -> bool:
    """Whether the GEMM is truly batched (its batch is a grid dimension, not folded into M),
    by the emitter's own reading of its batch attributes."""

    batching = gemm_batching(op)
    return batching["batch_mode"] != "none" and not batching["fold_batch"]


def hopper_gemm_problem(op: ops.GemmOp) -> tuple[int, int, int, int] | None:
    """(rows, N, K, batch count) of the 3.x GEMM that would run `op` (a folded batch is in
    the rows), or None where no 3.x instance can run it: element types, rows TMA cannot
    move, a batch layout the 3.x kernel lacks."""

    elements = {str(v.type.element_type) for v in (op.a, op.b, op.output)}
    if len(elements) != 1 or next(iter(elements)) not in cutlass_sm90.ELEMENTS:
        return None
    m, n, k = op.problem
    batch = math.prod(tensor_shape(op.output.type)[:-2])
    contiguous_a = k if op.prop_value("layout_a") == "row" else m
    contiguous_b = n if op.prop_value("layout_b") == "row" else k
    if any(extent % cutlass_sm90.TMA_ALIGNMENT for extent in (contiguous_a, contiguous_b, n)):
        return None
    if isinstance(batch_layout(op), str):
        return None
    batching = gemm_batching(op)  # the emitter's reading of the batch (same attributes)
    if batching["batch_mode"] not in ("none", "a+b") and not batching["fold_batch"]:
        return None  # 3.x batches A and B together, or folds the batch into M
    return (m * batch, n, k, 1) if batching["fold_batch"] else (m, n, k, batch)


def hopper_conv_problem(op: ops.Conv2dOp) -> tuple[int, int, int] | None:
    """(output pixels, C, K) of the 3.x implicit-GEMM conv that would run `op`, or None
    where none can (element types, groups, layouts, channels or windows TMA cannot take)."""

    elements = {str(v.type.element_type) for v in (op.input, op.filter, op.output)}
    if len(elements) != 1 or next(iter(elements)) not in cutlass_sm90.ELEMENTS or op.prop_value("groups") != 1:
        return None
    if op.prop_value("layout") != "NHWC" or op.prop_value("filter_layout") != "OHWI":
        return None
    problem = (tensor_shape(op.input.type), tensor_shape(op.filter.type), tensor_shape(op.output.type),
               op.prop_value("pads"), op.prop_value("strides"), op.prop_value("dilations"))
    if cutlass_sm90.conv_problem_reason(*problem) is not None:
        return None
    if cutlass_sm90.crops_input(*problem):
        # the cropped input description compiles, but has not yet run on a GPU
        # (bench.check_kernels' "cropped" cases): such convs stay 2.x until it has
        return None
    n, _, _, c = tensor_shape(op.input.type)
    k = tensor_shape(op.filter.type)[0]
    _, p, q, _ = tensor_shape(op.output.type)
    return n * p * q, c, k


STEM_LONG_REDUCTION = 64
"""R·S·C above which our few-channel conv needs many output pixels to beat CUTLASS's, on
16 channels (a blocked stem's, space-to-depth-stem's output); fewer channels are not
measured and keep our kernel."""
STEM_MANY_PIXELS = 4 * 112 * 112
"""N·P·Q from which it does: on the H200 ResNet-50's blocked stem (4x4 on 16 channels) took
ours 1.9x CUTLASS's time at one 112² image and 0.75x at 32 (bench/check_stem_conv.py);
between the two is not measured."""


def stem_conv_problem(op: ops.Conv2dOp) -> bool:
    """Whether the heuristic gives the conv our kernel for few input channels: one it takes
    (C <= 16) with a window larger than 1x1 (a 1x1 conv is a GEMM, the pointwise rules'),
    and, on 16 channels, with a short reduction or many output pixels (STEM_MANY_PIXELS)."""
    _, r, s, c = tensor_shape(op.filter.type)
    n, p, q, _ = tensor_shape(op.output.type)
    if c >= 16 and r * s * c > STEM_LONG_REDUCTION and n * p * q < STEM_MANY_PIXELS:
        return False
    return r * s > 1 and stem_conv_kernels.conv_reason(op) is None


SPLIT_WAVE_SHARE = 8
"""Our split-reduction conv is for convs whose 3.x grid (the heuristic's tile) is at most
1 / SPLIT_WAVE_SHARE of the multiprocessors: there each CTA walks the whole reduction alone
(5-40x off the bound at batch 1 on the H200). At 8 and 16 CTAs it beat the 3.x conv on the
H200; at 32 (VGG-16's 3x3 512 -> 512 at 14²) it lost (bench/RESULTS.md)."""
SPLIT_MIN_K_TILES = 16
"""... and whose reduction is at least this many 64-wide k-tiles (R·S·C >= 1024): shorter
ones leave each cluster CTA too few to fill its pipeline."""


HALO_MIN_TILES = 0.4
"""Tiles of our halo conv per multiprocessor at least. On the H200 at batch 1 it beat
CUTLASS's choice with 1.7 (VGG-16's 224² layer), 0.85 (its 112² layer) and 0.42 tiles a
multiprocessor (ResNet-50's blocked stem), and lost with 0.21 (ResNet-50's 56² 3×3 conv),
where each CTA's filter load is paid for too few output pixels (bench/RESULTS.md). Convs
on 33-63 channels (padded to 64, HALO_PADDED_EXEMPT) are exempt: CUTLASS's tiles run those
at a partial K too, and on the H100 at batch 1 RepVGG-A0's 56² 48-channel convs took ours
0.0044-0.0048 ms at 0.21 tiles a multiprocessor against CUTLASS's 0.0064-0.0066. Fewer
channels (a padded stem's 8) are not measured and keep the floor."""
HALO_PADDED_EXEMPT = range(33, 64)
"""Input channels exempt from HALO_MIN_TILES."""


def halo_conv_problem(op: ops.Conv2dOp, sms: int, mode: int = halo_conv_kernels.DEFAULT_MODE,
                      general: bool = True, loads: str = "auto") -> halo_conv_kernels.HaloTile | None:
    """The tile our wgmma conv for few input channels gives the op (codegen/halo_conv_kernels.py)
    where it takes it, else None: a conv it computes with a window wider than 1x1 (a 1x1
    conv has no halo to share: the pointwise rules' persistent GEMMs keep it), with at least
    HALO_MIN_TILES tiles per multiprocessor (but for HALO_PADDED_EXEMPT channels); the
    general form only where `general`. `loads`: how the patches arrive, "auto" (by TMA for
    convs on padded channels, `padded_channels_tile`; cp.async for the others, whose TMA
    form is not timed yet), "cp_async" (everywhere) or "tma" (wherever the tile takes it)."""
    if halo_conv_kernels.conv_reason(op) is not None or math.prod(tensor_shape(op.filter.type)[1:3]) == 1:
        return None
    if halo_conv_kernels.general(op) and not general:
        return None
    tile = halo_conv_kernels.default_tile(op, mode)
    if halo_conv_kernels.tile_reason(op, tile) is not None:
        return None
    blocks = -(-tensor_shape(op.filter.type)[0] // halo_conv_kernels.BLOCK_K)
    exempt = halo_conv_kernels.input_shape(op)[3] in HALO_PADDED_EXEMPT
    if not exempt and halo_conv_kernels.tiles(op, tile) * blocks < HALO_MIN_TILES * sms:
        return None
    tile = padded_channels_tile(op, tile, blocks, sms, tma=loads != "cp_async")
    by_tma = dataclasses.replace(tile, tma=True)
    return by_tma if loads == "tma" and halo_conv_kernels.tile_reason(op, by_tma) is None else tile


HALO_TWO_ROW_WAVES = 4
"""A one-row default tile of a stride-2 conv becomes two rows with the filter in registers
(mode 2, whose shared memory takes them) where those are at least this many waves: on the
H100, RepVGG-A0's 3x3/2 48 -> 48 at batch 32 (7 waves) took 0.0320-0.0324 ms against
0.0367-0.0370 for the default 56x1 (twice, bench/RESULTS.md); at batch 1 (0.2 waves) 0.0075
against 0.0049."""


def padded_channels_tile(op: ops.Conv2dOp, tile: halo_conv_kernels.HaloTile, blocks: int,
                         sms: int, tma: bool = True) -> halo_conv_kernels.HaloTile:
    """The tile for a conv whose input channels the halo conv pads to a swizzle row
    (RepVGG-A0's 48; any other conv keeps `tile`): two rows in mode 2 (5 from mode 5) for a one-row stride-2 tile of HALO_TWO_ROW_WAVES
    waves, else the default tile with a ring of three patches where the shared memory takes
    it (1-5% faster on RepVGG-A0's three 48-channel 3x3s at batch 32 on the H100; other
    general convs keep two, unmeasured). With `tma` (the default) the patches arrive by TMA
    into a ring of three where the tile takes them, whatever the stride: the loads no longer
    take the warps' issue slots, so one row's four warps keep DRAM busy (1.07-1.36x faster
    alone than the cp.async tiles on RepVGG-A0's three, bench/RESULTS.md)."""
    if halo_conv_kernels.input_shape(op)[3] in halo_conv_kernels.CHANNELS:
        return tile
    if tma:
        for loaded in (dataclasses.replace(tile, patches=3, tma=True), dataclasses.replace(tile, tma=True)):
            if halo_conv_kernels.tile_reason(op, loaded) is None:
                return loaded
    two_rows = dataclasses.replace(tile, rows=2, mode=5 if tile.mode == 5 else 2)
    if (tile.rows == 1 and op.window()[0][0] == 2 and halo_conv_kernels.tile_reason(op, two_rows) is None
            and halo_conv_kernels.tiles(op, two_rows) * blocks >= HALO_TWO_ROW_WAVES * sms):
        return two_rows
    ring = dataclasses.replace(tile, patches=3)
    return ring if halo_conv_kernels.tile_reason(op, ring) is None else tile


def splitk_conv_problem(op: ops.Conv2dOp, sms: int) -> bool:
    """Whether the heuristic gives the conv our split-reduction kernel: one it takes,
    with a long reduction (SPLIT_MIN_K_TILES), whose 3.x grid would be a small share of the
    machine (SPLIT_WAVE_SHARE) and whose clusters bring at least twice that many CTAs."""
    if splitk_conv_kernels.conv_reason(op) is not None or splitk_conv_kernels.k_tiles(op) < SPLIT_MIN_K_TILES:
        return False
    pixels, k, _ = splitk_conv_kernels.gemm_shape(op)
    tile_m, tile_n, _ = hopper_conv_tile(pixels, k, sms)
    cutlass_ctas = math.ceil(pixels / tile_m) * math.ceil(k / tile_n)
    tile = splitk_conv_kernels.default_tile(op, sms)
    return cutlass_ctas * SPLIT_WAVE_SHARE <= sms and splitk_conv_kernels.tiles(op, tile) * tile.split >= 2 * cutlass_ctas


def depthwise_pointwise_choice(op: ops.DepthwisePointwiseConv2dOp) -> KernelChoice:
    """Our kernel for a depthwise conv with the 1×1 convs around it, at its heuristic's
    tile: an "sm80" choice (plain CUDA, built for sm80 and sm90 alike)."""
    return KernelChoice(depthwise_pointwise_kernels.FAMILY, "sm80", depthwise_pointwise_kernels.default_tile(op).as_tile(),
                        (8, 8, 8))


@dataclass
class HeuristicSelector:
    """A deterministic choice from the shapes: no GPU, same answer everywhere.

    On sm90 with `cutlass = 3` it prefers CUTLASS 3.x instances (arch "sm90") wherever one
    can run the op (`cutlass_sm90.py`'s rules) and keeps 2.x instances (arch "sm80", which run on
    sm90 too) for the rest: depthwise and b2b ops, f32, rows TMA cannot move, narrow
    problems (M of 64 or less) where a 64-row wgmma tile would be mostly padding, and K of
    64 or less. Memory-bound 1x1 convs that move enough bytes run as persistent 3.x GEMMs
    whatever their channels (`pointwise_problem`). The rules come from the H200
    measurements in bench/RESULTS.md."""

    name: str = "heuristic"
    notes: list[str] = field(default_factory=list)
    sms: int = 0
    """The target GPU's multiprocessors, when it is not the arch's flagship (sm80
    kernels on a 132-SM H200); 0 takes get_target(arch).multiprocessors."""
    cutlass: int = 3
    """The newest CUTLASS generation to pick: 3 (3.x on sm90 where it runs) or 2."""
    direct_depthwise: bool = True
    """Whether depthwise convs run on our own kernel where it takes them (False: CUTLASS's
    direct depthwise conv, for comparison)."""
    pointwise_gemms: bool = True
    """Whether memory-bound 1x1 convs run as persistent 3.x GEMMs (False: the conv kernels
    the heuristic picked before, for comparison)."""
    skinny_gemms: bool = True
    """Whether GEMMs with few rows (batch-1 classifiers) run on our weight-streaming kernel
    where it takes them (False: CUTLASS's tiles, for comparison)."""

    split_gemms: bool = True
    """Whether GEMMs of at most cutlass_sm90.SMALL_M_ROWS rows on sm90 run on our kernel with K split among
    a cluster's warp groups (wgsplit_gemm_kernels) where it takes them and their K is long
    (`payoff_reason`); select-kernels split_gemms=cutlass turns it off (CUTLASS's narrow
    tiles, for comparison)."""
    stem_convs: bool = True
    """Whether convs on few input channels (image stems) run on our own kernel where it
    takes them (False: CUTLASS's implicit GEMM, for comparison)."""
    conv_ctas: int = 1
    """CTAs of a 3.x implicit-GEMM conv per multiprocessor: 1 takes as many stages as fit
    (the whole shared memory); 2 or more take `cutlass_sm90.occupancy_stages`, so that one
    CTA's epilogue overlaps another's mainloop (the conv kernel is not persistent). 1: two
    for every 3.x conv made ResNet-50 b32 1.02x and RepVGG-A0 b32 1.25x slower on the H100
    (bench/RESULTS.md); the tuner still races the two-CTA stages op by op."""
    cover_conv_columns: bool = True
    """Whether a 3.x implicit-GEMM conv's tile is as wide as its output channels where no
    64-, 128- or 256-wide tile covers them (`hopper_conv_tile`); select-kernels
    conv_columns=power2 turns it off (64 or 128 wide, for comparison)."""
    split_convs: bool = True
    """Whether convs with few output pixels and long reductions (batch 1's deep layers) run
    on our split-reduction kernel on sm90 where `splitk_conv_problem` says so (False:
    CUTLASS's 3.x conv, for comparison)."""
    halo_convs: bool = True
    """Whether convs on 8-64 input channels with many output pixels run on our wgmma conv
    (halo_conv_kernels) on sm90 where `halo_conv_problem` says so (select-kernels
    narrow_convs=cutlass turns it off)."""
    narrow_pointwise: bool = True
    """Whether memory-bound 1x1 convs with under NARROW_POINTWISE_CHANNELS on one side run
    on our streaming kernel on sm90 where `narrow_pointwise_problem` says so (select-kernels
    narrow_pointwise=cutlass turns it off: the persistent 3.x GEMMs)."""
    stream_windows: bool = True
    """Whether memory-bound small-window convs on few channels run on our streaming conv on
    sm90 where `narrow_window_problem` says so (select-kernels narrow_windows=stem turns it
    off: the rules after it, our stem conv)."""
    halo_mode: int = halo_conv_kernels.DEFAULT_MODE
    """The halo conv's `mode` (halo_conv_kernels.MODES: the filter in shared memory or
    registers, overlapped epilogues, or stmatrix stores), select-kernels' `halo_mode`."""
    halo_loads: str = "auto"
    """How the halo conv's patches arrive (`halo_conv_problem`'s `loads`), select-kernels'
    `halo_loads`."""
    halo_general: bool = True
    """Whether the halo conv also takes the convs only its general form computes (stride 2,
    channels padded to a swizzle row, output channels that end inside a block: RepVGG-A0's
    48-channel 3x3s, where its default tiles beat CUTLASS's choice, bench/RESULTS.md);
    select-kernels narrow_convs=halo-aligned turns it off."""

    def multiprocessors(self, arch: str) -> int:
        """The GPU's multiprocessors the tiles are sized for: `sms`, else the arch's flagship's."""
        return self.sms or get_target(arch).multiprocessors

    def select(self, op: Operation, arch: str) -> KernelChoice | str:
        hopper = arch == "sm90" and self.cutlass >= 3
        sms = self.multiprocessors(arch)
        if isinstance(op, ops.DepthwisePointwiseConv2dOp):  # only our kernel computes it (fuse-depthwise-pointwise)
            return depthwise_pointwise_choice(op)
        # before the halo and stem rules, which take such convs too (at a fraction of DRAM speed)
        if hopper and self.stream_windows and isinstance(op, ops.Conv2dOp) and (
                tile := narrow_window_problem(op, arch)) is not None:
            return KernelChoice(stream_conv_kernels.FAMILY, "sm80", tile.as_tile(), (8, 8, 8))
        # before the stem rule: ResNet-50's blocked stem (16 channels) is the halo conv's too
        if hopper and self.halo_convs and isinstance(op, ops.Conv2dOp) and (
                tile := halo_conv_problem(op, sms, self.halo_mode, self.halo_general, self.halo_loads)) is not None:
            return KernelChoice(halo_conv_kernels.FAMILY, "sm90", tile.as_tile(), (8, 8, 8))
        if self.stem_convs and isinstance(op, ops.Conv2dOp) and stem_conv_problem(op):
            return self.stem_conv(op, arch)
        if hopper and self.narrow_pointwise and isinstance(op, ops.Conv2dOp) and (
                tile := narrow_pointwise_problem(op)) is not None:
            return KernelChoice(stream_conv_kernels.FAMILY, "sm80", tile.as_tile(), (8, 8, 8))
        if (self.skinny_gemms and isinstance(op, ops.GemmOp) and skinny_gemm_kernels.gemm_reason(op) is None
                and skinny_gemm_kernels.payoff_reason(op, sms) is None):
            return self.skinny_gemm(op, arch)
        if (hopper and self.split_gemms and isinstance(op, ops.GemmOp) and wgsplit_gemm_kernels.gemm_reason(op) is None
                and wgsplit_gemm_kernels.payoff_reason(op) is None):
            tile = wgsplit_gemm_kernels.default_tile(op, sms)
            return KernelChoice(wgsplit_gemm_kernels.FAMILY, "sm90", tile.as_tile(), (8, 8, 8))
        if hopper and self.split_convs and isinstance(op, ops.Conv2dOp) and splitk_conv_problem(op, sms):
            return self.splitk_conv(op, sms)
        if hopper and isinstance(op, ops.GemmOp | ops.Conv2dOp):
            choice = self.hopper_gemm(op) if isinstance(op, ops.GemmOp) else self.hopper_conv(op)
            if choice is not None:
                return choice
        if self.direct_depthwise and isinstance(op, ops.Conv2dOp) and depthwise_kernels.conv_reason(op) is None:
            return self.depthwise_direct(op, arch)  # the target's arch: an sm90 build stages big convs
        # 2.x instances are sm80 kernels (they run on sm90 too), their grid sized for the target.
        legacy = self if arch == "sm80" else dataclasses.replace(self, sms=sms)
        if isinstance(op, ops.GemmOp):
            return legacy.gemm(op, "sm80")
        if isinstance(op, ops.Conv2dOp):
            return legacy.conv(op, "sm80")
        if isinstance(op, ops.B2bGemmOp | ops.B2bConv2dOp):
            return legacy.b2b(op, "sm80")
        raise BoltError(f"no CUTLASS template computes {op.name}")

    # ------------------------------------------------------------- 3.x (sm90)

    def hopper_gemm(self, op: ops.GemmOp) -> KernelChoice | None:
        problem = hopper_gemm_problem(op)
        if problem is None:
            return None
        rows, n, k, count = problem
        if rows <= 64 or k <= 64:
            # A 64-row wgmma tile mostly padding, or one K tile: nothing for TMA's pipeline
            # to hide (25088x64x64 ran in 0.0070 ms on 2.x, 0.0091 at best on 3.x).
            return None
        sms = self.multiprocessors("sm90")
        tile, schedule, cluster, split_k = choose_hopper_gemm(rows, n, k, count, sms)
        if count > 1:
            split_k = 1  # a batch fills the GPU by itself
        # No raster swizzle: on the H200 a max_swizzle_size of 4 made ViT-B/16 b32's GEMMs up
        # to 1.5x slower (most with a 2x1 cluster), and never faster (bench/RESULTS.md).
        return KernelChoice("gemm", "sm90", tile, (8, 8, 8), 1, split_k,
                            cluster=cluster, kernel_schedule=schedule)

    def hopper_conv(self, op: ops.Conv2dOp) -> KernelChoice | None:
        pointwise = pointwise_problem(op) if self.pointwise_gemms else None
        if pointwise is not None and pointwise_bytes(*pointwise, op.residual is not None) >= POINTWISE_MIN_BYTES:
            return pointwise_choice(*pointwise_gemm_tile(*pointwise[1:]))
        problem = hopper_conv_problem(op)
        if problem is None:
            return None
        pixels, c, k = problem
        if c < 64:
            # Under one 64-wide K tile per filter tap the 3.x conv loads mostly padding: on
            # the H200 2.x ran the space-to-depth stem (16 channels) in 0.112 ms against
            # 0.192, and a 1x1 16 -> 96 conv as fast as the best 3.x tile (bench/RESULTS.md).
            return None
        tile = hopper_tile(hopper_conv_tile(pixels, k, self.multiprocessors("sm90"), self.cover_conv_columns),
                           "warpspecialized")
        if self.conv_ctas > 1 and (stages := cutlass_sm90.occupancy_stages(tile.threadblock, self.conv_ctas)):
            tile = dataclasses.replace(tile, stages=stages)
        return KernelChoice("conv2d_fprop", "sm90", tile, (8, 8, 8), 1, 1, "optimized",
                            cluster=(1, 1, 1), kernel_schedule="warpspecialized")

    # ------------------------------------------------------------- 2.x

    def gemm(self, op: ops.GemmOp, arch: str) -> KernelChoice:
        m, n, k = op.problem
        batch = math.prod(tensor_shape(op.output.type)[:-2])
        bits = element_bits(op.a)
        tiles = BATCHED_GEMM_TILES if batches_operands(op) else GEMM_TILES
        tile, split_k = choose_gemm_tile(m, n, k, batch, bits, arch, self.sms, tiles)
        if batch > 1:
            split_k = 1  # a batched GEMM fills the GPU with its batch
        if plan_epilogue(op.epilogue).kind == "residual_block":
            split_k = 1  # the residual block would apply its activations on every slice
        contiguous_a = k if op.prop_value("layout_a") == "row" else m
        contiguous_b = n if op.prop_value("layout_b") == "row" else k
        alignment = (
            widest_alignment(bits, contiguous_a),
            widest_alignment(bits, contiguous_b),
            widest_alignment(element_bits(op.output), n),
        )
        return KernelChoice("gemm", arch, tile, alignment, swizzle_for(m, n), split_k)

    def conv(self, op: ops.Conv2dOp, arch: str) -> KernelChoice:
        n, h, w, c = tensor_shape(op.input.type)
        k, r, s, _ = tensor_shape(op.filter.type)
        _, p, q, _ = tensor_shape(op.output.type)
        groups = op.prop_value("groups")
        bits = element_bits(op.input)
        gemm_m, gemm_n, gemm_k = n * p * q, k, c * r * s
        if groups > 1 and groups == c == k:
            # our depthwise kernel's convs are select()'s, which knows the target's arch
            return self.cutlass_depthwise(op, arch)
        tile, _ = choose_gemm_tile(gemm_m, gemm_n, gemm_k, 1, bits, arch, self.sms)
        widest = 128 // bits
        if c % widest == 0:
            iterator, align_a = "optimized", widest
        elif c in (4, 8) and c < widest or c == widest // 2:
            iterator, align_a = "fixed_channels", c
        elif c <= 3:
            iterator, align_a = "few_channels", widest_alignment(bits, c)
        else:
            iterator, align_a = "analytic", widest_alignment(bits, c)
        alignment = (align_a, widest_alignment(bits, c), widest_alignment(element_bits(op.output), k))
        return KernelChoice("conv2d_fprop", arch, tile, alignment, swizzle_for(gemm_m, gemm_n), 1, iterator)

    def depthwise_direct(self, op: ops.Conv2dOp, arch: str) -> KernelChoice:
        """Our own depthwise kernel (codegen/depthwise_kernels.py): plain CUDA built for
        sm80 and sm90 alike, so its choice is an "sm80" one on either target; on an sm90
        target big convs take its staged window (`depthwise_kernels.default_tile`)."""
        tile = depthwise_kernels.default_tile(op, self.multiprocessors(arch), staged=arch == "sm90")
        vector = tile.vector
        return KernelChoice(depthwise_kernels.FAMILY, "sm80", tile.as_tile(), (vector, vector, vector))

    def skinny_gemm(self, op: ops.GemmOp, arch: str) -> KernelChoice:
        """Our GEMM for few rows (codegen/skinny_gemm_kernels.py): at M <= 16 CUTLASS's
        tiles leave most multiprocessors idle (N / 128 CTAs) and the weight streams at a
        few percent of DRAM bandwidth; up to 32 rows where N is narrow (`payoff_reason`).
        Plain CUDA with mma.sync, built for sm80 and sm90 alike, so its choice is an "sm80"
        one on either target."""
        tile = skinny_gemm_kernels.default_tile(op, self.multiprocessors(arch))
        return KernelChoice(skinny_gemm_kernels.FAMILY, "sm80", tile.as_tile(), (8, 8, 1))

    def stem_conv(self, op: ops.Conv2dOp, arch: str) -> KernelChoice:
        """Our conv for few input channels (codegen/stem_conv_kernels.py): at K = R·S·C this
        small CUTLASS's implicit GEMM waits on its epilogue's stores (VGG-16's first conv at
        12% of its bound on the H200). Plain CUDA with mma.sync, built for sm80 and sm90
        alike, so its choice is an "sm80" one on either target."""
        tile = stem_conv_kernels.default_tile(op, self.multiprocessors(arch))
        return KernelChoice(stem_conv_kernels.FAMILY, "sm80", tile.as_tile(), (8, 8, 8))

    def splitk_conv(self, op: ops.Conv2dOp, sms: int) -> KernelChoice:
        """Our conv for few output pixels (codegen/splitk_conv_kernels.py): a thread block
        cluster splits each output tile's reduction, so a batch-1 conv at 7² or 14² fills
        the GPU. Plain CUDA with mma.sync and clusters, built for sm_90: an "sm90" choice."""
        tile = splitk_conv_kernels.default_tile(op, sms)
        return KernelChoice(splitk_conv_kernels.FAMILY, "sm90", tile.as_tile(), (8, 8, 8))

    def cutlass_depthwise(self, op: ops.Conv2dOp, arch: str) -> KernelChoice:
        """CUTLASS 2.x's direct depthwise conv (a SIMT kernel)."""
        c = tensor_shape(op.input.type)[-1]
        k, r, s, _ = tensor_shape(op.filter.type)
        bits = element_bits(op.input)
        taps = r * s
        # At least 16 channels: a narrower warp has no SimtWarpShape specialization in CUTLASS.
        channels = 64 if c >= 64 else 1 << max(4, (c - 1).bit_length())
        pixels = depthwise_pixels(r, s, op.prop_value("strides"), op.prop_value("dilations"), bits, channels)
        tile = Tile((pixels, channels, taps), (16, channels, taps), (1, 1, 1), 2)
        # The direct conv reads input channels and filters in vectors of up to 128 bits.
        vector = widest_alignment(bits, c)
        alignment = (vector, vector, widest_alignment(element_bits(op.output), k))
        return KernelChoice("depthwise_conv2d_fprop", arch, tile, alignment)

    def b2b(self, op: ops.B2bGemmOp | ops.B2bConv2dOp, arch: str) -> KernelChoice | str:
        """Example 13's tilings: the first tile covers N0; register-file residency while
        a warp can hold a whole row of the intermediate (N0 <= 64), shared memory after.
        What example 13 cannot run (not f16, a column-major A, NCHW, extents its 128-bit
        accesses do not divide) is unfused."""
        if isinstance(op, ops.B2bGemmOp):
            n0 = tensor_shape(op.b0.type)[-1 if op.prop_value("layout_b0") == "row" else -2]
            k0 = tensor_shape(op.a.type)[-1 if op.prop_value("layout_a") == "row" else -2]
            family = "b2b_gemm"
            # Example 13's B2bGemm reads a row-major A, whose rows (M, batch dimensions
            # folded in) its 128-bit accesses must divide too (B2bGemm::can_implement).
            layout_ok = op.prop_value("layout_a") == "row" and math.prod(tensor_shape(op.a.type)[:-1]) % 8 == 0
        else:
            n0 = tensor_shape(op.filter0.type)[0]
            k0 = tensor_shape(op.input.type)[-1]
            family = "b2b_conv2d"
            layout_ok = op.prop_value("layout") == "NHWC" and op.prop_value("filter_layout") == "OHWI"
        n1 = tensor_shape(op.output.type)[-1]
        # The kernels are f16 with 8-element (128-bit) accesses along K0 (C), N0 and N1.
        if {str(value.type.element_type) for value in (*op.operands[:3], op.output)} != {"f16"} or not layout_ok:
            return UNFUSE
        if n0 % 16 or n1 % 16 or k0 % 8 or n0 > 256 or n1 > 256:
            return UNFUSE
        padded_n1 = 1 << max(4, (n1 - 1).bit_length())
        # The second GEMM walks the intermediate in K steps of 32, and its tile covers N1
        # exactly: anything else is outside what the GPU checks cover (MobileNetV2's
        # N0 = 16 gave wrong results on the H200), so it runs as two kernels.
        if n0 % 32 or padded_n1 != n1:
            return UNFUSE
        instruction = (16, 8, 16)
        if n0 <= 64:
            tile0 = Tile((64, n0, 32), (32, n0, 32), instruction, 3)
            tile1 = Tile((64, padded_n1, 32), (32, padded_n1, 32), instruction, 3)
            residency = "register"
        else:
            tile0 = Tile((64, n0, 32), (32, n0 // 2, 32), instruction, 3)
            tile1 = Tile((64, padded_n1, 32), (32, padded_n1 // 2, 32), instruction, 3)
            residency = "shared"
        # CUTLASS's f32-to-f16 output epilogue stores warp tiles of N = 32 or 64 only;
        # wider ones accumulate in f16, as example 13 itself does.
        accumulator = "f32" if tile1.warp[1] in (32, 64) else "f16"
        return KernelChoice(family, arch, tile0, (8, 8, 8), 1, 1, None, tile1, residency, accumulator)
