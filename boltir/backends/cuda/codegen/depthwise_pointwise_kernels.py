"""Our depthwise-then-pointwise conv (family `depthwise_pointwise`): one kernel for an
`op.depthwise_pointwise_conv2d`, a depthwise conv and the 1×1 conv of its output (MobileNet's
inverted residual after its expansion), or with the op's expansion the whole inverted
residual, every epilogue fused, the last with the block's residual. The depthwise conv's
input and output are the block's widest tensors (6× the block's channels); the separate
kernels write them to DRAM and read them back, this one keeps them in shared memory.

    reason = conv_reason(op)          # None where the kernel computes this op
    tile = default_tile(op)           # PairTile
    source = emit_translation_unit([op])

**Which ops.** `fuse-depthwise-pointwise` makes the op where `pair_reason` accepts the
convs and gives it this family's choice (an "sm80" one: plain CUDA with mma.sync and
cp.async, built for sm80 and sm90 alike). `lower-op-to-cutlass` leaves it at the op level;
this generator computes it. NHWC, OHWI filters, one element type (f16 or bf16), C (the
depthwise conv's channels) a multiple of 16, K a multiple of 8, an expansion's Cin a
multiple of 4, any depthwise window of at most MAX_WINDOW a side, any strides, pads and
dilations.

**The kernel.** One CTA per `rows` output rows of one image, in three steps:
1. The band those rows' windows cover, all C channels, into shared memory, the padding as
   zeros: copied by cp.async; or, with an expansion, computed: warp items of 16 band
   pixels and `expand_warp_tiles` n8 tiles of C, mma.sync with A straight from the narrow
   input (8-byte loads as in step 3), expand_epilogue rounded to the element type, zeros
   for pixels outside the image (the depthwise conv pads the expanded tensor). The
   depthwise taps go to shared memory as f32, tap-major.
2. The depthwise conv: a thread item is one 8-channel vector of a strip of `columns`
   output pixels of a row; it reads each band column under the strip once (16 bytes) and
   adds it into every output of the strip whose window holds it (the sliding window along
   W). epilogue0 runs in f32 and rounds once, and the 8 channels go to the A tile in shared
   memory: the tile's pixels × C, rows `a_pitch` bytes apart.
3. The 1×1 conv: warp items of one 16-pixel fragment and `warp_tiles` n8 tiles, mma.sync
   m16n8k16 with f32 accumulators. As in `stream_conv_kernels`, the reduction's order
   inside a k16 chunk is the kernel's to choose: lane t's A and B registers are channels
   4t .. 4t + 3 of the chunk, so A comes from shared memory and B (the 1×1 filter, K × C)
   from the L1 in one 8-byte load each. `a_pitch` is 32 or 96 bytes past a multiple of 128,
   so a half warp's four A rows fall in distinct banks. epilogue1 (bias, residual,
   activation) runs on the accumulators and each thread stores its two channels.

**Launcher ABI**: the CUTLASS conv launchers' shape, with every filter and bias:

    int NAME(const void *input, const void *filter0, const void *bias0, const void *filter1,
             const void *bias1, const void *residual, const void *expand,
             const void *expand_bias, void *output, int n, int h, int w, int c, int k,
             int r, int s, int p, int q, int pad_h, int pad_w, int stride_h, int stride_w,
             int dilation_h, int dilation_w, void *workspace, size_t workspace_bytes,
             cudaStream_t stream);
    size_t NAME_workspace_size(<the same 15 ints>);   // 0: no workspace

`c` is the input's channels, `k` the 1×1 conv's output channels, r × s the depthwise
window. 2002 when the integers are not the instance's problem, 2003 for a null filter,
bias or residual that the instance reads, 1 for a misaligned pointer (input 16 bytes,
filter1 and expand 8, output and residual 4, bias0 16); else 0, or 1000 + the launch's
cudaError_t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.generator import LaunchArguments
from boltir.backends.cuda.codegen.own_kernels import HALF_ELEMENTS, OwnTile, TiledFamily, element_name, same_element_reason
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape

FAMILY = "depthwise_pointwise"
FAMILIES: dict[type, str] = {ops.DepthwisePointwiseConv2dOp: FAMILY}

ELEMENTS = HALF_ELEMENTS
MAX_WINDOW = 7
"""The depthwise window's side at most (a row's taps are in registers)."""
MAX_CHANNELS = 1024
MAX_OUTPUT_CHANNELS = 512
MAX_EXPAND_INPUT = 128
"""An expansion's input channels at most: past them each band pixel's reduction is long
enough that the expansion is a GEMM CUTLASS's tiles serve better."""
ROWS = (1, 2, 4, 8)
COLUMNS = (1, 2, 4, 8)
WARPS = (4, 8)
MAX_WARP_TILES = 8
"""n8 tiles a warp item holds at most: 32 f32 accumulators."""
SHARED_LIMIT = 227 * 1024
TWO_CTAS = SHARED_LIMIT // 2
"""Shared memory a tile may take for two CTAs to share a multiprocessor (the heuristic's bound)."""
MAX_TILE_PIXELS = 64
"""The heuristic's output pixels a tile at most (four m16 fragments), above one row."""


@dataclass(frozen=True)
class PairTile(OwnTile):
    """`rows` output rows a CTA; `columns` output pixels a depthwise thread item; `warps`
    warps a CTA."""

    rows: int
    columns: int
    warps: int


# ------------------------------------------------------------- what is supported


def conv_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op (whatever its tile), or None."""
    if not isinstance(op, ops.DepthwisePointwiseConv2dOp):
        return f"'{op.name}' is not an op.depthwise_pointwise_conv2d"
    n, h, w, cin = tensor_shape(op.input.type)
    c = op.channels()
    k, _, _, _ = tensor_shape(op.filter1.type)
    _, r, s, _ = tensor_shape(op.filter0.type)
    if max(r, s) > MAX_WINDOW:
        return f"a {r}x{s} depthwise window: the kernel takes at most {MAX_WINDOW} a side"
    if c % 16 or c > MAX_CHANNELS:
        return f"{c} channels: the kernel takes a multiple of 16 up to {MAX_CHANNELS}"
    if k % 8 or k > MAX_OUTPUT_CHANNELS:
        return f"{k} output channels: the kernel takes a multiple of 8 up to {MAX_OUTPUT_CHANNELS}"
    if op.expand is not None and (cin % 4 or cin > MAX_EXPAND_INPUT):
        return f"an expansion from {cin} channels: the kernel takes a multiple of 4 up to {MAX_EXPAND_INPUT}"
    reason = same_element_reason(op, ELEMENTS, "input", "the input",
                                 ("filter0", "filter1", "bias0", "bias1", "residual", "expand", "expand_bias", "output"))
    if reason is not None:
        return reason
    if not n * h * w * cin or not math.prod(tensor_shape(op.output.type)):
        return "an empty input or output"
    return None


def _unit_conv(conv: ops.Conv2dOp) -> bool:
    """A 1×1 stride-1 unpadded ungrouped NHWC conv with an OHWI filter."""
    return (conv.prop_value("layout") == "NHWC" and conv.prop_value("filter_layout") == "OHWI"
            and tuple(tensor_shape(conv.filter.type)[1:3]) == (1, 1) and conv.prop_value("groups") == 1
            and tuple(conv.prop_value("strides")) == (1, 1) and not any(conv.prop_value("pads"))
            and tuple(conv.prop_value("dilations")) == (1, 1))


def pair_reason(depthwise: ops.Conv2dOp, pointwise: ops.Conv2dOp, expand: ops.Conv2dOp | None = None,
                sms: int = 0) -> str | None:
    """Why the two op.conv2d (a depthwise conv whose result the 1×1 conv reads as its input;
    `expand`: the 1×1 conv whose result the depthwise conv reads) should not become one
    op.depthwise_pointwise_conv2d on this kernel: it cannot compute them, or `payoff_reason`
    (with `sms` multiprocessors, 0: any grid) expects no gain; None to fuse."""
    reason = _structure_reason(depthwise, pointwise, expand)
    if reason is not None:
        return reason
    probe = fused_op(depthwise, pointwise, expand)
    try:
        return conv_reason(probe) or payoff_reason(probe, sms)
    finally:
        probe.erase()  # its operands' uses go with it


def _structure_reason(depthwise: ops.Conv2dOp, pointwise: ops.Conv2dOp, expand: ops.Conv2dOp | None) -> str | None:
    """Why the convs are not a depthwise conv between 1×1 convs as the op computes them."""
    if depthwise.prop_value("layout") != "NHWC" or depthwise.prop_value("filter_layout") != "OHWI":
        return "the kernel takes NHWC inputs and OHWI filters"
    if not depthwise.is_depthwise():
        return "the first conv is not depthwise"
    if depthwise.residual is not None:
        return "the depthwise conv adds a residual"
    if pointwise.input is not depthwise.output:
        return "the 1x1 conv does not read the depthwise conv's result as its input"
    if not _unit_conv(pointwise):
        return "the second conv is not a 1x1 stride-1 unpadded conv"
    if expand is not None:
        if depthwise.input is not expand.output:
            return "the depthwise conv does not read the expansion's result"
        if not _unit_conv(expand) or expand.residual is not None:
            return "the expansion is not a 1x1 stride-1 unpadded conv without a residual"
    return None


def fused_op(depthwise: ops.Conv2dOp, pointwise: ops.Conv2dOp,
             expand: ops.Conv2dOp | None = None) -> ops.DepthwisePointwiseConv2dOp:
    """The op.depthwise_pointwise_conv2d that computes the pair, or with `expand` the three
    convs (not inserted anywhere: insert it, or erase it so that its operands lose the uses)."""
    strides, pads, dilations, _ = depthwise.window()
    extra = {} if expand is None else {"expand": expand.filter, "expand_bias": expand.bias,
                                       "expand_epilogue": expand.epilogue}
    return ops.DepthwisePointwiseConv2dOp(
        depthwise.input if expand is None else expand.input, depthwise.filter, pointwise.filter, bias0=depthwise.bias,
        bias1=pointwise.bias, residual=pointwise.residual, strides=strides, pads=pads, dilations=dilations,
        epilogue0=depthwise.epilogue, epilogue1=pointwise.epilogue, **extra)


@dataclass(frozen=True)
class Geometry:
    """A tile's sizes: the input band it holds, its A tile, its shared memory."""

    band_rows: int
    band_columns: int
    band_pitch: int
    """Bytes between band pixels: 2C as copied; with an expansion, 16 past an even multiple
    of 16, so that the expansion's 4-byte stores of eight pixels fall in distinct banks."""
    tile_pixels: int
    """The A tile's rows: rows × Q rounded up to a multiple of 16."""
    a_pitch: int
    """Bytes between A rows: at least 2C, 32 or 96 past a multiple of 128."""
    shared_bytes: int


def a_pitch(c: int) -> int:
    """The A rows' pitch in bytes for C channels (see the module docstring)."""
    pitch = 2 * c
    while pitch % 128 not in (32, 96):
        pitch += 16
    return pitch


def band_pitch(c: int, expanding: bool) -> int:
    """The band pixels' pitch in bytes for C channels (Geometry.band_pitch)."""
    return 2 * c if not expanding else 2 * c + (16 if 2 * c % 32 == 0 else 0)


def geometry(op: ops.DepthwisePointwiseConv2dOp, tile: PairTile) -> Geometry:
    c = op.channels()
    _, r, s, _ = tensor_shape(op.filter0.type)
    q = tensor_shape(op.output.type)[2]
    strides, _, dilations, _ = op.window()
    band_rows = (tile.rows - 1) * strides[0] + (r - 1) * dilations[0] + 1
    band_columns = (q - 1) * strides[1] + (s - 1) * dilations[1] + 1
    pixels = -(-tile.rows * q // 16) * 16
    pitch, band = a_pitch(c), band_pitch(c, op.expand is not None)
    shared = band_rows * band_columns * band + pixels * pitch + r * s * c * 4
    return Geometry(band_rows, band_columns, band, pixels, pitch, shared)


def _most_tiles(nt: int, fragments: int, warps: int) -> int:
    """n8 tiles a warp item takes of `nt`: the most (up to MAX_WARP_TILES, dividing nt) that
    still give each of `warps` warps an item over `fragments` fragments, else one."""
    fitting = [d for d in range(1, min(nt, MAX_WARP_TILES) + 1) if nt % d == 0 and fragments * (nt // d) >= warps]
    return max(fitting, default=1)


def warp_tiles(op: ops.DepthwisePointwiseConv2dOp, tile: PairTile) -> int:
    """n8 tiles a warp item of the 1×1 conv takes (`_most_tiles` over the A tile)."""
    return _most_tiles(tensor_shape(op.filter1.type)[0] // 8, geometry(op, tile).tile_pixels // 16, tile.warps)


def expand_warp_tiles(op: ops.DepthwisePointwiseConv2dOp, tile: PairTile) -> int:
    """n8 tiles a warp item of the expansion takes (`_most_tiles` over the band's pixels)."""
    shape = geometry(op, tile)
    return _most_tiles(op.channels() // 8, -(-shape.band_rows * shape.band_columns // 16), tile.warps)


def tile_reason(op: ops.DepthwisePointwiseConv2dOp, tile: PairTile) -> str | None:
    """Why `tile` cannot compute the op (which conv_reason accepts), or None."""
    if tile.rows not in ROWS or tile.columns not in COLUMNS or tile.warps not in WARPS:
        return f"a {tile.describe()} tile: rows of {ROWS}, columns of {COLUMNS}, warps of {WARPS}"
    if (need := geometry(op, tile).shared_bytes) > SHARED_LIMIT:
        return f"{need} bytes of shared memory: a block takes at most {SHARED_LIMIT}"
    return None


# ------------------------------------------------------------------ the heuristic


def default_tile(op: ops.DepthwisePointwiseConv2dOp) -> PairTile:
    """The most rows (of ROWS, at most the image's) whose tile holds at most
    MAX_TILE_PIXELS output pixels and leaves room for two CTAs a multiprocessor (one row at
    least, if it fits at all); strips of 4 columns; 8 warps."""
    _, p, q, _ = tensor_shape(op.output.type)
    columns = 4 if q >= 4 else max(c for c in COLUMNS if c <= q)
    for rows in sorted((r for r in ROWS if r <= p), reverse=True):
        tile = PairTile(rows, columns, 8)
        if (rows == 1 or rows * q <= MAX_TILE_PIXELS) and geometry(op, tile).shared_bytes <= TWO_CTAS:
            return tile
    return PairTile(1, columns, 8)


def payoff_reason(op: ops.DepthwisePointwiseConv2dOp, sms: int = 0) -> str | None:
    """Why the fusion is not expected to pay at the heuristic's tile, or None.

    - Every CTA reads the whole 1×1 filters (K × C, and E × Cin with an expansion) from the
      L2 for its few output pixels; past the bytes of its band in the depthwise conv's
      channels (what the fusion keeps from DRAM) that read outgrows what it saves
      (MobileNetV2's 14² and 7² blocks with K of 96 to 320: their intermediates are small
      and their 1×1 convs GEMMs that CUTLASS's tiles serve better).
    - With `sms` > 0: a grid of more than one wave (`sms` CTAs). The kernel's time is not
      its bytes: each CTA runs its steps (band, expansion, depthwise conv, 1×1 conv) one
      after another, and neighbouring CTAs compute the band's halo rows (with an expansion,
      their expansion too) twice, while the separate kernels stream their intermediates at
      DRAM speed: past one wave the separate kernels are as fast or faster; within it, the
      launches the fusion removes are what costs
      (bench/RESULTS.md, MobileNetV2 at batch 32 and 1)."""
    tile = default_tile(op)
    shape = geometry(op, tile)
    c, cin, k = op.channels(), tensor_shape(op.input.type)[3], tensor_shape(op.filter1.type)[0]
    filters = 2 * k * c + (2 * c * cin if op.expand is not None else 0)
    band = shape.band_rows * shape.band_columns * c * 2
    if filters > band:
        return (f"each CTA would read {filters} bytes of 1x1 filters beside a band of {band} bytes in the depthwise "
                f"conv's channels ({tile.describe()} tiles)")
    if sms and (ctas := grid_size(op, tile)) > sms:
        return f"{ctas} CTAs of {tile.describe()} tiles, more than one wave of {sms} multiprocessors"
    return None


def grid_size(op: ops.DepthwisePointwiseConv2dOp, tile: PairTile) -> int:
    """The launch's CTAs: one per `rows` output rows of each image."""
    n, p = tensor_shape(op.output.type)[:2]
    return n * -(-p // tile.rows)


# ---------------------------------------------------------------------- instances


def problem(op: ops.DepthwisePointwiseConv2dOp) -> tuple[int, ...]:
    """The launcher's 15 integers: the depthwise conv's, with C the input's channels (the
    expansion's input where there is one) and K the 1×1 conv's output channels."""
    n, h, w, c = tensor_shape(op.input.type)
    _, r, s, _ = tensor_shape(op.filter0.type)
    _, p, q, k = tensor_shape(op.output.type)
    strides, pads, dilations, _ = op.window()
    return (n, h, w, c, k, r, s, p, q, pads[0], pads[1], strides[0], strides[1], dilations[0], dilations[1])


def launch_arguments(op: Operation) -> LaunchArguments:
    return LaunchArguments(kernel_name(op), (op.input, op.filter0, op.bias0, op.filter1, op.bias1, op.residual, op.expand,
                                             op.expand_bias, op.output), problem(op), workspace=True)


def _context(op: ops.DepthwisePointwiseConv2dOp, tile: PairTile) -> dict:
    n, h, w, cin, k, r, s, p, q, pad_h, pad_w, sh, sw, dh, dw = problem(op)
    c = op.channels()
    shape = geometry(op, tile)
    grid = grid_size(op, tile)
    expanding = op.expand is not None
    return {
        "problem": problem(op), "n": n, "h": h, "w": w, "c": c, "cin": cin, "k": k, "r": r, "s": s, "p": p, "q": q,
        "pad_h": pad_h, "pad_w": pad_w, "sh": sh, "sw": sw, "dh": dh, "dw": dw,
        "rows": tile.rows, "columns": tile.columns, "warps": tile.warps, "warp_tiles": warp_tiles(op, tile),
        "band_rows": shape.band_rows, "band_columns": shape.band_columns, "band_pitch": shape.band_pitch,
        "tile_pixels": shape.tile_pixels, "a_pitch": shape.a_pitch, "shared_bytes": shape.shared_bytes, "grid": grid,
        "element": ELEMENTS[element_name(op.input)],
        "index_t": "int" if max(n * h * w * max(c, cin), n * p * q * max(k, c)) < compute_kernels.INT_LIMIT else "long long",
        "epilogue0": compute_kernels.epilogue_function("epilogue0", op.epilogue0),
        "epilogue1": compute_kernels.epilogue_function("epilogue1", op.epilogue1),
        "has_bias0": op.bias0 is not None, "has_bias1": op.bias1 is not None, "has_residual": op.residual is not None,
        "expanding": expanding, "has_expand_bias": op.expand_bias is not None,
        "expand_warp_tiles": expand_warp_tiles(op, tile) if expanding else 0,
        "expand_epilogue": compute_kernels.epilogue_function("expand_epilogue", op.expand_epilogue) if expanding else "",
        "empty": False,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.DepthwisePointwiseConv2dOp, PairTile, "rows, columns, warps",
                    "compute/depthwise_pointwise.cu.j2", conv_reason, tile_reason, _context, one_launch=True)
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
