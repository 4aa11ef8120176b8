"""Our conv for few output pixels and long reductions (family `splitk_conv`): an NHWC conv
with C a multiple of 64, any R×S, strides, dilations and pads, one group, with the whole
`#op.epilogue` (bias, activations, residual) fused, its reduction split across a thread
block cluster (sm_90). At batch 1 the deep layers of an image model have a few dozen to a
few hundred output pixels and a reduction of thousands (ResNet-50's 3×3 512 → 512 at 7²:
49 × 512 outputs, R·S·C = 4608): CUTLASS's implicit GEMM gives them a handful of CTAs,
each walking the whole reduction alone, and the rest of the machine idles.

    reason = conv_reason(op)          # None where the kernel computes this op.conv2d
    tile = default_tile(op, sms=132)  # the shape heuristic's SplitTile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` chooses it (a KernelChoice of family "splitk_conv", arch
"sm90", its tile in `threadblock`; `few_pixels=cutlass` keeps CUTLASS's), and
`lower-op-to-cutlass` leaves such an op.conv2d at the op level, its choice attached: this
generator computes every op.conv2d so marked. `conv_reason` says which convs it takes:
NHWC input, OHWI filter, one group, C a multiple of 64 (a 64-wide k-tile lies in one
filter tap), K a multiple of 8, f16 or bf16 throughout (input, filter, bias, residual,
output).

**The kernel.** A cluster of `split` CTAs (at most 8, the portable cluster size) computes
one `block_m` × `block_n` tile of the output (pixels × output channels); its CTAs take
turns of the reduction's k-tiles (64 channels of one tap each), so that the grid is
`split` × the tile count. Each CTA runs 4 warps (2 × 2) over a 4-stage cp.async pipeline
into swizzled shared memory, ldmatrix fragments and mma.sync m16n8k16 with f32
accumulators: an implicit im2col, zeros where a window leaves the image. The partial tiles
then meet in distributed shared memory: after a cluster barrier each CTA adds up its share
of the tile's rows over the cluster's CTAs in rank order (deterministic), applies the
epilogue (`compute_kernels.epilogue_function`, the interpreter's `apply_epilogue`) once in
f32, and stores 16 bytes at a time. No workspace and no second launch.

**Launcher ABI**: the CUTLASS conv launchers' (as `stem_conv_kernels.py`'s):

    int NAME(const void *input, const void *filter, const void *bias, const void *residual,
             void *output, int n, int h, int w, int c, int k, int r, int s, int p, int q,
             int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w,
             void *workspace, size_t workspace_bytes, cudaStream_t stream);
    size_t NAME_workspace_size(<the same 15 ints>);   // 0: no workspace

Shapes are compile-time constants of the instance: the launcher returns 2002 when the
integers are not its problem, 2003 for a null bias or residual that the epilogue reads, 1
(misaligned) for an operand not aligned to 16 bytes; else 0, or 1000 + the launch's
cudaError_t. The unit is plain CUDA (no CUTLASS) compiled for sm_90a, its instance's arch.
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

FAMILY = "splitk_conv"
FAMILIES: dict[type, str] = {ops.Conv2dOp: FAMILY}

ELEMENTS = HALF_ELEMENTS
K_TILE = 64
"""Channels of one tap per k-tile: 128 bytes, 8 copies of 16 bytes a row."""
BLOCKS = (32, 64)
"""The tile's rows (pixels) and columns (output channels) each: warps of 2 × 2, whose
fragments are m16 × pairs of n8."""
MAX_SPLIT = 8
"""The portable thread block cluster size."""
STAGES = 4
"""The cp.async pipeline's stages. On the H200 a pipeline holding all of a CTA's k-tiles
(up to 10 stages) was slower than 4 for most tiles of ResNet-50's batch-1 convs
(bench/RESULTS.md)."""
MIN_K_TILES = 2
"""k-tiles a CTA walks at least: fewer and the pipeline never fills."""


@dataclass(frozen=True)
class SplitTile(OwnTile):
    """A `block_m` × `block_n` output tile (pixels × output channels) per cluster of `split`
    CTAs, which divide its reduction between them."""

    block_m: int
    block_n: int
    split: int

    STAGES = STAGES  # recorded: the pipeline's


# ------------------------------------------------------------- what is supported


def gemm_shape(op: ops.Conv2dOp) -> tuple[int, int, int]:
    """(output pixels, output channels, R·S·C): the implicit GEMM's M, N and K."""
    n, p, q, k = tensor_shape(op.output.type)
    _, r, s, c = tensor_shape(op.filter.type)
    return n * p * q, k, r * s * c


def k_tiles(op: ops.Conv2dOp) -> int:
    return gemm_shape(op)[2] // K_TILE


def conv_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.conv2d (whatever its tile), or None."""
    if (reason := nhwc_conv_reason(op)) is not None:
        return reason
    if op.prop_value("groups") != 1:
        return f"a grouped conv ({op.prop_value('groups')} groups)"
    c = tensor_shape(op.input.type)[-1]
    k = tensor_shape(op.filter.type)[0]
    if c % K_TILE:
        return f"{c} input channels: the kernel takes a multiple of {K_TILE}"
    if k % 8:
        return f"{k} output channels: the kernel takes a multiple of 8"
    if (reason := one_element_reason(op, ELEMENTS)) is not None:
        return reason
    if not math.prod(tensor_shape(op.input.type)) or not math.prod(tensor_shape(op.output.type)):
        return "an empty input or output"
    return None


def tile_reason(op: ops.Conv2dOp, tile: SplitTile) -> str | None:
    """Why `tile` cannot compute the op (which conv_reason accepts), or None."""
    if tile.block_m not in BLOCKS or tile.block_n not in BLOCKS:
        return f"a {tile.block_m}x{tile.block_n} tile: rows and columns are each one of {', '.join(map(str, BLOCKS))}"
    if not 1 <= tile.split <= MAX_SPLIT:
        return f"a split of {tile.split}: a cluster takes 1 to {MAX_SPLIT} CTAs"
    if tile.split > k_tiles(op):
        return f"a split of {tile.split} over {k_tiles(op)} k-tiles of {K_TILE}: a CTA would have none"
    if tiles(op, tile) >= 2**16:
        return f"{tiles(op, tile)} output tiles: a grid's y dimension takes at most 65535"
    return None


def tiles(op: ops.Conv2dOp, tile: SplitTile) -> int:
    """The output tiles: the grid's y dimension (x is the cluster)."""
    m, n, _ = gemm_shape(op)
    return -(-m // tile.block_m) * -(-n // tile.block_n)


def shared_bytes(tile: SplitTile) -> int:
    """A CTA's shared memory: the pipeline's stages, reused for the f32 partial tile."""
    return max(STAGES * (tile.block_m + tile.block_n) * K_TILE * 2, tile.block_m * (tile.block_n + 8) * 4)


# ------------------------------------------------------------------ the heuristic


TILE_ORDER = ((32, 64), (64, 64), (64, 32), (32, 32))
"""The tiles default_tile tries, in order: on the H200, 32 pixels × 64 channels was the
fastest of the four shapes for four of ResNet-50's five batch-1 convs the rule takes
(bench/RESULTS.md)."""


def default_tile(op: ops.Conv2dOp, sms: int) -> SplitTile:
    """The first tile of TILE_ORDER whose clusters, split as far as the reduction allows
    (MIN_K_TILES each, MAX_SPLIT at most, no more CTAs than multiprocessors), fill half the
    machine or more; else the one that fills most."""
    best = None
    for block_m, block_n in TILE_ORDER:
        count = tiles(op, SplitTile(block_m, block_n, 1))
        split = max(1, min(MAX_SPLIT, k_tiles(op) // MIN_K_TILES, sms // count))
        tile = SplitTile(block_m, block_n, split)
        if count * split * 2 >= sms:
            return tile
        if best is None or count * split > best[0]:
            best = (count * split, tile)
    return best[1]


# ---------------------------------------------------------------------- instances


problem = conv_problem
"""The launcher's 15 integers, in the CUTLASS conv launchers' order."""


def launch_arguments(op: Operation) -> LaunchArguments:
    return conv_launch_arguments(op, kernel_name(op))


def _context(op: ops.Conv2dOp, tile: SplitTile) -> dict:
    n, h, w, c, k, r, s, p, q, pad_h, pad_w, sh, sw, dh, dw = problem(op)
    return {
        "problem": problem(op), "n": n, "h": h, "w": w, "c": c, "k": k, "p": p, "q": q, "r": r, "s": s,
        "pad_h": pad_h, "pad_w": pad_w, "sh": sh, "sw": sw, "dh": dh, "dw": dw,
        "block_m": tile.block_m, "block_n": tile.block_n, "split": tile.split, "stages": STAGES,
        "tiles": tiles(op, tile),
        "element": ELEMENTS[element_name(op.input)],
        "index_t": "int" if max(n * h * w * c, n * p * q * k, k * r * s * c) < compute_kernels.INT_LIMIT else "long long",
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "empty": False,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.Conv2dOp, SplitTile, "block rows, block columns, split", "compute/splitk_conv.cu.j2",
                    conv_reason, tile_reason, _context, arch="sm90")
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
