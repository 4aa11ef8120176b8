"""Our Hopper GEMM for few rows with K split among a cluster's CTAs and their warp groups (family
`wgsplit_gemm`): `D = epilogue(A @ B)` for at most `cutlass_sm90.SMALL_M_ROWS` rows (the
batch-1 transformers' projections: 128 to 197 tokens), where each of CUTLASS's 64-row tiles
walks all of K alone on one SM.

    reason = gemm_reason(op)            # None where the kernel computes this op.gemm
    tile = default_tile(op, sms=132)    # the shape heuristic's SplitTile
    source = emit_translation_unit([op])

**Which ops.** `select-kernels` gives it an op.gemm through the tuner's candidates
(`candidates.wgsplit_gemm`), or under `split_gemms=wgsplit` (the default) where
`payoff_reason` allows (a K at least LONG_K times N, where it beat CUTLASS's tiles alone and
made BERT, GPT-2 and ViT at batch 1 faster, bench/RESULTS.md); a KernelChoice of family
"wgsplit_gemm", arch "sm90", its tile in `threadblock`. `lower-op-to-cutlass` leaves such an
op.gemm at the op level, and this generator computes it. `gemm_reason` says which GEMMs it takes: A row-major
(M × K), B the weight (N × K "col" or K × N "row", no batch dimensions), M of at most
SMALL_M_ROWS rows after a leading batch of A is folded into them, K a multiple of 8 (and N,
for a "row" weight: TMA's 16-byte strides), one element type (f16 or bf16) for every
operand, any `#op.epilogue`.

**The kernel** (`templates/compute/wgsplit_gemm.cu.j2`). A cluster of `ctas` CTAs computes one
`block_m` × `block_n` tile of D (64 or 128 rows: one warp group's wgmma covers either); each
CTA has a producer warp group and `warp_groups(op, tile)` consumer warp groups.
The tile's k-tiles (64 wide) are cut into ctas × split contiguous runs; run r of a CTA has its
own ring of shared-memory stages, loaded by TMA from producer warp r and multiplied by
consumer group r + 1 on wgmma, both through CUTLASS's sm90 collective (the ping-pong
mainloop's `load` and `mma` on a k-tile range). Every group leaves its partial tile in its
CTA's shared memory. The cluster's groups share out the tile's fragments. In a cluster the
CTA's groups add their partials, so that distributed shared memory (the epilogue's slowest
path) carries one partial a CTA rather than one a group, and store each sum into the shared
memory of the CTA that finishes its fragment (`st.async`, which needs no answer, its bytes
counted on that CTA's barrier: no cluster barrier before the epilogue, and no load across the
cluster); in one CTA, a barrier. Each group adds its fragments' partials (a CTA's each, or in
one CTA a group's each) in a fixed order (deterministic) and applies the epilogue (`compute_kernels.epilogue_function`,
the interpreter's `apply_epilogue`) once in f32. Before it waits on its predecessors (PDL) a
CTA prefetches its share of the weight into the L2, as the 3.x GEMMs of few rows do. With no
workspace and one launch, this is split-K without the serial fix-up through global memory that
cost CUTLASS's split-K more than it saved at M = 128 (bench/RESULTS.md).

**Why split K among CTAs.** At M = 128 every CUTLASS tile of 64 rows reads A's 64 rows and its
columns of B over all of K on one SM. Timed, CUTLASS's tiles and ours on one CTA take time in
step with the bytes each SM loads (BERT's FFN2 on 64 × 32 tiles: 590 KB into each of 48 SMs),
whatever their k-tile chains. Two CTAs on a tile's K halve that, over twice the SMs. Clusters
cost a fixed part that the bytes do not explain: a CTA waits for the slowest CTA's sums, and
loads across the cluster were the epilogue's slowest part until the sums were stored into
the CTA that finishes them instead. So bias and residual are loaded before the mainloop, the
epilogue issues all its loads before it uses any, and `bench/trace_wgsplit.py` times each
phase of every CTA (bench/RESULTS.md).

**Launcher ABI**: `skinny_gemm_kernels`' (the CUTLASS GEMM launchers'), with the same
return codes; the workspace size is 0. The unit includes CUTLASS's collective headers and
compiles for sm_90a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation

from boltir.backends.cuda.codegen import compute_kernels, cutlass_sm90
from boltir.backends.cuda.codegen.cutlass_common import batch_layout
from boltir.backends.cuda.codegen.generator import LaunchArguments
from boltir.backends.cuda.codegen.own_kernels import HALF_ELEMENTS, OwnTile, TiledFamily, element_name, same_element_reason
from boltir.backends.cuda.codegen.skinny_gemm_kernels import problem_of
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.target import get_target

FAMILY = "wgsplit_gemm"
FAMILIES: dict[type, str] = {ops.GemmOp: FAMILY}

CUTLASS_ELEMENTS = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t"}
TILE_K = 64
BLOCK_M = (64, 128)
"""A tile's rows: one wgmma row block, or two (one warp group computes both: every CTA of
the cluster then reads the weight's columns once where M ≤ 128)."""
DEFAULT_SHAPES = {"block_m": (64,), "block_n": (32, 64), "ctas": (1, 2, 4)}
"""What the shape heuristic gives a tile (the tiles timed when it became the default). The
128-row tiles and clusters of 8 are the tuner's candidates only: alone on BERT b1's FFN GEMMs
they were slower than the 64-row tiles (bench/RESULTS.md)."""
BLOCK_N = (32, 48, 64)
"""A tile's columns. 48 makes BERT b1's N = 768 sixteen tiles, whose k-tiles all fit in their
rings at once with clusters of four (64 rows) or eight (128 rows); those 128 CTAs are two
waves (`waves_of`), and were slower on the GPU (bench/RESULTS.md)."""
CTAS = (1, 2, 4, 8)
"""CTAs of a cluster that share a tile's K (1: no cluster; 8: the portable cluster's most)."""
SPLITS = (2, 3, 4)
"""Consumer warp groups: up to four, one ring each, beside the four producer warps."""
MAX_STAGES = 8
SHARED_LIMIT = 227 * 1024
"""An sm90 CTA's shared memory."""
BARRIER_BYTES = 16
"""A stage's two mbarriers (full and empty)."""
REGISTER_FILE = 65536
"""32-bit registers an SM holds: the kernel's one CTA shares them among its threads."""
REGISTER_HEADROOM = 48
"""Registers a consumer thread needs beside its accumulators (addresses, pipeline state, the
epilogue's partial sums and loads): a warp-group count whose threads would have fewer is not
used."""
MIN_K_TILES = 4
"""The warp groups split each run to at least this many k-tiles where K has them."""
LONG_K = 4
"""The heuristic gives the kernel GEMMs whose K is at least this many times N (payoff_reason)."""
TRACE_PHASES = False
"""Instances record each CTA's phases for bench/trace_wgsplit.py (set by it only; builds
never trace)."""


@dataclass(frozen=True)
class SplitTile(OwnTile):
    """A tile of D: `block_m` rows × `block_n` columns, its K split among `ctas` CTAs of a
    cluster. Each CTA splits its share among its consumer warp groups (`warp_groups`: a rule
    of the tile and the problem, as the rings' depth is)."""

    block_m: int
    block_n: int
    ctas: int

    def accumulators(self) -> int:
        """A consumer thread's f32 accumulators: its share of the tile."""
        return self.block_m * self.block_n // 128


# ------------------------------------------------------------- what is supported


def gemm_reason(op: Operation) -> str | None:
    """Why the kernel does not compute this op.gemm (whatever its tile), or None."""
    if not isinstance(op, ops.GemmOp):
        return f"'{op.name}' is not an op.gemm"
    if op.prop_value("layout_a") != "row":
        return "the kernel takes a row-major A (M x K)"
    if (reason := same_element_reason(op, HALF_ELEMENTS, "a", "A", ("b", "bias", "residual", "output"))) is not None:
        return reason
    if len(tensor_shape(op.b.type)) != 2:
        return "the weight has batch dimensions: the kernel folds only A's batch into its rows"
    if isinstance(batch_layout(op), str):
        return "the batch dimensions do not broadcast as one strided batch"
    batch, m, n, k = problem_of(op)
    if batch * m > cutlass_sm90.SMALL_M_ROWS:
        return f"{batch * m} rows of A: the kernel takes at most {cutlass_sm90.SMALL_M_ROWS}"
    if k % 8 or (op.prop_value("layout_b") == "row" and n % 8):
        return f"K = {k} and N = {n}: TMA takes rows of a multiple of 16 bytes"
    if k_tiles(op) < SPLITS[0]:
        return f"K = {k} is one k-tile of {TILE_K}: nothing to split among {SPLITS[0]} warp groups"
    return None


def k_tiles(op: ops.GemmOp) -> int:
    return math.ceil(problem_of(op)[3] / TILE_K)


def stage_bytes(block_m: int, block_n: int) -> int:
    return 2 * (block_m + block_n) * TILE_K + BARRIER_BYTES


def received_bytes(block_m: int, block_n: int, split: int, ctas: int) -> int:
    """A cluster CTA's buffer for the column pairs it finishes, as every CTA of the cluster
    summed them (f32 pairs for each of a group's 128 threads), and its barrier; none for one CTA."""
    if ctas == 1:
        return 0
    pairs = block_m * block_n // 256
    return ctas * math.ceil(pairs / (ctas * split)) * split * 128 * 8 + 8


def shared_bytes(block_m: int, block_n: int, split: int, stages: int, ctas: int = 1) -> int:
    """The rings' stages and barriers and a cluster CTA's received sums (a few hundred bytes
    of alignment aside, which the template's static_assert checks); a group's partial tile
    reuses its ring's stages."""
    return split * stages * stage_bytes(block_m, block_n) + received_bytes(block_m, block_n, split, ctas)


def most_stages(block_m: int, block_n: int, split: int, ctas: int = 1) -> int:
    """The deepest ring (at most MAX_STAGES) that leaves the tile's shared memory in bounds."""
    for stages in range(MAX_STAGES, 1, -1):
        if shared_bytes(block_m, block_n, split, stages, ctas) <= SHARED_LIMIT - 1024:
            return stages
    return 2


def group_reason(op: ops.GemmOp, tile: SplitTile, split: int) -> str | None:
    """Why `split` consumer warp groups a CTA cannot run the tile, or None."""
    runs = tile.ctas * split
    if k_tiles(op) < runs:
        return f"{k_tiles(op)} k-tiles of {TILE_K} cannot give each of {runs} warp groups one"
    if tile.ctas > 1 and k_tiles(op) % runs:
        # a cluster's rings of one index release each other's stages: their runs are equal
        return f"{k_tiles(op)} k-tiles of {TILE_K} do not split evenly among {runs} warp groups of a cluster"
    registers = min(255, REGISTER_FILE // (128 * (split + 1)) // 8 * 8)
    if tile.accumulators() + REGISTER_HEADROOM > registers:
        return (f"{split} warp groups leave a thread {registers} registers, under its {tile.accumulators()} "
                f"accumulators and {REGISTER_HEADROOM} more")
    stages = most_stages(tile.block_m, tile.block_n, split, tile.ctas)
    if shared_bytes(tile.block_m, tile.block_n, split, stages, tile.ctas) > SHARED_LIMIT - 1024:
        return f"{split} rings of two stages exceed a CTA's shared memory"
    if stages * (stage_bytes(tile.block_m, tile.block_n) - BARRIER_BYTES) < 4 * tile.block_m * tile.block_n:
        return f"a ring of {stages} stages cannot hold its group's partial tile"
    return None


def warp_groups(op: ops.GemmOp, tile: SplitTile) -> int | None:
    """The consumer warp groups of a CTA: the most (up to four) that leave each run at least
    MIN_K_TILES k-tiles, else the fewest that run the tile; None if no count does."""
    fitting = [split for split in SPLITS if group_reason(op, tile, split) is None]
    deep = [split for split in fitting if k_tiles(op) >= tile.ctas * split * MIN_K_TILES]
    return (deep[-1] if deep else fitting[0]) if fitting else None


def tile_reason(op: ops.GemmOp, tile: SplitTile) -> str | None:
    """Why `tile` cannot compute the op (which gemm_reason accepts), or None."""
    if tile.block_m not in BLOCK_M:
        return f"a tile has {' or '.join(map(str, BLOCK_M))} rows, not {tile.block_m}"
    if tile.block_n not in BLOCK_N:
        return f"a tile is {' or '.join(map(str, BLOCK_N))} columns wide, not {tile.block_n}"
    if tile.ctas not in CTAS:
        return f"K splits among {', '.join(map(str, CTAS))} CTAs of a cluster, not {tile.ctas}"
    if warp_groups(op, tile) is None:
        return group_reason(op, tile, SPLITS[0])
    return None


def ctas_of(op: ops.GemmOp, tile: SplitTile) -> int:
    batch, m, n, _ = problem_of(op)
    return math.ceil(batch * m / tile.block_m) * math.ceil(n / tile.block_n) * tile.ctas


def waves_of(op: ops.GemmOp, tile: SplitTile, sms: int) -> int:
    """The grid's waves: a CTA takes a multiprocessor (its rings fill the shared memory), and
    clusters of four or more leave some idle (`GpuTarget.concurrent_ctas`)."""
    return math.ceil(ctas_of(op, tile) / get_target("sm90").concurrent_ctas(tile.ctas, sms))


# ------------------------------------------------------------------ the heuristic


def ranked_tiles(op: ops.GemmOp, sms: int, block_ms: tuple[int, ...] = BLOCK_M,
                 ctas_options: tuple[int, ...] = CTAS, block_ns: tuple[int, ...] = BLOCK_N) -> list[SplitTile]:
    """The tiles that run the op, best first by the shape heuristic: those whose cluster grid
    fits one wave (`waves_of`) before those that do not; then 32 columns where CUTLASS's narrow tiles pay
    (`cutlass_sm90.narrow_columns_pay`, as for BERT b1's N = 768 GEMMs), else 64; then the
    fewest bytes of A and B an SM reads (a CTA's, (block_m + block_n) × K / ctas elements,
    times the waves). No tile has more rows than A's rows take (in 64-row blocks)."""
    batch, m, n, _ = problem_of(op)
    narrow = 32 if cutlass_sm90.narrow_columns_pay(batch * m, n, sms) else 64
    rows = math.ceil(batch * m / BLOCK_M[0]) * BLOCK_M[0]
    tiles = [tile for block_m in block_ms if block_m <= max(rows, BLOCK_M[0]) for block_n in block_ns for ctas in ctas_options
             if tile_reason(op, tile := SplitTile(block_m, block_n, ctas)) is None]

    def rank(tile: SplitTile) -> tuple:
        waves = waves_of(op, tile, sms)
        return waves > 1, tile.block_n != narrow, waves * (tile.block_m + tile.block_n) / tile.ctas

    return sorted(tiles, key=rank)


def payoff_reason(op: ops.GemmOp) -> str | None:
    """Why the heuristic leaves a GEMM it takes to CUTLASS's tiles (select-kernels
    split_gemms=wgsplit), or None: only a reduction at least LONG_K times N long pays (BERT
    b1's FFN2, K = 3072 against N = 768, faster than CUTLASS's 64 × 32 tile alone; its QKV,
    output projection and FFN1 were slower, bench/RESULTS.md)."""
    _, _, n, k = problem_of(op)
    if k < LONG_K * n:
        return f"K = {k} is under {LONG_K} × N = {LONG_K * n}: CUTLASS's tiles are faster"
    return None


def default_tile(op: ops.GemmOp, sms: int) -> SplitTile:
    """The shape heuristic's tile: `ranked_tiles`' first of DEFAULT_SHAPES."""
    return ranked_tiles(op, sms, DEFAULT_SHAPES["block_m"], DEFAULT_SHAPES["ctas"], DEFAULT_SHAPES["block_n"])[0]


# ---------------------------------------------------------------------- instances


def launch_arguments(op: Operation) -> LaunchArguments:
    return LaunchArguments(kernel_name(op), (op.a, op.b, op.bias, op.residual, op.output), problem_of(op), workspace=True)


def _context(op: ops.GemmOp, tile: SplitTile) -> dict:
    batch, m, n, k = problem_of(op)
    element = element_name(op.a)
    split = warp_groups(op, tile)
    return {
        "batch": batch, "m": m, "n": n, "k": k, "rows": batch * m,
        "block_m": tile.block_m, "block_n": tile.block_n, "ctas": tile.ctas, "split": split,
        "stages": most_stages(tile.block_m, tile.block_n, split, tile.ctas),
        "element": HALF_ELEMENTS[element], "cutlass_element": CUTLASS_ELEMENTS[element],
        "cutlass_layout_b": ("cutlass::layout::ColumnMajor" if op.prop_value("layout_b") == "col"
                             else "cutlass::layout::RowMajor"),
        "shared_limit": SHARED_LIMIT, "prefetch_max_bytes": cutlass_sm90.PREFETCH_MAX_BYTES,
        "epilogue": compute_kernels.epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "empty": batch * m * n == 0, "trace": TRACE_PHASES,
    }


# ------------------------------------------------------------- the generator protocol


TILED = TiledFamily(FAMILY, ops.GemmOp, SplitTile, "tile rows, tile columns, cluster CTAs", "compute/wgsplit_gemm.cu.j2",
                    gemm_reason, tile_reason, _context, arch="sm90")
# the module is the generator (host_program.GENERATORS, the tuner, KernelLibrary): TILED's methods
marked_tile, unsupported_reason, supports, computes = TILED.marked_tile, TILED.unsupported_reason, TILED.supports, TILED.computes
is_fallback, kernel_arch, instance_key, kernel_name = TILED.is_fallback, TILED.kernel_arch, TILED.instance_key, TILED.kernel_name
emit_instance, emit_translation_unit = TILED.emit_instance, TILED.emit_translation_unit
