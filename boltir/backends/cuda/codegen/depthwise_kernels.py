"""Our own depthwise conv kernel (family `depthwise_direct`): an NHWC depthwise conv
(groups = C = K, OHWI filter K×R×S×1) streamed at DRAM bandwidth, with the whole
`#op.epilogue` (bias, activations, residual) fused.

    reason = conv_reason(op)          # None where the kernel computes this op.conv2d
    tile = default_tile(op, sms=132)  # the shape heuristic's DirectTile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` chooses it (a KernelChoice of family "depthwise_direct",
its tile in `threadblock`) and `lower-op-to-cutlass` leaves such an op.conv2d at the op
level, its choice attached: this generator computes every op.conv2d so marked (the host
program asks it before the plain fallbacks). `conv_reason` says which convs it takes:
NHWC input with an OHWI filter, groups = C = K, one element type (f16, bf16 or f32) for
input, filter and output, a bias and a residual of the output's element type, any R×S
whose taps fit the registers (`MAX_TAP_FLOATS`), any strides, dilations and pads.

**The kernel.** Each thread owns `vector` channels (16 bytes of f16 or bf16: 8 channels;
narrower where C is not a multiple of 8) and a strip of `columns` output pixels along W,
and walks `rows` output rows one after the other. Its R×S filter taps for those channels
sit in registers as f32 (one contiguous run of the OHWI filter, loaded once). For each
output row it reads the input columns its strip's windows cover, once each, as vector
loads, and adds each column into every output of the strip whose window holds it (the
sliding-window reuse along W); the input rows that neighbouring output rows share come
from L1/L2. Threads are numbered channel vector fastest, then strip, row group and image,
so a warp's loads and stores are contiguous runs along C (coalesced 16-byte accesses), and
neighbouring CTAs read neighbouring rows while they are in L2: the input is read from DRAM
about once. Accumulation is f32 and the epilogue (`compute_kernels.epilogue_function`, the
interpreter's `apply_epilogue`) rounds once to the output type.

**Launcher ABI**: the CUTLASS conv launchers' (`cutlass_kernels.py`), so the host program,
`KernelLibrary` and the tuner's profiler call it alike:

    int NAME(const void *input, const void *filter, const void *bias, const void *residual,
             void *output, int n, int h, int w, int c, int k, int r, int s, int p, int q,
             int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w,
             void *workspace, size_t workspace_bytes, cudaStream_t stream);
    size_t NAME_workspace_size(<the same 15 ints>);   // 0: no workspace

Shapes are compile-time constants of the instance: the launcher returns 2002 when the
integers are not its problem, 2003 for a null bias or residual that the epilogue reads,
1 (misaligned) when a pointer is not aligned to one vector; else 0, or 1000 + the launch's
cudaError_t. The unit is plain CUDA (no CUTLASS), compiled with the sm80 record's flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.generator import LaunchArguments
from boltir.backends.cuda.codegen.own_kernels import (
    TiledFamily,
    conv_launch_arguments,
    conv_problem,
    element_name,
    nhwc_conv_reason,
    one_element_reason,
)
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.dialects.cutlass import Tile

FAMILY = "depthwise_direct"
FAMILIES: dict[type, str] = {ops.Conv2dOp: FAMILY}

ELEMENT_BYTES = compute_kernels.ELEMENT_BYTES
BLOCK_THREADS = 128
"""Threads per CTA: small CTAs keep the grid many waves deep, so the multiprocessors stay
full to the end."""
MAX_TAP_FLOATS = 128
"""A thread's filter taps in registers (vector × R × S f32 values) at most: wider vectors
are halved for big filters (5×5: 4 channels, 7×7: 2)."""
MAX_ACCUMULATORS = 64
"""Output values (columns × vector) a thread accumulates at most."""
MAX_COLUMNS = 16
MAX_ROWS = 16


@dataclass(frozen=True)
class DirectTile:
    """One thread's work: `rows` output rows one after the other, each a strip of
    `columns` output pixels along W, `vector` channels wide."""

    rows: int
    columns: int
    vector: int

    def as_tile(self) -> Tile:
        """The KernelChoice tile that records it: threadblock = warp = (rows, columns,
        vector), one thread's tile (the CTA is always BLOCK_THREADS threads); instruction
        1×1×1, stages unused (2)."""
        shape = (self.rows, self.columns, self.vector)
        return Tile(shape, shape, (1, 1, 1), 2)

    @staticmethod
    def of(tile: Tile) -> DirectTile:
        return DirectTile(*tile.threadblock)

    def describe(self) -> str:
        return f"{self.rows}x{self.columns}x{self.vector}"


# ------------------------------------------------------------- what is supported


def conv_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.conv2d (whatever its tile), or None."""
    if (reason := nhwc_conv_reason(op)) is not None:
        return reason
    n, h, w, c = tensor_shape(op.input.type)
    k, r, s, per_group = tensor_shape(op.filter.type)
    if not op.prop_value("groups") == c == k or per_group != 1:
        return f"not a depthwise conv ({op.prop_value('groups')} groups of {c} channels into {k})"
    if (reason := one_element_reason(op, ELEMENT_BYTES)) is not None:
        return reason
    if r * s > MAX_TAP_FLOATS:
        return f"a {r}x{s} filter has more taps than a thread keeps in registers ({MAX_TAP_FLOATS})"
    if math.prod(tensor_shape(op.output.type)) and not n * h * w * c:
        return "the input is empty but the output is not"
    return None


def tile_reason(op: ops.Conv2dOp, tile: DirectTile) -> str | None:
    """Why `tile` cannot compute the op (which conv_reason accepts), or None."""
    c = tensor_shape(op.input.type)[-1]
    _, r, s, _ = tensor_shape(op.filter.type)
    widest = 16 // ELEMENT_BYTES[element_name(op.input)]
    if tile.vector < 1 or tile.vector & (tile.vector - 1) or tile.vector > widest or c % tile.vector:
        return f"the vector of {tile.vector} channels must be a power of two of at most 16 bytes ({widest}) dividing C = {c}"
    if tile.vector * r * s > MAX_TAP_FLOATS:
        return f"{tile.vector} channels of {r}x{s} taps exceed the {MAX_TAP_FLOATS} tap registers of a thread"
    if not 1 <= tile.columns <= MAX_COLUMNS or tile.columns * tile.vector > MAX_ACCUMULATORS:
        return (f"a strip of {tile.columns} columns of {tile.vector} channels must be 1 to {MAX_COLUMNS} columns "
                f"and at most {MAX_ACCUMULATORS} accumulators")
    if not 1 <= tile.rows <= MAX_ROWS:
        return f"a thread walks 1 to {MAX_ROWS} rows, not {tile.rows}"
    return None


# ------------------------------------------------------------------ the heuristic


def widest_vector(op: ops.Conv2dOp) -> int:
    """The most channels per thread: 16 bytes, halved until it divides C and the taps fit."""
    c = tensor_shape(op.input.type)[-1]
    _, r, s, _ = tensor_shape(op.filter.type)
    vector = 16 // ELEMENT_BYTES[element_name(op.input)]
    while vector > 1 and (c % vector or vector * r * s > MAX_TAP_FLOATS):
        vector //= 2
    return vector


STRIP_COLUMNS = (4, 8, 7, 6, 5, 3, 2)
"""Strip widths the heuristic tries, in order: the first that divides Q wastes no thread
(4 first: 6 input columns for 4 outputs at 3×3/1, 9 at /2, in few registers)."""


def default_tile(op: ops.Conv2dOp, sms: int) -> DirectTile:
    """Vector as wide as C and the taps allow; the first strip width of STRIP_COLUMNS that
    divides Q (else 4, or Q if narrower: the last strip is cut); rows per thread 1, 2 or 4, the
    most that still leave 16 CTAs of work per multiprocessor (reusing the taps over more
    rows only where the grid stays deep)."""
    n, _, _, c = tensor_shape(op.input.type)
    _, p, q, _ = tensor_shape(op.output.type)
    vector = widest_vector(op)
    columns = next((w for w in STRIP_COLUMNS if q % w == 0 and w * vector <= MAX_ACCUMULATORS), min(4, max(1, q)))
    rows = 1
    for candidate in (4, 2):
        threads = n * math.ceil(p / candidate) * math.ceil(q / columns) * (c // vector)
        if threads >= 16 * sms * BLOCK_THREADS:
            rows = candidate
            break
    return DirectTile(rows, columns, vector)


# ---------------------------------------------------------------------- instances


problem = conv_problem
"""The launcher's 15 integers, in the CUTLASS conv launchers' order."""


def launch_arguments(op: Operation) -> LaunchArguments:
    return conv_launch_arguments(op, kernel_name(op))


def _context(op: ops.Conv2dOp, tile: DirectTile) -> dict:
    n, h, w, c, _, r, s, p, q, pad_h, pad_w, sh, sw, dh, dw = problem(op)
    strips, row_groups = math.ceil(q / tile.columns), math.ceil(p / tile.rows)
    threads = n * row_groups * strips * (c // tile.vector)
    element = element_name(op.input)
    return {
        "problem": problem(op), "n": n, "h": h, "w": w, "c": c, "p": p, "q": q, "r": r, "s": s,
        "pad_h": pad_h, "pad_w": pad_w, "sh": sh, "sw": sw, "dh": dh, "dw": dw,
        "vector": tile.vector, "columns": tile.columns, "rows": tile.rows, "strips": strips, "row_groups": row_groups,
        "threads": threads, "block": BLOCK_THREADS, "grid": math.ceil(threads / BLOCK_THREADS),
        "element": compute_kernels.ELEMENTS[element], "vector_bytes": tile.vector * ELEMENT_BYTES[element],
        "index_t": "int" if max(n * h * w * c, n * p * q * c) < compute_kernels.INT_LIMIT else "long long",
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "empty": n * p * q * c == 0,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.Conv2dOp, DirectTile, "rows, columns, vector", "compute/depthwise_direct.cu.j2",
                    conv_reason, tile_reason, _context, one_launch=True)
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
