"""Our conv kernel for few input channels (family `stem_conv`): an NHWC conv with C <= 16
(an image model's first conv: VGG's 3x3 on 3 channels padded to 4, the 16-channel convs
that space-to-depth-stem makes of ResNet's and MobileNet's stems), any R×S, strides,
dilations and pads, one group, with the whole `#op.epilogue` (bias, activations, residual)
fused. CUTLASS's implicit GEMM gets few k-iterations per tile at K = R·S·C this small and
leaves the machine waiting on its epilogue's stores; this kernel keeps the output streaming.

    reason = conv_reason(op)          # None where the kernel computes this op.conv2d
    tile = default_tile(op, sms=132)  # the shape heuristic's StemTile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` chooses it (a KernelChoice of family "stem_conv", its tile
in `threadblock`) and `lower-op-to-cutlass` leaves such an op.conv2d at the op level, its
choice attached: this generator computes every op.conv2d so marked. `conv_reason` says
which convs it takes: NHWC input, OHWI filter, one group, C <= 16, K a multiple of 8 and at
most 128, f16 or bf16 throughout (input, filter, bias, residual, output), and a filter that
fits shared memory.

**The kernel.** Persistent CTAs of 4 warps. Each CTA loads the whole filter into shared
memory once as B = K × (R·S·CP padded to 16), CP the input channels padded to a power of two
(2, 4, 8 or 16), and keeps it in registers where it is small (VGG's first conv). It loops
over tiles of `rows` × `columns` output pixels; a tile's input patch (the rows and columns
under its windows, zeros outside the image) arrives by cp.async into one of two buffers
while the previous tile computes. The product pixels × K runs on mma.sync m16n8k16 with f32
accumulators, each warp `warp_fragments` fragments of 16 pixels by every output channel,
its A fragments read straight from the patch (an implicit im2col: a k-pair is two
neighbouring channels of one tap). The epilogue (`compute_kernels.epilogue_function`, the
interpreter's `apply_epilogue`) computes in f32 and rounds once, into shared memory, from
where the tile leaves in 16-byte stores along each output row. The patch's pixel and row
strides are padded where that spares bank conflicts (`shared_layout`).

**Launcher ABI**: the CUTLASS conv launchers' (as `depthwise_kernels.py`'s), so the host
program, `KernelLibrary` and the tuner's profiler call it alike:

    int NAME(const void *input, const void *filter, const void *bias, const void *residual,
             void *output, int n, int h, int w, int c, int k, int r, int s, int p, int q,
             int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w,
             void *workspace, size_t workspace_bytes, cudaStream_t stream);
    size_t NAME_workspace_size(<the same 15 ints>);   // 0: no workspace

Shapes are compile-time constants of the instance: the launcher returns 2002 when the
integers are not its problem, 2003 for a null bias or residual that the epilogue reads,
1 (misaligned) for an input not aligned to one copy, an output not aligned to 16 bytes or
a residual to 4; else 0, or 1000 + the launch's cudaError_t. It sizes the grid once per
device from the occupancy the driver reports. The unit is plain CUDA (no CUTLASS),
compiled with the sm80 record's flags.
"""

from __future__ import annotations

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

FAMILY = "stem_conv"
FAMILIES: dict[type, str] = {ops.Conv2dOp: FAMILY}

ELEMENTS = HALF_ELEMENTS
WARPS = 4
MAX_CHANNELS = 16
"""Input channels at most: one tap's channels fill at most one k16 step of the MMA."""
MAX_OUTPUT_CHANNELS = 128
MAX_ACCUMULATORS = 64
"""f32 accumulators per thread at most: warp_fragments × K / 2."""
SHARED_BYTES = 160 * 1024
"""Shared memory per CTA at most (the A100's 163 KB per block, less some slack): the
instance is an sm80 one, run on sm80 and sm90 alike."""
B_REGISTERS = 56
"""The filter's fragments stay in registers where a thread's share and its k offsets (two a
k-step) are at most this many words (VGG's first conv: 48 + 6)."""


@dataclass(frozen=True)
class StemTile(OwnTile):
    """A tile of `rows` × `columns` output pixels per CTA iteration; each of the 4 warps
    computes `warp_fragments` fragments of 16 of its pixels by every output channel."""

    rows: int
    columns: int
    warp_fragments: int


    @property
    def fragments(self) -> int:
        """m16 fragments a tile needs."""
        return -(-self.rows * self.columns // 16)


# ------------------------------------------------------------- what is supported


def padded_channels(c: int) -> int:
    """CP: the channels of one tap in the GEMM's K, a power of two of at least 2 (a k-pair
    is two channels of one tap)."""
    return max(2, 1 << (c - 1).bit_length())


def gemm_k(op: ops.Conv2dOp) -> int:
    """The GEMM's K: R·S·CP padded to the MMA's 16."""
    _, r, s, c = tensor_shape(op.filter.type)
    return -(-r * s * padded_channels(c) // 16) * 16


def filter_bytes(op: ops.Conv2dOp) -> int:
    return tensor_shape(op.filter.type)[0] * (gemm_k(op) + 8) * 2


def conv_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.conv2d (whatever its tile), or None."""
    if (reason := nhwc_conv_reason(op)) is not None:
        return reason
    n, h, w, c = tensor_shape(op.input.type)
    k = tensor_shape(op.filter.type)[0]
    if op.prop_value("groups") != 1:
        return f"a grouped conv ({op.prop_value('groups')} groups)"
    if c > MAX_CHANNELS:
        return f"{c} input channels: the kernel takes at most {MAX_CHANNELS}"
    if k % 8 or k > MAX_OUTPUT_CHANNELS:
        return f"{k} output channels: the kernel takes a multiple of 8 up to {MAX_OUTPUT_CHANNELS}"
    if (reason := one_element_reason(op, ELEMENTS)) is not None:
        return reason
    if filter_bytes(op) > SHARED_BYTES // 2:
        return f"the filter takes {filter_bytes(op)} bytes of shared memory, more than {SHARED_BYTES // 2}"
    if not n * h * w * c or not math.prod(tensor_shape(op.output.type)):
        return "an empty input or output"
    return None


def tile_reason(op: ops.Conv2dOp, tile: StemTile) -> str | None:
    """Why `tile` cannot compute the op (which conv_reason accepts), or None."""
    k = tensor_shape(op.filter.type)[0]
    if tile.warp_fragments not in (1, 2, 4) or tile.warp_fragments * k // 2 > MAX_ACCUMULATORS:
        return (f"{tile.warp_fragments} fragments per warp of {k} channels: 1, 2 or 4, at most "
                f"{MAX_ACCUMULATORS} accumulators a thread")
    if tile.rows < 1 or tile.columns < 1 or tile.fragments > WARPS * tile.warp_fragments:
        return f"a {tile.rows}x{tile.columns} tile does not fit {WARPS} warps of {tile.warp_fragments} fragments of 16 pixels"
    if shared_bytes(op, tile) > SHARED_BYTES:
        return f"the tile needs {shared_bytes(op, tile)} bytes of shared memory, more than {SHARED_BYTES}"
    return None


# ------------------------------------------------------------- shared memory


@dataclass(frozen=True)
class SharedLayout:
    """Strides in halves: a patch pixel, a patch row, a filter row (output channel)."""

    pixel: int
    row: int
    filter: int


def patch_extent(op: ops.Conv2dOp, tile: StemTile) -> tuple[int, int]:
    """The input rows and columns under one tile's windows."""
    _, r, s, _ = tensor_shape(op.filter.type)
    (sh, sw), (dh, dw) = op.prop_value("strides"), op.prop_value("dilations")
    return (tile.rows - 1) * sh + (r - 1) * dh + 1, (tile.columns - 1) * sw + (s - 1) * dw + 1


def copy_vector(c: int) -> int:
    """Channels per copy of the input: the largest power of two dividing C, at most 8."""
    return math.gcd(c, 8)


def _wavefronts(op: ops.Conv2dOp, tile: StemTile, pixel: int, row: int) -> int:
    """Shared-memory wavefronts of the first warps' A loads over the first k-steps (a
    32-bit load takes as many wavefronts as the most distinct words in one bank)."""
    _, r, s, c = tensor_shape(op.filter.type)
    cp, (sh, sw), (dh, dw) = padded_channels(c), op.prop_value("strides"), op.prop_value("dilations")
    total = 0
    for step in range(min(4, gemm_k(op) // 16)):
        for first in range(0, min(2, tile.fragments) * 16, 8):
            for half in (0, 1):
                banks: dict[int, set[int]] = {}
                for lane in range(32):
                    m, k = first + lane // 4, step * 16 + half * 8 + 2 * (lane % 4)
                    tap = k // cp
                    if tap >= r * s or m >= tile.rows * tile.columns:
                        continue
                    half_word = ((m // tile.columns) * sh * row + (m % tile.columns) * sw * pixel
                                 + (tap // s) * dh * row + (tap % s) * dw * pixel + k % cp)
                    banks.setdefault(half_word // 2 % 32, set()).add(half_word // 2)
                total += max((len(words) for words in banks.values()), default=1)
    return total


def shared_layout(op: ops.Conv2dOp, tile: StemTile) -> SharedLayout:
    """The patch strides with the fewest bank conflicts (the smallest among equals): pixels
    of CP halves or 8 more (keeping each copy aligned), rows rounded to 16 bytes and up to
    3 × 16 bytes more; filter rows of K + 8 halves (4 words past a multiple of 8: the 8
    output channels of a B fragment hit distinct banks)."""
    c = tensor_shape(op.filter.type)[-1]
    cp = padded_channels(c)
    _, columns = patch_extent(op, tile)
    best = None
    for pixel in dict.fromkeys((cp, cp + 8)):
        base = -(-columns * pixel // 8) * 8
        for row in range(base, base + 32, 8):
            cost = (_wavefronts(op, tile, pixel, row), pixel, row)
            best = cost if best is None or cost < best else best
    return SharedLayout(best[1], best[2], gemm_k(op) + 8)


def shared_bytes(op: ops.Conv2dOp, tile: StemTile) -> int:
    """The CTA's shared memory: the filter, two patch buffers, the staged output tile and
    the bias (f32)."""
    k = tensor_shape(op.filter.type)[0]
    rows, columns = patch_extent(op, tile)
    cp = padded_channels(tensor_shape(op.filter.type)[-1])
    patch = rows * (-(-columns * (cp + 8) // 8) * 8 + 24)  # the widest layout shared_layout may pick
    return 2 * (k * (gemm_k(op) + 8) + 2 * patch + tile.fragments * 16 * (k + 8)) + 4 * k


# ------------------------------------------------------------------ the heuristic


def default_tile(op: ops.Conv2dOp, sms: int) -> StemTile:
    """As many fragments per warp as 64 accumulators allow (128 pixels a tile at K = 64),
    halved while the grid has fewer than 4 tiles per multiprocessor (batch 1); a tile is a
    segment of an output row (rows split evenly), or whole rows where a row is shorter."""
    n = tensor_shape(op.input.type)[0]
    k = tensor_shape(op.filter.type)[0]
    _, p, q, _ = tensor_shape(op.output.type)
    fragments = max(1, min(4, 2 * MAX_ACCUMULATORS // k))
    while True:
        pixels = WARPS * fragments * 16
        columns = q if q <= pixels else -(-q // -(-q // pixels))
        rows = min(p, max(1, pixels // columns))
        tiles = n * -(-p // rows) * -(-q // columns)
        tile = StemTile(rows, columns, fragments)
        if fragments == 1 or (tiles >= 4 * sms and tile_reason(op, tile) is None):
            return tile
        fragments //= 2


# ---------------------------------------------------------------------- instances


problem = conv_problem
"""The launcher's 15 integers, in the CUTLASS conv launchers' order."""


def launch_arguments(op: Operation) -> LaunchArguments:
    return conv_launch_arguments(op, kernel_name(op))


def _context(op: ops.Conv2dOp, tile: StemTile) -> dict:
    n, h, w, c, k, r, s, p, q, pad_h, pad_w, sh, sw, dh, dw = problem(op)
    layout = shared_layout(op, tile)
    cp = padded_channels(c)
    b_words = gemm_k(op) // 16 * (k // 8 + 1) * 2
    return {
        "problem": problem(op), "n": n, "h": h, "w": w, "c": c, "k": k, "p": p, "q": q, "r": r, "s": s,
        "pad_h": pad_h, "pad_w": pad_w, "sh": sh, "sw": sw, "dh": dh, "dw": dw, "cp": cp,
        "rows": tile.rows, "columns": tile.columns, "warp_fragments": tile.warp_fragments,
        "pixel_stride": layout.pixel, "row_stride": layout.row, "filter_stride": layout.filter,
        "vec": copy_vector(c), "b_in_registers": b_words <= B_REGISTERS,
        "element": ELEMENTS[element_name(op.input)],
        "index_t": "int" if max(n * h * w * c, n * p * q * k) < compute_kernels.INT_LIMIT else "long long",
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "empty": False,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.Conv2dOp, StemTile, "rows, columns, warp fragments", "compute/stem_conv.cu.j2",
                    conv_reason, tile_reason, _context)
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
