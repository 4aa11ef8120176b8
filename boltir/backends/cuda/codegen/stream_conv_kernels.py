"""Our streaming conv for narrow channel counts (family `stream_conv`): an NHWC conv with a
1×1 filter or a small window (at most `MAX_TAPS` taps), stride 1, no dilation and no
padding (the GEMM pixels × R·S·C × K), C a multiple of 4 up to `MAX_CHANNELS`, K a multiple
of 8, f16 or bf16 throughout, with the whole `#op.epilogue` fused. MobileNet's expand and
project convs (16 → 96, 24 → 144, 32 → 16, 144 → 24 at 112² and 56²) and its blocked stem
(space-to-depth-stem's 2×2 conv on 16 channels, its input padded by the space_to_depth
kernel) do a few dozen FLOPs per byte: they are bound by DRAM bandwidth, and CUTLASS's
persistent GEMM, with a k-tile of one or two MMA steps, waits on its epilogue's stores, as
does our stem conv, which stages each tile's input patch in shared memory.

    reason = conv_reason(op)          # None where the kernel computes this op.conv2d
    tile = default_tile(op)           # StreamTile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` chooses it where `heuristic.narrow_pointwise_problem` says so
(a KernelChoice of family "stream_conv", arch "sm80", its tile in `threadblock`), and
`lower-op-to-cutlass` leaves such an op.conv2d at the op level, its choice attached: this
generator computes it. Windows: `heuristic.narrow_window_problem`.

**The kernel.** Persistent CTAs of `warps` warps, as many as stay resident. A unit of work
is `fragments` × 16 consecutive output pixels; `slices` warps share a unit, each computing
K / slices of its output channels, and keep those channels' filter in registers as mma.sync
m16n8k16 B fragments for the whole launch. The reduction runs tap by tap (the OHWI
filter's order); a tap's A rows are the input pixels under it, a constant offset from the
first tap's, so each row's source pixel is computed once a unit. Inside a k16 chunk the
reduction's order is the kernel's to choose, so lane t's two A (and B) registers are
channels 4t .. 4t + 3 of the chunk: one 8-byte load each, straight from global memory (a
window's neighbouring taps hit the same cache lines), no shared memory and no barrier.
Likewise the n8 tiles of a store group (four, then two and one for what is left:
`store_groups`) interleave their columns, so that lane t's accumulators in a group of G
tiles are 2G neighbouring output channels: the epilogue
(`compute_kernels.epilogue_function`, the interpreter's `apply_epilogue`) runs in f32 on
them, rounds once and stores 4G bytes (16 for four tiles) per pixel row. A warp issues its
next unit's loads (A fragments and the residual under its stores) before this unit's
products and stores, so that reads stay in flight.

**Launcher ABI**: the CUTLASS conv launchers' (as `stem_conv_kernels.py`'s); shapes are
compile-time constants, 2002 when the integers are not its problem, 2003 for a missing bias
or residual, 1 for an input or filter not aligned to 8 bytes or an output, bias or residual
not aligned to its stores. The unit is plain CUDA (no CUTLASS), compiled with the sm80
record's flags.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.generator import LaunchArguments
from boltir.backends.cuda.codegen.own_kernels import (
    HALF_ELEMENTS,
    OwnTile,
    TiledFamily,
    conv_launch_arguments,
    conv_problem,
    element_name,
    nhwc_conv_reason,
    one_element_reason,
)
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape

FAMILY = "stream_conv"
FAMILIES: dict[type, str] = {ops.Conv2dOp: FAMILY}

ELEMENTS = HALF_ELEMENTS
MAX_CHANNELS = 256
"""Input channels at most: a warp's B fragments are R·S × (C / 16) × (K / slices / 8) × 2 words."""
MAX_TAPS = 16
"""Window taps (R·S) at most: each is a load per A row and chunk, its source a constant
offset; past a 4×4 window the input is re-read too often from the caches to stream."""
MAX_B_WORDS = 96
"""Filter registers per thread at most (KC × NT × 2)."""
MAX_ACCUMULATORS = 64
"""f32 accumulators per thread at most (NT × 4 for one fragment at a time)."""
MAX_WORDS = 200
"""Registers a thread's filter, accumulators, and two units' A fragments and residual words
take at most: on the H200 a tile past it (4 fragments of 144 channels with a residual, 402 words) ran 11×
slower than one fragment (bench/RESULTS.md)."""
WARPS = (4, 8)
SLICES = (1, 2, 4, 8)
FRAGMENTS = (1, 2, 4)


@dataclass(frozen=True)
class StreamTile(OwnTile):
    """`fragments` × 16 output pixels a unit; `slices` warps split a unit's output channels;
    `warps` warps a CTA."""

    fragments: int
    slices: int
    warps: int


# ------------------------------------------------------------- what is supported


def conv_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.conv2d (whatever its tile), or None."""
    if (reason := nhwc_conv_reason(op)) is not None:
        return reason
    n, h, w, c = tensor_shape(op.input.type)
    k, r, s, _ = tensor_shape(op.filter.type)
    if op.prop_value("groups") != 1:
        return f"a grouped conv ({op.prop_value('groups')} groups)"
    if r * s > MAX_TAPS:
        return f"a {r}x{s} window: the kernel takes at most {MAX_TAPS} taps"
    if tuple(op.prop_value("strides")) != (1, 1) or any(op.prop_value("pads")) or tuple(
            op.prop_value("dilations")) != (1, 1):
        return "the kernel takes convs of stride 1 without padding or dilation"
    if c % 4 or c > MAX_CHANNELS:
        return f"{c} input channels: the kernel takes a multiple of 4 up to {MAX_CHANNELS}"
    if k % 8:
        return f"{k} output channels: the kernel takes a multiple of 8"
    if (reason := one_element_reason(op, ELEMENTS)) is not None:
        return reason
    if not n * h * w * c:
        return "an empty input"
    return None


def _registers(c: int, k: int, tile: StreamTile, residual: bool = False, taps: int = 1) -> tuple[int, int, int]:
    """(filter words, accumulators, all words) a thread holds: all counts this unit's and the
    next unit's A fragments (and residual words) beside the filter and accumulators."""
    nt = k // tile.slices // 8
    chunks = math.ceil(c / 16) * taps
    words, accumulators = chunks * nt * 2, nt * 4
    in_flight = 2 * tile.fragments * 2 * (chunks * 2 + (nt if residual else 0))
    return words, accumulators, words + accumulators + in_flight


def tile_reason(op: ops.Conv2dOp, tile: StreamTile) -> str | None:
    """Why `tile` cannot compute the op (which conv_reason accepts), or None."""
    c = tensor_shape(op.input.type)[-1]
    k, r, s, _ = tensor_shape(op.filter.type)
    if tile.warps not in WARPS or tile.slices not in SLICES or tile.fragments not in FRAGMENTS:
        return (f"a {tile.describe()} tile: fragments of {FRAGMENTS}, slices of {SLICES}, "
                f"warps of {WARPS}")
    if tile.warps % tile.slices or k % (8 * tile.slices):
        return f"{tile.slices} slices of {k} output channels in {tile.warps} warps: each a multiple of 8 channels"
    words, accumulators, every = _registers(c, k, tile, op.residual is not None, r * s)
    if words > MAX_B_WORDS or accumulators > MAX_ACCUMULATORS:
        return (f"{k // tile.slices} channels a warp on {r}x{s} taps of {c} input channels hold {words} filter words and "
                f"{accumulators} accumulators a thread (at most {MAX_B_WORDS} and {MAX_ACCUMULATORS})")
    if every > MAX_WORDS:
        return (f"{tile.fragments} fragments of {r}x{s} taps of {c} input channels take {every} words a thread with the filter and "
                f"accumulators (at most {MAX_WORDS})")
    return None


# ------------------------------------------------------------------ the heuristic


WINDOW_FRAGMENTS = 2
"""Fragments a unit for a window larger than 1x1 where they fit: MobileNetV2's blocked stem
(2x2 on 16 channels) ran 8% faster with two than with one on both the H100 and the H200
(bench/RESULTS.md, sixteenth session); 1x1 convs keep one."""


def default_tile(op: ops.Conv2dOp) -> StreamTile | None:
    """The fewest slices whose registers fit (the input is read by fewer warps), one
    fragment a unit (WINDOW_FRAGMENTS for a window, where they fit), 4 warps a CTA; None
    where no slicing fits."""
    r, s = tensor_shape(op.filter.type)[1:3]
    fragments = dict.fromkeys((WINDOW_FRAGMENTS if r * s > 1 else 1, 1))
    for slices in SLICES:
        for count in fragments:
            tile = StreamTile(count, slices, 4 if slices <= 4 else 8)
            if tile_reason(op, tile) is None:
                return tile
    return None


def tiles(op: ops.Conv2dOp) -> list[StreamTile]:
    """Every tile the tuner may time for the op: the default first, then the others by how
    many of its three numbers they change (one at a time before two)."""
    first = default_tile(op)
    if first is None:
        return []
    every = [StreamTile(f, s, w) for w in WARPS for s in SLICES for f in FRAGMENTS]
    valid = [tile for tile in every if tile != first and tile_reason(op, tile) is None]
    changed = lambda tile: sum(a != b for a, b in zip(dataclasses.astuple(tile), dataclasses.astuple(first)))  # noqa: E731
    return [first] + sorted(valid, key=changed)


# ---------------------------------------------------------------------- instances


problem = conv_problem
"""The launcher's 15 integers, in the CUTLASS conv launchers' order."""


def launch_arguments(op: Operation) -> LaunchArguments:
    return conv_launch_arguments(op, kernel_name(op))


def store_groups(tiles_: int) -> list[tuple[int, int]]:
    """(first n8 tile, tiles) of each store group of a warp's `tiles_` n8 tiles: fours, then
    a two and a one for what is left (a thread stores 16, 8 or 4 bytes a group)."""
    groups, start = [], 0
    for size in (4, 2, 1):
        while tiles_ - start >= size:
            groups.append((start, size))
            start += size
    return groups


def _context(op: ops.Conv2dOp, tile: StreamTile) -> dict:
    n, h, w, c, k, r, s, p, q, *_ = problem(op)
    pixels = n * p * q
    groups = store_groups(k // tile.slices // 8)
    return {
        "groups": groups, "widest_group": max(size for _, size in groups),
        "problem": problem(op), "pixels": pixels, "c": c, "k": k, "r": r, "s": s, "h": h, "w": w, "p": p, "q": q,
        "fragments": tile.fragments, "slices": tile.slices, "warps": tile.warps,
        "element": ELEMENTS[element_name(op.input)],
        "index_t": "int" if max(n * h * w * c, pixels * k) < compute_kernels.INT_LIMIT else "long long",
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "empty": False,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.Conv2dOp, StreamTile, "fragments, slices, warps", "compute/stream_conv.cu.j2",
                    conv_reason, tile_reason, _context)
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
