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

**The staged window** (a tile's `ahead`, 1 to 3; `staged_tile`, `staged_tiles`). The row
walk re-reads the input rows that consecutive output rows share, and a row's loads issue
only after the previous row's FMAs and stores, so a thread has bytes in flight part of
the time. The staged window copies each input row a thread needs once, by cp.async, into
the thread's own ring in shared memory (R + ahead × NEW rows of COLS words, read by no
other thread: no barrier), `ahead` output rows before its use: while row p computes, the
copies of rows p + 1 .. p + ahead are in flight, and they hold no registers. (A window in
registers was tried: ptxas sank its prefetch under the FMAs and grew past 200 registers.)
Output row p + 1 keeps R − SH/DH of row p's input rows where DH divides SH and copies the
rest (`window_rows`). Its vector is at least 4 bytes (cp.async's smallest copy) and its
ring at most MAX_SHARED_BYTES. The choice's three integers carry it as rows + AHEAD_STEP ×
ahead, so older choices keep meaning the row walk. The heuristic (`default_tile`) takes the
staged window for convs that move STAGED_MIN_BYTES or more, the row walk below.

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

import dataclasses
import math
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.generator import LaunchArguments
from boltir.backends.cuda.codegen.own_kernels import (
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
AHEADS = (0, 1, 2, 3)
"""A tile's `ahead`: 0 is the row walk (each output row loads its R input rows from global
memory); 1 to 3 the staged window, whose copies run that many output rows ahead."""
AHEAD_STEP = 100
"""A staged tile's first integer in its KernelChoice is rows + AHEAD_STEP × ahead (204:
4 rows, two ahead), so that the three integers of every older choice keep their meaning."""
MAX_SHARED_BYTES = 80 * 1024
"""A staged CTA's ring at most: two CTAs share a multiprocessor on the A100 and the H100."""


@dataclass(frozen=True)
class DirectTile(OwnTile):
    """One thread's work: `rows` output rows one after the other, each a strip of
    `columns` output pixels along W, `vector` channels wide; `ahead` (AHEADS) picks the
    row walk (0) or the staged window (1 to 3)."""

    rows: int
    columns: int
    vector: int
    ahead: int = 0

    def numbers(self) -> tuple[int, int, int]:
        """The KernelChoice's three integers: (rows + AHEAD_STEP × ahead, columns, vector),
        one thread's tile (the CTA is always BLOCK_THREADS threads)."""
        return self.rows + AHEAD_STEP * self.ahead, self.columns, self.vector

    @staticmethod
    def decode(rows: int, columns: int, vector: int) -> DirectTile:
        """The tile of a KernelChoice's three integers (as_tile's inverse)."""
        ahead, rows = divmod(rows, AHEAD_STEP) if rows >= AHEAD_STEP else (0, rows)
        return DirectTile(rows, columns, vector, ahead)

    @classmethod
    def of(cls, tile: Tile) -> DirectTile:
        return cls.decode(*tile.threadblock)

    def describe(self) -> str:
        return f"{self.rows}x{self.columns}x{self.vector}" + (f"s{self.ahead}" if self.ahead else "")


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
    if tile.ahead not in AHEADS:
        return f"a tile stages 0 to {AHEADS[-1]} rows ahead, not {tile.ahead}"
    if tile.ahead and tile.vector * ELEMENT_BYTES[element_name(op.input)] < 4:
        return f"a staged vector of {tile.vector} channels is under the 4 bytes cp.async copies"
    if tile.ahead and (staged := shared_bytes(op, tile)) > MAX_SHARED_BYTES:
        return (f"{tile.ahead} rows ahead over {tile.columns} columns of {tile.vector} channels take {staged} bytes "
                f"of shared memory, more than {MAX_SHARED_BYTES}")
    return None


def window_rows(op: ops.Conv2dOp) -> tuple[int, int]:
    """(KEEP, NEW): the input rows output row p + 1 shares with row p, and those it copies
    (the template's constants: sharing needs DH to divide SH)."""
    r, sh, dh = (problem(op)[i] for i in (5, 11, 13))
    keep = r - sh // dh if sh % dh == 0 and sh // dh < r else 0
    return keep, r - keep


def shared_bytes(op: ops.Conv2dOp, tile: DirectTile) -> int:
    """A CTA's shared memory: 0 for the row walk; a staged tile's ring of R + ahead × NEW
    input rows of COLS words for each of its BLOCK_THREADS threads."""
    if not tile.ahead:
        return 0
    r, s, sw, dw = (problem(op)[i] for i in (5, 6, 12, 14))
    cols = (tile.columns - 1) * sw + (s - 1) * dw + 1
    _, new = window_rows(op)
    return (r + tile.ahead * new) * cols * BLOCK_THREADS * tile.vector * ELEMENT_BYTES[element_name(op.input)]


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


def row_walk_tile(op: ops.Conv2dOp, sms: int) -> DirectTile:
    """The row walk's tile: vector as wide as C and the taps allow; the first strip width of
    STRIP_COLUMNS that divides Q (else 4, or Q if narrower: the last strip is cut); rows per
    thread 1, 2 or 4, the most that still leave 16 CTAs of work per multiprocessor (reusing
    the taps over more rows only where the grid stays deep)."""
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


STAGED_MIN_BYTES = 32 * 10**6
"""Convs that move this many bytes or more (input and output once) take the staged window:
on the H200 its tiles beat the row walk's on MobileNetV2's four depthwise convs of 36-96 MB
at batch 32 (2.5-3.6 TB/s against 2.2-2.6), and not on the 19 MB one at 28² (1.95 at best
against 1.83; bench/RESULTS.md)."""


def moved_bytes(op: ops.Conv2dOp) -> int:
    """Input and output once, the filter (what the kernel reads and writes at least)."""
    return sum(math.prod(tensor_shape(v.type)) * ELEMENT_BYTES[element_name(v)] for v in (op.input, op.filter, op.output))


def default_tile(op: ops.Conv2dOp, sms: int, staged: bool = True) -> DirectTile:
    """With `staged` (an sm90 build's: the measurements are the H200's), the staged window's
    tile (`staged_tile`) for convs moving STAGED_MIN_BYTES or more where it takes them; the
    row walk's (`row_walk_tile`) otherwise."""
    if staged and moved_bytes(op) >= STAGED_MIN_BYTES and (tile := staged_tile(op, sms)) is not None:
        return tile
    return row_walk_tile(op, sms)


STAGED_RING_BYTES = 72 * 1024
"""The ring staged_tile keeps under: three CTAs a multiprocessor on the H100 and H200 (two
on the A100), whose copies in flight (ahead × NEW rows of COLS words a thread) add up to
tens of KB."""


def staged_tile(op: ops.Conv2dOp, sms: int, ahead: int = 2) -> DirectTile | None:
    """The staged window's tile (None where its rules refuse every one: a vector under 4
    bytes): the widest vector, halved while the strip does not keep the ring under
    STAGED_RING_BYTES; strips of one column at stride 2 and more, two at stride 1; rows per
    thread 8, 4 or 2, the most that leave 4 CTAs per multiprocessor (about a wave and a
    half at three resident), else 1. On the H200 these were the fastest strips at both
    strides, and 8 rows the fastest at 112² (bench/RESULTS.md)."""
    n, _, _, c = tensor_shape(op.input.type)
    _, p, q, _ = tensor_shape(op.output.type)
    columns = min(max(1, q), 1 if op.prop_value("strides")[1] > 1 else 2)
    vector = widest_vector(op)
    while vector * ELEMENT_BYTES[element_name(op.input)] >= 4 and (
            shared_bytes(op, DirectTile(1, columns, vector, ahead)) > STAGED_RING_BYTES):
        vector //= 2
    if vector * ELEMENT_BYTES[element_name(op.input)] < 4:
        return None
    rows = 1
    for candidate in (8, 4, 2):
        ctas = math.ceil(n * math.ceil(p / candidate) * math.ceil(q / columns) * (c // vector) / BLOCK_THREADS)
        if ctas >= 4 * sms:
            rows = candidate
            break
    tile = DirectTile(rows, columns, vector, ahead)
    return tile if tile_reason(op, tile) is None else None


def staged_tiles(op: ops.Conv2dOp, sms: int) -> list[DirectTile]:
    """staged_tile and its neighbours to measure (those the rules take, distinct): one and
    three rows ahead, twice and half the rows, half the vector, strips of 1, 2 and 4 columns."""
    base = staged_tile(op, sms)
    if base is None:
        return []
    variants = [base, *(dataclasses.replace(base, ahead=a) for a in (1, 3)),
                *(dataclasses.replace(base, rows=r) for r in (base.rows * 2, base.rows // 2)),
                dataclasses.replace(base, vector=base.vector // 2),
                *(dataclasses.replace(base, columns=w) for w in (1, 2, 4))]
    return [t for t in dict.fromkeys(variants) if t.rows and tile_reason(op, t) is None]


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
        "empty": n * p * q * c == 0, "ahead": tile.ahead, "shared_bytes": shared_bytes(op, tile),
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.Conv2dOp, DirectTile.decode, f"rows + {AHEAD_STEP} x ahead, columns, vector",
                    "compute/depthwise_direct.cu.j2", conv_reason, tile_reason, _context, one_launch=True)
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
