"""Our GEMM for few rows (family `skinny_gemm`): `D = epilogue(A @ B)` with M of at most
`MAX_ROWS` rows (fully connected layers at batch 1, classifiers up to batch 32), the weight
streamed from DRAM at bandwidth, where CUTLASS's tiles leave most multiprocessors idle.

    reason = gemm_reason(op)            # None where the kernel computes this op.gemm
    tile = default_tile(op, sms=132)    # the shape heuristic's SkinnyTile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` chooses it (a KernelChoice of family "skinny_gemm", its
tile in `threadblock`) and `lower-op-to-cutlass` leaves such an op.gemm at the op level,
its choice attached: this generator computes every op.gemm so marked. `gemm_reason` says
which GEMMs it takes: A row-major ("row", M×K), B the N×K weight ("col": a Linear layer's),
M of at most `MAX_ROWS` rows after a leading batch of A is folded into them (B has no batch
dimensions), K a multiple of 8 (16-byte rows), one element type (f16 or bf16) for every
operand but the output, which may also be f32 (fuse-output-cast: a classifier's cast to
the model's f32 output, with the residual in the output's type), any `#op.epilogue` (bias,
activations, residual).

**The kernel.** The product runs on the tensor cores (mma.sync m16n8k16, f32 accumulation)
as Dᵀ = B·Aᵀ: the weight's rows are the MMA's 16 rows, A's rows its 8 columns (up to four
column blocks, for 32 rows). A CTA owns `weight_rows` (8 or 16) rows of the weight and
`warps` warps split K between them in chunks of 64: each lane loads 16 contiguous elements
of a row (four lanes: one 128-byte line), read once from DRAM with no L1 allocation; A's
matching elements come from L1/L2. Since the sum over K is the same in any order, a lane
feeds its own 16 elements to the MMA's K slots (a permutation of K that A and B share), so
no shuffle or shared-memory staging is needed. Each warp loads `unroll` chunks before it
multiplies (bytes in flight). The warps' partial sums meet in shared memory, are added in
warp order (deterministic), and the epilogue (`compute_kernels.epilogue_function`, the
interpreter's `apply_epilogue`) rounds once to the output type.

**Launcher ABI**: the CUTLASS GEMM launchers' (`cutlass_kernels.py`), so the host program,
`KernelLibrary` and the tuner's profiler call it alike:

    int NAME(const void *a, const void *b, const void *bias, const void *residual, void *d,
             int batch, int m, int n, int k, void *workspace, size_t workspace_bytes,
             cudaStream_t stream);
    size_t NAME_workspace_size(int batch, int m, int n, int k);   // 0: no workspace

Shapes are compile-time constants of the instance: the launcher returns 2002 when the
integers are not its problem, 2003 for a null bias or residual that the epilogue reads, 1
(misaligned) when A or B is not 16-byte aligned; else 0, or 1000 + the launch's
cudaError_t. The unit is plain CUDA (no CUTLASS), compiled with the sm80 record's flags.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen.cutlass_common import batch_layout
from boltir.backends.cuda.codegen.generator import LaunchArguments
from boltir.backends.cuda.codegen.own_kernels import OwnTile, TiledFamily, element_name, same_element_reason
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape

FAMILY = "skinny_gemm"
FAMILIES: dict[type, str] = {ops.GemmOp: FAMILY}

MAX_ROWS = 32
"""The most rows of A: four MMA column blocks (a batch-32 classifier, whose 1000 columns
CUTLASS's 64- and 128-wide tiles spread over 8 to 16 CTAs). Each CTA reads all of A from
the L2, 2 to 4 times the weight's bytes at 32 rows; past 16 the heuristic takes the kernel
only for narrow weights (`payoff_reason`)."""
FEW_ROWS = 16
"""Up to this many rows the heuristic gives the kernel any weight (`payoff_reason`)."""
CUTLASS_TILE_COLUMNS = 64
"""The narrowest CUTLASS GEMM tile's columns: N / 64 CTAs before CUTLASS splits K (the
heuristic's tile lists; a test keeps the two equal)."""
ELEMENTS = {"f16": ("__half", "f16"), "bf16": ("__nv_bfloat16", "bf16")}
"""Element type: (CUDA type, the mma.sync operand type)."""
OUTPUT_ELEMENTS = {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float"}
"""The output's (and residual's) CUDA type: A's, or f32."""
CHUNK = 64
"""K elements a warp takes per chunk (4 lanes × 16 of a weight row)."""
WEIGHT_ROWS = (8, 16)
WARPS = (2, 4, 8, 16)
UNROLLS = (1, 2, 4)
MAX_LOAD_REGISTERS = 64
"""A lane's registers of loads in flight at most (unroll × chunk): more would spill."""
SHARED_LIMIT = compute_kernels.SHARED_LIMIT


@dataclass(frozen=True)
class SkinnyTile(OwnTile):
    """A CTA's work: `weight_rows` rows of the weight (8 or 16), `warps` warps splitting K,
    each loading `unroll` chunks of 64 before it multiplies."""

    weight_rows: int
    warps: int
    unroll: int


# ------------------------------------------------------------- what is supported


def problem_of(op: ops.GemmOp) -> tuple[int, int, int, int]:
    """(batch, m, n, k) as the GEMM launchers take them: the output's leading dimensions'
    product, its last two, and K."""
    out = tensor_shape(op.output.type)
    m, n, k = op.problem
    return math.prod(out[:-2]), m, n, k


def gemm_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.gemm (whatever its tile), or None."""
    if not isinstance(op, ops.GemmOp):
        return f"'{op.name}' is not an op.gemm"
    if op.prop_value("layout_a") != "row" or op.prop_value("layout_b") != "col":
        return "the kernel takes a row-major A (M x K) and an N x K weight (layout_b = \"col\")"
    if (reason := same_element_reason(op, ELEMENTS, "a", "A", ("b", "bias"))) is not None:
        return reason
    if element_name(op.output) not in (element_name(op.a), "f32"):
        return f"the output has element type {element_name(op.output)}; the kernel writes A's type or f32"
    if op.residual is not None and element_name(op.residual) != element_name(op.output):
        return f"the residual has element type {element_name(op.residual)}, the output {element_name(op.output)}"
    if len(tensor_shape(op.b.type)) != 2:
        return "the weight has batch dimensions: the kernel folds only A's batch into its rows"
    if isinstance(batch_layout(op), str):
        return "the batch dimensions do not broadcast as one strided batch"
    batch, m, n, k = problem_of(op)
    if batch * m > MAX_ROWS:
        return f"{batch * m} rows of A: the kernel takes at most {MAX_ROWS}"
    if k % 8:
        return f"K = {k} is not a multiple of 8 (16-byte rows)"
    return None


def payoff_reason(op: ops.GemmOp, sms: int) -> str | None:
    """Why the heuristic leaves this GEMM (which gemm_reason accepts) to CUTLASS, or None.
    Past FEW_ROWS rows the kernel's CTAs each read all of A's rows from the L2 and hold
    one chunk of loads in flight (unroll 1): it pays only where CUTLASS's narrowest tiles
    leave most of the GPU idle, N / 64 CTAs under a quarter of the multiprocessors (the
    1000 columns of a batch-32 classifier), where CUTLASS must split K eight ways. With
    4096 columns CUTLASS's 64 CTAs, split twice, were as fast or faster (bench/RESULTS.md:
    VGG-16's fc6 and fc7 at batch 32)."""
    batch, m, n, _ = problem_of(op)
    if batch * m > FEW_ROWS and 4 * math.ceil(n / CUTLASS_TILE_COLUMNS) >= sms:
        return (f"{batch * m} rows and {n} columns: CUTLASS's {CUTLASS_TILE_COLUMNS}-column tiles fill a quarter "
                f"of the {sms} multiprocessors")
    return None


def tile_reason(op: ops.GemmOp, tile: SkinnyTile) -> str | None:
    """Why `tile` cannot compute the op (which gemm_reason accepts), or None."""
    if tile.weight_rows not in WEIGHT_ROWS:
        return f"a CTA takes {' or '.join(map(str, WEIGHT_ROWS))} weight rows, not {tile.weight_rows}"
    if tile.warps not in WARPS:
        return f"a CTA has {', '.join(map(str, WARPS))} warps, not {tile.warps}"
    if tile.unroll not in UNROLLS:
        return f"a warp loads {', '.join(map(str, UNROLLS))} chunks ahead, not {tile.unroll}"
    if tile.unroll * load_registers(tile.weight_rows, column_blocks(op)) > MAX_LOAD_REGISTERS:
        return f"{tile.unroll} chunks of loads exceed the {MAX_LOAD_REGISTERS} registers a lane keeps in flight"
    if shared_bytes(tile, column_blocks(op)) > SHARED_LIMIT:
        return f"the partial sums of {tile.warps} warps exceed {SHARED_LIMIT} bytes of shared memory"
    return None


def column_blocks(op: ops.GemmOp) -> int:
    """A's rows in blocks of 8 (the MMA's columns)."""
    batch, m, _, _ = problem_of(op)
    return max(1, math.ceil(batch * m / 8))


def load_registers(weight_rows: int, blocks: int) -> int:
    """A lane's 32-bit registers of one chunk's loads: 8 per weight row and per A row it holds."""
    return 8 * (weight_rows // 8 + blocks)


def shared_bytes(tile: SkinnyTile, blocks: int) -> int:
    return 4 * tile.warps * tile.weight_rows * blocks * 8


# ------------------------------------------------------------------ the heuristic


WARPS_PER_SM = 32
"""Warps the heuristic aims at per multiprocessor: with 64 bytes of the weight in flight per
lane and chunk, enough to cover DRAM's latency (16 was too few: bench/RESULTS.md, the
skinny rows of the sixth session)."""


def default_tile(op: ops.GemmOp, sms: int) -> SkinnyTile:
    """16 weight rows per CTA where that still gives a CTA to every multiprocessor (A read
    half as often), else 8; warps so that the GPU holds about WARPS_PER_SM warps per
    multiprocessor, and up to one warp per chunk of K (the first power of two that covers
    them: a single round of loads); the deepest unroll the registers allow."""
    _, _, n, k = problem_of(op)
    blocks = column_blocks(op)
    rows = 16 if math.ceil(n / 16) >= sms else 8
    ctas = math.ceil(n / rows)
    chunks = math.ceil(k / CHUNK)
    warps = WARPS[0]
    for candidate in WARPS:
        if candidate < max(WARPS[0] + 1, 2 * chunks) and ctas * candidate <= max(WARPS_PER_SM * sms, ctas * WARPS[0]):
            warps = candidate
    unroll = max(u for u in UNROLLS if u * load_registers(rows, blocks) <= MAX_LOAD_REGISTERS)
    return SkinnyTile(rows, warps, unroll)


# ---------------------------------------------------------------------- instances


def launch_arguments(op: Operation) -> LaunchArguments:
    return LaunchArguments(kernel_name(op), (op.a, op.b, op.bias, op.residual, op.output), problem_of(op), workspace=True)


def _context(op: ops.GemmOp, tile: SkinnyTile) -> dict:
    batch, m, n, k = problem_of(op)
    cuda_type, mma_type = ELEMENTS[element_name(op.a)]
    return {
        "batch": batch, "m": m, "n": n, "k": k, "rows": batch * m,
        "weight_rows": tile.weight_rows, "warps": tile.warps, "unroll": tile.unroll,
        "column_blocks": column_blocks(op), "full_rows": n % tile.weight_rows == 0,
        "grid": math.ceil(n / tile.weight_rows), "element": cuda_type, "mma_type": mma_type,
        "output_element": OUTPUT_ELEMENTS[element_name(op.output)],
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "empty": batch * m * n == 0,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.GemmOp, SkinnyTile, "weight rows, warps, unroll", "compute/skinny_gemm.cu.j2",
                    gemm_reason, tile_reason, _context)
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
