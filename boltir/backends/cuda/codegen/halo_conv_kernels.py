"""Our conv for few input channels on Hopper (family `halo_conv`): an NHWC conv of stride 1
with C = 16, 32 or 64, K a multiple of 64, any R×S up to 7×7 that fits shared memory and any
pads, one group, the whole `#op.epilogue` fused. Such convs are VGG-16's 224² and 112²
layers, ResNet-50's 56² ones and its space-to-depth stem (4×4 on 16 channels): CUTLASS's
implicit GEMM walks one k-tile per filter tap, mostly padding under 64 channels, and
re-reads each input pixel from the L2 once per tap (R·S times), which keeps VGG-16's 3×3
64 → 64 at 224² near 284 TFLOP/s on the H200 (bench/RESULTS.md). Here each input pixel
enters shared memory once per tile, with the tile's halo, and every tap reads it there.
Its general form (`general`) also takes stride 2, C any multiple of 8 up to 64 and K any
multiple of 8 (RepVGG-A0's 3x3s on 48 channels); select-kernels' `narrow_convs=halo-aligned`
leaves it out.

    reason = conv_reason(op)          # None where the kernel computes this op.conv2d
    tile = default_tile(op)           # HaloTile: columns and rows of output pixels a tile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` chooses it where `heuristic.halo_conv_problem` says so (the
default, `narrow_convs=halo`; a KernelChoice of family "halo_conv", arch "sm90", its tile in
`threadblock`); `narrow_convs=cutlass` keeps CUTLASS's (and our stem kernel's).
`lower-op-to-cutlass` leaves such an op.conv2d at the op level, its choice attached, and
this generator computes it. It also computes `op.conv2d_max_pool` (fuse-conv-pool: such a
conv with tiles of an even number of rows and the 2×2 max pool after it): the tile's
staged rows leave in pairs, each pair as one row of their maxima, and the launcher's P and
Q stay the conv's. And it computes
`op.space_to_depth_conv2d` (fuse-conv-space-to-depth: such a conv whose input is an
NCHW image's space-to-depth blocking): the patch comes from the image itself, each pixel's
BLOCK² · IMG_C values loaded into registers two tiles ahead and stored blocked (rounded,
zeros up to C) in 16-byte chunks after the products of the tile before are issued; the
launcher takes the image pointer and the blocked tensor's N, H, W and C (modes 1 and 2).

**The kernel** (sm_90a). Persistent CTAs of `rows` warpgroups, one to four (as many CTAs
as stay resident: two a multiprocessor where the shared memory allows; three and four rows,
at half the columns where the shared memory needs it, put 12 or 16 warps on a
multiprocessor where the default two-row tile has 8: the tuner's candidates and
bench.check_halo_conv time them, the heuristic keeps two); CTA b keeps the filter of
output-channel block b mod K/64 in shared memory (R·S taps of 64 output channels × C,
K-major, swizzled) and walks output tiles of `rows` rows × `columns` pixels. A tile's input
patch, (rows + R − 1) × (columns + S − 1) pixels of 2·C bytes, arrives by cp.async into one
of two swizzled buffers while the other is computed (a tile's `patches` = 3: a ring of three,
two tiles ahead; its choice's third integer is then mode + PATCHES_STEP). With `tma` it
arrives by TMA instead: the launcher encodes the input's tensor map, thread 0 issues one box
a plane (a stride-2 patch's even and odd columns, element stride 2) on the buffer's mbarrier,
and the planes lie one after another from 1024-byte boundaries; TMA_STEP more in the third
integer. Every thread's copies cost the warps issue slots the products and epilogue need
(bench/RESULTS.md: a profile of RepVGG-A0's 3x3/2 issue-bound with DRAM a third busy). Warpgroup g computes output row g of
the tile as R·S·C/16 `wgmma.mma_async` m64 n`columns` k16, A = the tap's filter (64 output
channels × 16 input channels), B = the tap's window of the patch: `columns` consecutive
patch pixels from (g + r, s), which a shared-memory descriptor addresses directly because a
pixel is one row of the 2·C-byte swizzle (32, 64 or 128 bytes). The f32 accumulators (64
channels × `columns` pixels) take the epilogue (`compute_kernels.epilogue_function`, the
interpreter's `apply_epilogue`) in registers, are rounded once and leave through shared
memory in 16-byte stores. One CTA barrier and one warpgroup barrier a tile. In mode 2
(`MODES`) the filter block is not in shared memory but in the warpgroups' registers,
loaded once per CTA as wgmma's register-A fragments: each product then reads only its
window from shared memory. In mode 3 a warpgroup keeps two sets of accumulators and runs
each tile's epilogue while the next tile's products are in flight. Mode 4 is mode 1 whose
epilogue stages its row with `stmatrix.trans` (each n8 block's two 8×8 fragment matrices
written as 16-byte pixel rows) instead of one two-byte store a value.

The descriptors' base-offset field is 0 for every window, though a window starts at any
pixel, not at a swizzle pattern's start: the buffers are 1024-byte aligned, and the
hardware applies the swizzle to the address bits themselves (bench/RESULTS.md: the
alternative, the window's own bits 7..9 in that field, was wrong on the H200 wherever a
window was not 1024-byte aligned).

**Launcher ABI**: the CUTLASS conv launchers' (as `splitk_conv_kernels.py`'s); shapes are
compile-time constants, 2002 when the integers are not its problem, 2003 for a missing bias
or residual, 1 for an operand not aligned to 16 bytes.
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
    conv_problem,
    element_name,
    nhwc_conv_reason,
    one_element_reason,
    same_element_reason,
)
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape

FAMILY = "halo_conv"
FAMILIES: dict[type, str] = {ops.Conv2dOp: FAMILY, ops.Conv2dMaxPoolOp: FAMILY, ops.SpaceToDepthConv2dOp: FAMILY}
POOL = 2
"""The max pool a pooled conv (`op.conv2d_max_pool`, fuse-conv-pool) may take: 2×2 at stride
2, one output row from a tile's two rows."""

ELEMENTS = HALF_ELEMENTS
IMAGE_ELEMENTS = {"f32": "float", **HALF_ELEMENTS}
"""The image element types the kernel blocks (op.space_to_depth_conv2d), as C++ types."""
CHANNELS = (16, 32, 64)
"""A pixel's channels in shared memory: one pixel is one row of the 32-, 64- or 128-byte
swizzle (2·C bytes), so a window that starts at any pixel is a valid wgmma operand. Other
multiples of 8 up to 64 (RepVGG-A0's 48) are padded with zeros to the next of these
(`shared_channels`)."""
STRIDES = ((1, 1), (2, 2))
"""A stride-2 conv keeps its patch's even and odd columns in two planes, so that each tap's
window of output pixels is again consecutive pixels of one plane."""
SWIZZLE_MODE = {16: 3, 32: 2, 64: 1}
"""The wgmma descriptor's layout type for C channels: 32-, 64- or 128-byte swizzle."""
TMA_SWIZZLE = {16: "CU_TENSOR_MAP_SWIZZLE_32B", 32: "CU_TENSOR_MAP_SWIZZLE_64B", 64: "CU_TENSOR_MAP_SWIZZLE_128B"}
"""The same swizzle as a TMA tile's tensor map writes it."""
TMA_ELEMENTS = {"f16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"}
BLOCK_K = 64
"""Output channels a CTA computes: wgmma's M."""
MAX_WINDOW = 7
"""Taps are 64 × 2·C bytes of shared memory each (8 KiB at C = 64, where the shared memory
allows 5×5); tile_reason counts them."""
ROWS = (1, 2, 3, 4)
"""Output rows a tile: one warpgroup each. Three and four (at half the columns where the
shared memory needs it) put 12 or 16 warps on a multiprocessor instead of 8."""
REGISTER_FILE = 65536
"""32-bit registers a multiprocessor: a CTA of `rows` warpgroups has 512 / rows a thread."""
BASE_REGISTERS = 52
"""A thread's registers beside its accumulators and filter fragments (addresses, epilogue
values, loop state): ptxas's count less the accumulators, 43 to 52 on VGG-16's 224² conv."""
MAX_OVERLAPPED_ROWS = 2
"""Mode 3 takes at most this many warpgroups: its two accumulator sets and epilogues spilled
in the 168 registers a thread that three leave (VGG-16's 224² conv at 56 columns; two
warpgroups' thread took 212 there, 191 at 112 columns)."""
MAX_COLUMNS = 128
"""Output pixels a warpgroup's row: wgmma's N (a multiple of 8), columns / 2 f32
accumulators a thread."""
STAGE_PITCH = BLOCK_K * 2 + 16
"""Bytes a staged output pixel: 16 past 128, so that a warp's 2-byte writes of 8 channels ×
4 pixels fall in distinct banks, and rows stay 16-byte aligned."""
SHARED_LIMIT = 227 * 1024
"""The H100's / H200's shared memory a block may ask for."""


MODES = (1, 2, 3, 4, 5)
"""A tile's `mode`, its schedule (1-based, as a tile's integers are positive): the filter
block in shared memory, every wgmma reading both operands there (1); in the registers of
the warpgroups, loaded once per CTA (2: wgmma's register-A form, which halves the
shared-memory reads of the products); in shared memory with two sets of accumulators,
each tile's epilogue running under the next tile's products (3); mode 1 with the staged
row written by `stmatrix.trans` (4: a warp's accumulators leave as 16-byte pixel rows,
COLUMNS / 16 instructions a thread instead of COLUMNS / 2 two-byte stores); or mode 2 with
mode 4's stores (5)."""
TUNED_MODES = (1, 2, 3, 4)
"""The modes the tuner's candidates try (mode 5 is not among them until a GPU run has
timed it against these in a model; the candidates race TMA against cp.async patches)."""
DEFAULT_MODE = 4
"""The mode select-kernels' heuristic gives (its `halo_mode`): stmatrix's 16-byte pixel rows
took 13-22% off every halo conv timed on the H100 against mode 1 (bench/RESULTS.md),
which left the tensor pipe idle while a thread stored its row two bytes at a time."""
MAX_FILTER_REGISTERS = 160
"""A thread's registers for the filter in mode 2 (4 a tap and k16 step), at most:
with the accumulators (columns / 2) and addressing, a thread stays under 255."""


PATCHES = (2, 3)
"""Patch buffers a CTA: 2, the next tile's patch arriving while a tile computes; 3, the next
two (modes 1, 2 and 4 without an image to block), for tiles whose one patch in flight leaves
DRAM idle: a stride-2 tile of one row on one warpgroup a multiprocessor (RepVGG-A0's 3x3/2)."""
PATCHES_STEP = 10
"""A tile of three patches carries mode + PATCHES_STEP in its KernelChoice's third integer
(14: mode 4, three patches), so that every older choice keeps its meaning."""
TMA_STEP = 100
"""A tile whose patches arrive by TMA carries TMA_STEP more in that integer (114: mode 4,
three patches, TMA)."""
MAX_BOX = 256
"""TMA's box: at most 256 elements along each dimension (a patch row's input columns)."""


@dataclass(frozen=True)
class HaloTile(OwnTile):
    """Output tiles of `rows` rows × `columns` pixels (× 64 output channels), `mode` one of
    MODES (where the filter lives, and whether epilogues overlap products), `patches` one of
    PATCHES (the patch buffers' ring), `tma`: the patches arrive by TMA (one box a plane,
    issued by one thread, awaited on an mbarrier) instead of every thread's cp.async."""

    columns: int
    rows: int
    mode: int = 1
    patches: int = 2
    tma: bool = False

    def numbers(self) -> tuple[int, int, int]:
        """The KernelChoice's three integers: columns, rows, mode + PATCHES_STEP × (patches − 2)
        + TMA_STEP × tma."""
        return self.columns, self.rows, self.mode + PATCHES_STEP * (self.patches - 2) + TMA_STEP * self.tma

    @staticmethod
    def decode(columns: int, rows: int, packed: int) -> HaloTile:
        """The tile of a KernelChoice's three integers (numbers' inverse)."""
        tma, packed = divmod(packed, TMA_STEP)
        extra, mode = divmod(packed, PATCHES_STEP)
        return HaloTile(columns, rows, mode, 2 + extra, bool(tma))

    @classmethod
    def of(cls, tile) -> HaloTile:
        return cls.decode(*tile.threadblock)

    @property
    def filter_in_registers(self) -> bool:
        return self.mode in (2, 5)

    @property
    def overlapped(self) -> bool:
        return self.mode == 3

    @property
    def matrix_stores(self) -> bool:
        """The epilogue stages its row with stmatrix (modes 4 and 5)."""
        return self.mode in (4, 5)



    def describe(self) -> str:
        return (f"{self.columns}x{self.rows}" + ("" if self.mode == 1 else f"m{self.mode}")
                + ("" if self.patches == 2 else f"p{self.patches}") + ("t" if self.tma else ""))


# ------------------------------------------------------------- what is supported


def pooled(op: Operation) -> bool:
    return isinstance(op, ops.Conv2dMaxPoolOp)


def blocks_image(op: Operation) -> bool:
    return isinstance(op, ops.SpaceToDepthConv2dOp)


def input_shape(op: Operation) -> tuple[int, ...]:
    """The NHWC tensor the conv reads: its input, or the blocked image it builds."""
    return op.blocked_shape() if blocks_image(op) else tensor_shape(op.input.type)


def image_reason(op: ops.SpaceToDepthConv2dOp) -> str | None:
    """Why the kernel does not block this op's image as it loads it, or None."""
    if op.prop_value("image_layout") != "NCHW":
        return f"an {op.prop_value('image_layout')} image: the kernel blocks NCHW images"
    if (element := element_name(op.input)) not in IMAGE_ELEMENTS:
        return f"an image of {element}: the kernel reads {', '.join(IMAGE_ELEMENTS)}"
    if op.blocked_channels() % (2 * op.prop_value("blocksize")):
        return (f"{op.image_channels()} image channels in {op.prop_value('blocksize')}x{op.prop_value('blocksize')} "
                "blocks: the kernel stores a block row's channels in pairs")
    return same_element_reason(op, ELEMENTS, "filter", "the filter", ("bias", "residual", "output"))


def shared_channels(c: int) -> int:
    """The channels a pixel takes in shared memory: C rounded up to 16, 32 or 64."""
    return next(width for width in CHANNELS if width >= c)


def general(op: Operation) -> bool:
    """Whether the instance takes the general form (stride 2, channels padded to a swizzle
    row, or output channels that end inside a 64-channel block); the others' source is as
    it was before that form existed, so their compiled objects stay valid."""
    strides = tuple(op.window()[0])
    _, _, _, c = input_shape(op)
    return strides != (1, 1) or c not in CHANNELS or tensor_shape(op.filter.type)[0] % BLOCK_K != 0


def conv_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.conv2d, op.conv2d_max_pool or
    op.space_to_depth_conv2d (whatever its tile), or None."""
    if pooled(op):
        if op.prop_value("pool") != POOL:
            return f"a {op.prop_value('pool')}x{op.prop_value('pool')} pool: the kernel pools 2x2"
    elif blocks_image(op):
        if (reason := image_reason(op)) is not None:
            return reason
    elif (reason := nhwc_conv_reason(op)) is not None:
        return reason
    if op.prop_value("groups") != 1:
        return f"a grouped conv ({op.prop_value('groups')} groups)"
    strides, _, dilations, _ = op.window()
    if tuple(dilations) != (1, 1):
        return "a dilated conv: the kernel takes dilation 1"
    if tuple(strides) not in STRIDES:
        return f"stride {list(strides)}: the kernel takes 1 or 2 (both axes alike)"
    n, h, w, c = input_shape(op)
    k, r, s, _ = tensor_shape(op.filter.type)
    if (pooled(op) or blocks_image(op)) and general(op):
        if c not in CHANNELS or tuple(strides) != (1, 1):
            return (f"a {'pooled' if pooled(op) else 'blocking'} conv on {c} channels at stride {strides[0]}: the kernel "
                    f"pools and blocks at stride 1 on {', '.join(map(str, CHANNELS))} channels")
        return f"a {'pooled' if pooled(op) else 'blocking'} conv of {k} output channels: it takes a multiple of {BLOCK_K}"
    if c % 8 or c > CHANNELS[-1]:
        return f"{c} input channels: the kernel takes a multiple of 8 up to {CHANNELS[-1]}"
    if k % 8:
        return f"{k} output channels: the kernel takes a multiple of 8"
    if r > MAX_WINDOW or s > MAX_WINDOW:
        return f"a {r}x{s} window: the kernel takes up to {MAX_WINDOW}x{MAX_WINDOW}"
    if not blocks_image(op) and (reason := one_element_reason(op, ELEMENTS)) is not None:
        return reason
    if not math.prod(input_shape(op)) or not math.prod(tensor_shape(op.output.type)):
        return "an empty input or output"
    return None


def patch_extent(op: Operation, tile: HaloTile) -> tuple[int, int, int]:
    """A tile's patch: its input rows, its planes (the stride: a plane a column phase) and
    the pixels a plane's row holds."""
    _, r, s, _ = tensor_shape(op.filter.type)
    sh, sw = op.window()[0]
    columns = (tile.columns - 1) * sw + s
    return (tile.rows - 1) * sh + r, sw, -(-columns // sw)


def plane_bytes(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """One plane of a TMA tile's patch (its rows × pixels, as one box lands), rounded to
    1024 bytes: each plane's box starts a swizzle pattern. 0 for cp.async tiles, whose
    planes interleave row by row."""
    if not tile.tma:
        return 0
    rows, _, pixels = patch_extent(op, tile)
    return -(-rows * pixels * 2 * shared_channels(input_shape(op)[3]) // 1024) * 1024


def patch_bytes(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """One patch buffer: rows × planes × pixels of 2·C′ bytes (C′ the shared channels), at
    stride 1 (rows + R - 1) × (columns + S - 1) pixels, rounded to 1024 bytes (each buffer
    starts a 128-byte swizzle pattern); a TMA tile's planes each rounded (`plane_bytes`)."""
    rows, planes, pixels = patch_extent(op, tile)
    if tile.tma:
        return planes * plane_bytes(op, tile)
    return -(-rows * planes * pixels * 2 * shared_channels(input_shape(op)[3]) // 1024) * 1024


BARRIER_BYTES = 8
"""A TMA tile's mbarrier, one a patch buffer."""


ALIGN_SLACK = 1024
"""Bytes asked beyond the layout, so that the kernel can start it at a 1024-byte boundary
(dynamic shared memory is only promised 16-byte alignment)."""


def filter_bytes(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """The filter block in shared memory: R·S taps of 64 output channels × C (none where
    the filter sits in registers)."""
    _, r, s, c = tensor_shape(op.filter.type)
    return 0 if tile.filter_in_registers else r * s * BLOCK_K * 2 * shared_channels(c)


def filter_registers(op: ops.Conv2dOp) -> int:
    """A thread's registers for the filter block in registers: 4 per tap and k16 step."""
    _, r, s, c = tensor_shape(op.filter.type)
    return r * s * (shared_channels(c) // 16) * 4


def shared_bytes(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """The filter block (in shared memory), the patch buffers, the warpgroups' staged rows
    and the bias, from a 1024-byte aligned base, and the slack that aligns it."""
    return (filter_bytes(op, tile) + tile.patches * patch_bytes(op, tile) + tile.rows * tile.columns * STAGE_PITCH + 4 * BLOCK_K
            + (BARRIER_BYTES * tile.patches if tile.tma else 0) + ALIGN_SLACK)


def tile_reason(op: ops.Conv2dOp, tile: HaloTile) -> str | None:
    """Why `tile` cannot compute the op (which conv_reason accepts), or None."""
    if tile.rows not in ROWS:
        return f"{tile.rows} rows a tile: the kernel takes {' or '.join(map(str, ROWS))} (a warpgroup each)"
    if pooled(op) and tile.rows % POOL:
        return f"a pooled conv needs tiles of a multiple of {POOL} rows (whole pooled rows), not {tile.rows}"
    if tile.columns % 8 or not 8 <= tile.columns <= MAX_COLUMNS:
        return f"{tile.columns} columns a tile: wgmma's N is a multiple of 8 from 8 to {MAX_COLUMNS}"
    if tile.mode not in MODES:
        return f"mode {tile.mode}: one of {', '.join(map(str, MODES))}"
    if tile.patches not in PATCHES:
        return f"{tile.patches} patch buffers: {' or '.join(map(str, PATCHES))}"
    if tile.patches == 3 and (tile.overlapped or blocks_image(op)):
        return "three patch buffers in mode 3 or with an image to block: those schedules keep two"
    if tile.tma and blocks_image(op):
        return "TMA loads with an image to block: the kernel blocks each patch as it loads it, in registers"
    if tile.tma and max(patch_extent(op, tile)[0], math.prod(patch_extent(op, tile)[1:])) > MAX_BOX:
        rows, planes, pixels = patch_extent(op, tile)
        return (f"a patch of {rows} rows x {planes * pixels} input columns: a TMA box takes at most {MAX_BOX} "
                "a dimension")
    if blocks_image(op) and tile.overlapped:
        return "mode 3 with an image to block: the registers hold two accumulator sets or the next patch, not both"
    if tile.filter_in_registers and filter_registers(op) > MAX_FILTER_REGISTERS:
        return (f"the filter in registers takes {filter_registers(op)} a thread: at most {MAX_FILTER_REGISTERS} "
                "(mode 2)")
    if tile.overlapped and tile.rows > MAX_OVERLAPPED_ROWS:
        return f"mode 3 with {tile.rows} warpgroups: its two accumulator sets take at most {MAX_OVERLAPPED_ROWS}"
    if (need := thread_registers(op, tile)) > (have := registers_per_thread(tile.rows, 1)):
        return f"{tile.rows} warpgroups leave {have} registers a thread; the tile needs about {need}"
    if (need := shared_bytes(op, tile)) > SHARED_LIMIT:
        return f"{need} bytes of shared memory: a block takes at most {SHARED_LIMIT}"
    return None


TWO_CTA_SHARED_BYTES = 113 * 1024
"""Shared memory a CTA may take for two to share a multiprocessor (one's epilogue under the
other's products)."""


def ctas_per_multiprocessor(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """The CTAs a multiprocessor should hold, the kernel's launch bound: two where their
    shared memory fits, the filter is not in registers, epilogues do not overlap, and a
    thread's registers (`thread_registers`) fit half the register file in ptxas's steps of
    8; else one. (Two CTAs of three warpgroups leave 80 registers a thread, fewer than a
    112-column tile needs: ptxas then refuses the kernel, not spills.)"""
    if (shared_bytes(op, tile) > TWO_CTA_SHARED_BYTES or tile.filter_in_registers or tile.overlapped
            or thread_registers(op, tile) > registers_per_thread(tile.rows, 2)):
        return 1
    return 2


def registers_per_thread(rows: int, ctas: int) -> int:
    """What ptxas leaves a thread when `ctas` CTAs of `rows` warpgroups share the register
    file: a multiple of 8, at most 255."""
    return min(255, REGISTER_FILE // (128 * rows * ctas) // 8 * 8)


def thread_registers(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """About the registers a thread of the tile needs: its accumulators (twice in mode 3),
    its filter fragments (mode 2) and BASE_REGISTERS."""
    accumulators = tile.columns // 2 * (2 if tile.overlapped else 1)
    return accumulators + (filter_registers(op) if tile.filter_in_registers else 0) + BASE_REGISTERS


def tiles(op: ops.Conv2dOp, tile: HaloTile) -> int:
    """Output tiles of one 64-channel block: images × row tiles × column tiles (of the
    conv's output, before a pool)."""
    n, p, q, _ = op.conv_shape()
    return n * -(-p // tile.rows) * -(-q // tile.columns)


# ------------------------------------------------------------------ the heuristic


def default_tile(op: ops.Conv2dOp, mode: int = DEFAULT_MODE) -> HaloTile:
    """Two rows a tile; the widest column count (a multiple of 8, at most MAX_COLUMNS)
    that pads the output's width least, so a 224-wide row is two tiles of 112; `mode`
    where it takes the op, else its shared-memory twin (the filter's registers exceeded);
    where neither fits the shared memory (a stride-2 patch is four times the tile), half
    the columns, and so on."""
    q = op.conv_shape()[2]
    widest = columns = min(range(8, MAX_COLUMNS + 1, 8), key=lambda c: (-(-q // c) * c - q, -c))
    while True:
        for candidate in (mode, 1):
            for rows in (2, 1):
                tile = HaloTile(columns, rows, candidate)
                if tile_reason(op, tile) is None:
                    return tile
        if columns == 8:
            return HaloTile(widest, 1, mode)
        columns = half_columns(HaloTile(columns, 1, mode))


MORE_WARPS_ROWS = (3, 4)
"""The tiles of more warps a multiprocessor than the default two warpgroups."""
MORE_WARPS_MODES = (1, 4)
"""The modes such tiles are tried in: one accumulator set and the filter in shared memory
(mode 3 takes at most MAX_OVERLAPPED_ROWS warpgroups, and mode 2's filter registers leave
three warpgroups too few on 64 channels)."""


def half_columns(tile: HaloTile) -> int:
    """Half the tile's columns, rounded down to wgmma's multiple of 8 (at least 8)."""
    return max(8, tile.columns // 2 // 8 * 8)


def more_warps_tiles(op: Operation, pooled_rows: bool | None = None, mode: int = DEFAULT_MODE) -> list[HaloTile]:
    """`mode` (one of MORE_WARPS_MODES) on three and four
    warpgroups (12 or 16 warps a multiprocessor where the default tile has 8): at the
    default tile's columns where the shared memory and the registers take them, else at
    half. `pooled_rows` asks for whole pooled rows where the op is still the conv that a
    pool will join (default: whether the op is pooled)."""
    wide = default_tile(op)
    whole_pooled = pooled(op) if pooled_rows is None else pooled_rows
    out = []
    for rows in MORE_WARPS_ROWS:
        if whole_pooled and rows % POOL:
            continue
        for columns in dict.fromkeys((wide.columns, half_columns(wide))):
            if tile_reason(op, tile := HaloTile(columns, rows, mode)) is None:
                out.append(tile)
                break
    return out


# ---------------------------------------------------------------------- instances


def problem(op: ops.Conv2dOp | ops.Conv2dMaxPoolOp | ops.SpaceToDepthConv2dOp) -> tuple[int, ...]:
    """The launcher's 15 integers, in the CUTLASS conv launchers' order (P and Q the conv's,
    before a pool; N, H, W and C the blocked tensor's where the kernel blocks an image)."""
    integers = list(conv_problem(op))
    integers[7:9] = op.conv_shape()[1:3]
    integers[0:4] = input_shape(op)
    return tuple(integers)


def launch_arguments(op: Operation) -> LaunchArguments:
    return LaunchArguments(kernel_name(op), (op.input, op.filter, op.bias, op.residual, op.output), problem(op), workspace=True)


def _context(op: ops.Conv2dOp, tile: HaloTile) -> dict:
    n, h, w, c, k, r, s, p, q, pad_h, pad_w, sh, sw, dh, dw = problem(op)
    element = element_name(op.filter)
    return {
        "problem": problem(op), "n": n, "h": h, "w": w, "c": c, "k": k, "p": p, "q": q, "r": r, "s": s,
        "pad_h": pad_h, "pad_w": pad_w, "columns": tile.columns, "rows": tile.rows,
        "filter_in_registers": tile.filter_in_registers, "filter_bytes": filter_bytes(op, tile),
        "overlapped": tile.overlapped, "matrix_stores": tile.matrix_stores,
        "tiles": tiles(op, tile), "patch_bytes": patch_bytes(op, tile), "shared_bytes": shared_bytes(op, tile),
        "patches": tile.patches, "tma": tile.tma, "plane_bytes": plane_bytes(op, tile),
        "tma_element": TMA_ELEMENTS[element], "tma_swizzle": TMA_SWIZZLE[shared_channels(c)],
        "ctas_per_multiprocessor": ctas_per_multiprocessor(op, tile),
        "element": ELEMENTS[element], "mma_type": element, "swizzle_mode": SWIZZLE_MODE[shared_channels(c)],
        "general": general(op), "shared_c": shared_channels(c), "sh": sh, "sw": sw,
        "index_t": "int" if max(n * h * w * c, n * p * q * k, k * r * s * c) < compute_kernels.INT_LIMIT else "long long",
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "pool": POOL if pooled(op) else 1,
        **_image_context(op),
        "empty": False,
    }


def _image_context(op: Operation) -> dict:
    """The image's sizes, element type, block and pads where the kernel blocks it."""
    if not blocks_image(op):
        return {"image": False}
    c, h, w = op.image_dims()
    top, left, _, _ = op.prop_value("image_pads")
    return {"image": True, "image_element": IMAGE_ELEMENTS[element_name(op.input)], "image_c": c, "image_h": h,
            "image_w": w, "image_top": top, "image_left": left, "block": op.prop_value("blocksize")}


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, (ops.Conv2dOp, ops.Conv2dMaxPoolOp, ops.SpaceToDepthConv2dOp), HaloTile.decode,
                    f"columns, rows, mode + {PATCHES_STEP} x (patches - 2)", "compute/halo_conv.cu.j2",
                    conv_reason, tile_reason, _context, arch="sm90")
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
