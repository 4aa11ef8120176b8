"""Kernel candidates for hardware-native search: for one op-level GEMM, conv or b2b op, a
small set of CUTLASS template instances worth measuring on the GPU (Bolt's "templated
search"), generated from CUTLASS's own rules and pruned by rules that cost nothing.

    found = candidates(op, arch="sm90", sms=132, cutlass=3)
    found.choices        # the heuristic's choice first, then the rest by rank
    found.pruned         # {"shared memory": 3, "waves": 12, ...}: what was dropped, and why

**Generation**, per target:

- 2.x (mma.sync, arch "sm80", which runs on sm90 too): the threadblock / warp tiles of
  CUTLASS's Sm80 kernels (K of 32 and 64), every stage count from 3 to 5 that fits the
  shared memory, the alignment the problem allows (the heuristic's), and split-k slices
  for grids under half a wave with a long K (GEMMs and convs, serial for convs; not with a
  residual block's epilogue).
- 3.x (wgmma + TMA, arch "sm90", on an sm90 target with `cutlass=3`): CTA tiles the
  builder takes (M 64 / 128 / 256, N 64 to 256), the cooperative and ping-pong schedules
  (warp-specialized for convs), clusters 1x1, 2x1, 1x2, and stream-K split-k for small
  grids (cooperative only); GEMM tiles whose last wave leaves SMs idle also on the
  stream-K scheduler ("streamk"). Stages are "as many as fit" (0); the implicit-GEMM
  conv's heuristic tile also with the stages that let two CTAs share a multiprocessor
  (`cutlass_sm90.occupancy_stages`: the conv kernel is not persistent).
- b2b ops: the fused kernel against its unfused pair (`UNFUSE`), whose halves are tuned
  as ops of their own.
- GEMMs with few rows that our kernel takes (`skinny_gemm_kernels`): its weight rows per
  CTA, warps and unroll around the heuristic's tile, then CUTLASS's candidates as if our
  kernel did not exist.
- Convs on few input channels that our kernel takes (`stem_conv_kernels`): its tiles
  around the heuristic's (other fragments per warp, half and double the columns), then
  CUTLASS's candidates as if our kernel did not exist.
- Convs with few output pixels that our split-reduction kernel takes, where the heuristic
  gives it them (`split_convs`; `splitk_conv_kernels`):
  its four tile shapes at the heuristic's split, half of it and 8, then CUTLASS's
  candidates as if our kernel did not exist.
- Stride-1 convs on 16-64 channels that our wgmma halo conv takes, where the heuristic
  gives it them (`halo_mode` set, as select-kernels' narrow_convs=halo does;
  `halo_conv_kernels`): the heuristic's tile, then its other schedules, one and two rows,
  half the columns; then CUTLASS's candidates as if our kernel did not exist.
- Memory-bound 1x1 convs with a narrow side that our streaming kernel takes, where the
  heuristic gives it them (`narrow_pointwise`; `stream_conv_kernels`): its tiles
  (`stream_conv_kernels.tiles`), then CUTLASS's candidates as if our kernel did not exist;
  likewise memory-bound small-window convs on few channels (`stream_windows`), whose next
  choice is the halo or stem conv's.
- Depthwise convs: our own kernel's (`depthwise_kernels`) strip widths and rows per
  thread around the heuristic's tile, then CUTLASS's direct conv's pixel tiles that fit its
  shared memory.
- Memory-bound 1x1 convs (stride 1, no padding, C or K at most 96; heuristic
  `pointwise_problem`), on sm90 with `cutlass=3`: besides the implicit-GEMM conv's, the
  persistent GEMM's tiles on the conv's buffers (`cutlass_sm90`'s pointwise convs): K
  tiles 32 and 64 for narrow C, N tiles covering K and the usual 64 / 128 / 256, M 64 /
  128 / 256 under both persistent schedules, each thread at most 128 accumulators.
- Other 1x1 convs whose output tiles are under half a wave (batch 1, deep layers): the
  cooperative GEMM on the conv's buffers split along C, 2 to 8 slices
  (`split_pointwise_gemms`), which the implicit-GEMM conv cannot do.
- GEMMs of at most cutlass_sm90.SMALL_M_ROWS rows on sm90 that our kernel with K split among a
  cluster's CTAs and their warp groups takes (`wgsplit_gemm_kernels`): the shape heuristic's
  best tiles (`wgsplit_gemm`). The heuristic gives it those with K at least 4 N under
  select-kernels' `split_gemms=wgsplit` (the default); it races here either way.

**Pruning**, before anything compiles: shared-memory fit; tiles that waste more than half
of the edge tiles; grids much less efficient than the best tile's (waves per SM, idle
multiprocessors); clusters wider than the grid; split-k where the grid already fills the
GPU. What is left is ranked by the heuristic's own score and cut to `MAX_PER_GENERATION`
of each generation, the heuristic's choice always first: dozens before pruning, about 8 to
16 after.

The candidates are deterministic (same op, same list): the search is repeatable, and a
database record can name them.
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
from boltir.backends.cuda.codegen.epilogues import plan_epilogue
from boltir.backends.cuda.select.choice import CUTLASS_3X_FAMILIES, UNFUSE, KernelChoice
from boltir.backends.cuda.select.heuristic import (
    HeuristicSelector,
    batches_operands,
    covering_columns,
    depthwise_pixels,
    element_bits,
    hopper_conv_problem,
    hopper_gemm_problem,
    hopper_tile,
    instruction_shape,
    pointwise_choice,
    pointwise_problem,
    pointwise_shape,
    tile_for_bits,
    tile_score,
)
from boltir.dialects import op as ops
from boltir.dialects.cutlass import Tile
from boltir.dialects.graph import tensor_shape
from boltir.target import get_target

MAX_PER_GENERATION = {"2.x": 8, "3.x": 10}
"""At most this many candidates of each CUTLASS generation survive pruning (2.x: 6 when
3.x candidates run beside them)."""
MAX_POINTWISE = 8
"""At most this many persistent-GEMM candidates of a memory-bound 1x1 conv, beside its
implicit-GEMM conv candidates."""

LEGACY_TILES: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...] = (
    ((256, 128, 32), (64, 64, 32)),
    ((128, 256, 32), (64, 64, 32)),
    ((256, 64, 32), (64, 64, 32)),
    ((64, 256, 32), (64, 64, 32)),
    ((128, 128, 32), (64, 64, 32)),
    ((128, 64, 32), (64, 32, 32)),
    ((64, 128, 32), (32, 64, 32)),
    ((64, 64, 32), (32, 32, 32)),
    ((128, 128, 64), (64, 64, 64)),
    ((128, 64, 64), (64, 32, 64)),
    ((64, 128, 64), (32, 64, 64)),
    ((64, 64, 64), (32, 32, 64)),
)
"""Threadblock and warp tiles of CUTLASS's Sm80 16-bit tensor-op kernels (a superset of the
heuristic's GEMM_TILES, in the order that breaks score ties)."""
LEGACY_STAGES = (3, 4, 5)

HOPPER_GEMM_SHAPES = (*((m, n, 64) for m in (64, 128, 256) for n in (64, 128, 192, 256) if m * n <= 256 * 128), (64, 32, 64))
"""The 3.x GEMM tiles the tuner may race. 64x32 doubles the CTAs of a small-M grid
(BERT's batch-1 GEMMs at M = 128: 64x64 tiles fill 24-96 of 132 SMs); on a full grid it
scores too low to be kept."""
HOPPER_CONV_SHAPES = ((64, 64, 64), (64, 128, 64), (128, 64, 64), (128, 128, 64), (64, 256, 64), (128, 256, 64))


def hopper_conv_shapes(k: int) -> tuple[tuple[int, int, int], ...]:
    """HOPPER_CONV_SHAPES, and 64- and 128-row tiles whose N covers K rounded to 16 where no
    64-, 128- or 256-wide tile does (RepVGG-A0's 48-channel 3x3s: a 64-wide tile pads a
    quarter of the products and stores away; its 192-channel ones: 128 + 128 pads a
    quarter, 64 x 3 reads each input pixel three times)."""
    cover = covering_columns(k, narrow=True)
    return HOPPER_CONV_SHAPES if cover is None else HOPPER_CONV_SHAPES + ((64, cover, 64), (128, cover, 64))
CLUSTERS = ((1, 1, 1), (2, 1, 1), (1, 2, 1))
SPLIT_K = (2, 4, 8)
SMALL_M_K_TILES = 4
"""A 3.x GEMM of at most cutlass_sm90.SMALL_M_ROWS rows whose grid is under half a wave may split K into
slices of this many K tiles (else 8): at M = 128 and K = 768 (BERT's batch-1 QKV and FFN1)
there is no split of 8 tiles a slice, and the tuner should race the split against the idle
SMs."""
MAX_ACCUMULATORS = 128
"""f32 accumulators per consumer thread (a warpgroup's share of the tile over its 128
threads) beyond which the tile spills."""

MIN_RELATIVE_EFFICIENCY = 0.5
"""A tile whose grid is less than half as efficient as the best tile's is pruned."""
SMALL_M_MIN_RELATIVE_EFFICIENCY = 0.25
"""The same for a 3.x GEMM of at most cutlass_sm90.SMALL_M_ROWS rows: there the grid score (busy SMs)
says least about the time, since each SM's share of the bytes sets it; a 128x64 tile split
eight ways scored just under half the 64x32 tile's at BERT's 128 x 768 x 3072."""
MAX_EDGE_WASTE = 0.5
"""A tile whose edge tiles pad away more than half of the work is pruned."""


@dataclass
class CandidateSet:
    """An op's candidates, best-ranked first (the heuristic's choice leads), and how many
    were generated and pruned, by rule."""

    choices: list[KernelChoice | str] = field(default_factory=list)
    generated: int = 0
    """Candidates before pruning: the kept ones and the pruned ones."""
    pruned: dict[str, int] = field(default_factory=dict)

    def prune(self, reason: str) -> None:
        self.pruned[reason] = self.pruned.get(reason, 0) + 1


@dataclass(frozen=True)
class _Ranked:
    score: float
    choice: KernelChoice


def generation(choice: KernelChoice | str) -> str:
    """"3.x" for a CUTLASS 3.x instance, "2.x" for the others (and for UNFUSE)."""
    return "3.x" if isinstance(choice, KernelChoice) and choice.arch == "sm90" and choice.family in CUTLASS_3X_FAMILIES else "2.x"


def _edge_use(m: int, n: int, tile_m: int, tile_n: int) -> float:
    return (m * n) / (math.ceil(m / tile_m) * tile_m * math.ceil(n / tile_n) * tile_n)


def _keep_best(found: CandidateSet, ranked: list[_Ranked], limit: int, m: int, n: int, batch: int, sms: int,
               first: KernelChoice | None, min_relative: float = MIN_RELATIVE_EFFICIENCY) -> list[KernelChoice]:
    """Prunes `ranked` by edge waste and relative grid efficiency (`min_relative` of the best
    score), then keeps the `limit` best (the heuristic's `first` always, in front)."""
    if not ranked:
        return [first] if first else []
    best = max(r.score for r in ranked)
    kept: list[_Ranked] = []
    for candidate in ranked:
        tb = candidate.choice.tile.threadblock
        if candidate.choice != first:
            if _edge_use(m, n, tb[0], tb[1]) < 1 - MAX_EDGE_WASTE:
                found.prune("edge waste")
                continue
            if candidate.score < min_relative * best:
                found.prune("waves")
                continue
        kept.append(candidate)
    kept.sort(key=lambda r: -r.score)
    # Breadth first: the best of each tile shape and schedule, then the runners-up, so a
    # short list still spans the shapes rather than one tile's stage counts.
    seen: set = set()
    leaders, rest = [], []
    for candidate in kept:
        shape = (candidate.choice.tile.threadblock, candidate.choice.kernel_schedule)
        (rest if shape in seen else leaders).append(candidate.choice)
        seen.add(shape)
    out = [first] if first else []
    for choice in leaders + rest:
        if choice not in out:
            out.append(choice)
    for _ in out[limit:]:
        found.prune("rank")
    return out[:limit]


def _split_score(score: float, tiles: int, split_k: int, sms: int) -> float:
    """A tile's score with its grid grown `split_k`-fold: the square root of the gain in
    busy multiprocessors (slices cost their reduction)."""
    return score * min(1.0, tiles * split_k / sms) ** 0.5 / min(1.0, tiles / sms) ** 0.5


def _split_k_options(tiles: int, k: int, tile_k: int, sms: int, min_k_tiles: int = 4) -> list[int]:
    """1, and the split-k slice counts worth trying: only for grids under half a wave,
    each slice at least `min_k_tiles` K tiles long."""
    if tiles * 2 > sms:
        return [1]
    return [1, *(slices for slices in SPLIT_K if k >= slices * tile_k * min_k_tiles)]


# --------------------------------------------------------------------------- 2.x


def legacy_tiles(a_bits: int, b_bits: int, arch: str, found: CandidateSet) -> list[Tile]:
    tiles = []
    for threadblock, warp in LEGACY_TILES:
        threadblock, warp = tile_for_bits(threadblock, warp, max(a_bits, b_bits))
        for stages in LEGACY_STAGES:
            tile = Tile(threadblock, warp, instruction_shape(max(a_bits, b_bits)), stages)
            if tile.shared_memory_bytes(a_bits, b_bits) > get_target(arch).shared_memory_bytes:
                found.prune("shared memory")
                continue
            tiles.append(tile)
    return tiles


def legacy_gemm(op: ops.GemmOp, base: KernelChoice, sms: int, limit: int, found: CandidateSet) -> list[KernelChoice]:
    m, n, k = op.problem
    batch = math.prod(tensor_shape(op.output.type)[:-2])
    bits = element_bits(op.a)
    splittable = batch == 1 and plan_epilogue(op.epilogue).kind != "residual_block"
    batched = batches_operands(op)
    ranked = []
    for tile in legacy_tiles(bits, element_bits(op.b), "sm80", found):
        if batched and tile.threadblock[0] != tile.threadblock[1]:
            found.prune("batched non-square 2.x tile")  # they fail to launch on the H200 (selection.BATCHED_GEMM_TILES)
            continue
        score, tiles = tile_score(m, n, batch, tile.threadblock[0], tile.threadblock[1], sms)
        # deeper pipelines and K = 64 tiles hide more latency; a small bonus orders them
        score *= 1 + 0.01 * tile.stages + 0.02 * (tile.threadblock[2] == 64)
        for split_k in _split_k_options(tiles, k, tile.threadblock[2], sms) if splittable else [1]:
            choice = dataclasses.replace(base, tile=tile, split_k=split_k)
            ranked.append(_Ranked(_split_score(score, tiles, split_k, sms), choice))
    return _keep_best(found, ranked, limit, m, n, batch, sms, base)


def legacy_conv(op: ops.Conv2dOp, base: KernelChoice, sms: int, limit: int, found: CandidateSet) -> list[KernelChoice]:
    n, _, _, c = tensor_shape(op.input.type)
    k, r, s, _ = tensor_shape(op.filter.type)
    _, p, q, _ = tensor_shape(op.output.type)
    bits = element_bits(op.input)
    # serial split-k (slices reduced through the output, the activation on the last one):
    # not with a residual block's broadcast epilogue, nor the narrow-channel iterators
    splittable = (plan_epilogue(op.epilogue).kind != "residual_block"
                  and base.iterator_algorithm not in ("fixed_channels", "few_channels"))
    ranked = []
    for tile in legacy_tiles(bits, element_bits(op.filter), "sm80", found):
        if base.iterator_algorithm in ("fixed_channels", "few_channels") and tile.threadblock[2] != 32:
            found.prune("iterator")  # the narrow-channel iterators are built for K tiles of 32
            continue
        score, tiles = tile_score(n * p * q, k, 1, tile.threadblock[0], tile.threadblock[1], sms)
        score *= 1 + 0.01 * tile.stages + 0.02 * (tile.threadblock[2] == 64)
        for split_k in _split_k_options(tiles, c * r * s, tile.threadblock[2], sms) if splittable else [1]:
            choice = dataclasses.replace(base, tile=tile, split_k=split_k)
            ranked.append(_Ranked(_split_score(score, tiles, split_k, sms), choice))
    return _keep_best(found, ranked, limit, n * p * q, k, 1, sms, base)


def depthwise(op: ops.Conv2dOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    k, r, s, _ = tensor_shape(op.filter.type)
    largest = depthwise_pixels(r, s, op.prop_value("strides"), op.prop_value("dilations"), element_bits(op.input),
                               base.tile.threadblock[1])
    out = [base]
    for pixels in (64, 32, 16):
        if pixels > largest:
            found.prune("shared memory")
            continue
        tile = dataclasses.replace(base.tile, threadblock=(pixels, *base.tile.threadblock[1:]))
        choice = dataclasses.replace(base, tile=tile)
        if choice not in out:
            out.append(choice)
    return out


def _own_tiles(op: Operation, base: KernelChoice, variants: list, tile_reason, found: CandidateSet) -> list[KernelChoice]:
    """`base` with each distinct tile of `variants` (one of our own kernels' tile classes)
    that its family's `tile_reason` accepts, in order; the others count as pruned."""
    out = []
    for variant in dict.fromkeys(variants):
        if tile_reason(op, variant) is not None:
            found.prune("registers")
            continue
        out.append(dataclasses.replace(base, tile=variant.as_tile()))
    return out


MAX_SPLITK = 6
"""At most this many of our split-reduction conv's tiles, beside CUTLASS's."""


MAX_WGSPLIT = 8
"""At most this many of our warp-group-split GEMM's tiles, beside CUTLASS's."""


def wgsplit_gemm(op: ops.GemmOp, sms: int, found: CandidateSet) -> list[KernelChoice]:
    """Our GEMM with K split among a cluster's CTAs and their warp groups, where it takes the
    op: the heuristic's tile, then the shape heuristic's best tiles of either row count and
    every width (`wgsplit_gemm_kernels.ranked_tiles`)."""
    if wgsplit_gemm_kernels.gemm_reason(op) is not None:
        return []
    tile = wgsplit_gemm_kernels.default_tile(op, sms)
    variants = [tile, *wgsplit_gemm_kernels.ranked_tiles(op, sms)]
    base = KernelChoice(wgsplit_gemm_kernels.FAMILY, "sm90", tile.as_tile(), (8, 8, 8))
    return _own_tiles(op, base, variants, wgsplit_gemm_kernels.tile_reason, found)[:MAX_WGSPLIT]


def splitk_conv(op: ops.Conv2dOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    """Our split-reduction conv's tiles: the heuristic's, then each tile shape at its split,
    half of it and 8 (those its rules take)."""
    tile = splitk_conv_kernels.SplitTile.of(base.tile)
    variants = [tile]
    for block_m, block_n in ((64, 64), (64, 32), (32, 64), (32, 32)):
        variants += [splitk_conv_kernels.SplitTile(block_m, block_n, split)
                     for split in (tile.split, max(1, tile.split // 2), splitk_conv_kernels.MAX_SPLIT)]
    return _own_tiles(op, base, variants, splitk_conv_kernels.tile_reason, found)[:MAX_SPLITK]


MAX_HALO = 9
"""At most this many of our halo conv's tiles, beside CUTLASS's (the eight before TMA
patches, and the heuristic's tile with its patches the other way)."""


def halo_conv(op: ops.Conv2dOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    """Our halo conv's tiles: the heuristic's, then the same with its patches the other way
    (TMA or every thread's cp.async), its other schedules (modes), its other
    patch ring (two or three buffers), one and two rows, three and four warpgroups
    (`halo_conv_kernels.more_warps_tiles`: more warps a multiprocessor in the same shared
    memory), and half the columns (those its rules take)."""
    tile = halo_conv_kernels.HaloTile.of(base.tile)
    variants = [tile, dataclasses.replace(tile, tma=not tile.tma)]
    variants += [dataclasses.replace(tile, mode=mode) for mode in halo_conv_kernels.TUNED_MODES]
    variants += [dataclasses.replace(tile, patches=patches) for patches in halo_conv_kernels.PATCHES if patches != tile.patches]
    variants += [dataclasses.replace(tile, rows=rows) for rows in halo_conv_kernels.ROWS
                 if rows not in halo_conv_kernels.MORE_WARPS_ROWS]
    variants += halo_conv_kernels.more_warps_tiles(
        op, mode=tile.mode if tile.mode in halo_conv_kernels.MORE_WARPS_MODES else halo_conv_kernels.DEFAULT_MODE)
    variants.append(dataclasses.replace(tile, columns=halo_conv_kernels.half_columns(tile)))
    return _own_tiles(op, base, variants, halo_conv_kernels.tile_reason, found)[:MAX_HALO]


MAX_DIRECT_DEPTHWISE = 8
"""At most this many of our depthwise kernel's tiles, beside CUTLASS's."""


def direct_depthwise(op: ops.Conv2dOp, base: KernelChoice, found: CandidateSet, sms: int) -> list[KernelChoice]:
    """Our kernel's tiles: the heuristic's, then strips of 2, 4 and 8 columns, then 1, 2
    and 4 rows per thread (those its rules take: taps and accumulators in registers, the
    staged window's ring); where the heuristic's is the staged window's, the row walk's
    tile and its strips race it too."""
    tile = depthwise_kernels.DirectTile.of(base.tile)
    variants = [tile]
    walk = depthwise_kernels.row_walk_tile(op, sms) if tile.ahead else None
    if walk is not None:
        variants.append(walk)
    for each in (tile, walk) if walk is not None else (tile,):
        variants += [dataclasses.replace(each, columns=columns) for columns in (2, 4, 8)]
    variants += [dataclasses.replace(tile, rows=rows) for rows in (1, 2, 4)]
    return _own_tiles(op, base, variants, depthwise_kernels.tile_reason, found)[:MAX_DIRECT_DEPTHWISE]


MAX_DEPTHWISE_POINTWISE = 8
"""At most this many of our depthwise + 1×1 kernel's tiles (nothing else computes its op)."""


def depthwise_pointwise(op: ops.DepthwisePointwiseConv2dOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    """Our depthwise + 1×1 kernel's tiles: the heuristic's, then the other row counts,
    columns and warps (those its rules take)."""
    tile = depthwise_pointwise_kernels.PairTile.of(base.tile)
    variants = [tile]
    variants += [dataclasses.replace(tile, rows=rows) for rows in depthwise_pointwise_kernels.ROWS]
    variants += [dataclasses.replace(tile, columns=columns) for columns in depthwise_pointwise_kernels.COLUMNS]
    variants += [dataclasses.replace(tile, warps=warps) for warps in depthwise_pointwise_kernels.WARPS]
    return _own_tiles(op, base, variants, depthwise_pointwise_kernels.tile_reason, found)[:MAX_DEPTHWISE_POINTWISE]


MAX_POINTWISE = 6
"""At most this many of our streaming conv's tiles, beside the next choice's."""


def stream_conv(op: ops.Conv2dOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    """Our streaming conv's tiles (`stream_conv_kernels.tiles`: the heuristic's
    first), as choices like `base`."""
    variants = stream_conv_kernels.tiles(op)
    chosen = stream_conv_kernels.StreamTile.of(base.tile)
    variants = [chosen] + [tile for tile in variants if tile != chosen]
    return _own_tiles(op, base, variants, stream_conv_kernels.tile_reason, found)[:MAX_POINTWISE]


MAX_SKINNY = 6
"""At most this many of our few-rows GEMM's tiles, beside CUTLASS's."""


def skinny_gemm(op: ops.GemmOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    """Our kernel's tiles: the heuristic's, then the other weight-row count, half and twice
    the warps, and shallower unrolls (those its rules take)."""
    tile = skinny_gemm_kernels.SkinnyTile.of(base.tile)
    variants = [tile, dataclasses.replace(tile, weight_rows=24 - tile.weight_rows)]
    variants += [dataclasses.replace(tile, warps=warps) for warps in (tile.warps // 2, tile.warps * 2)]
    variants += [dataclasses.replace(tile, unroll=unroll) for unroll in (tile.unroll // 2, 1)]
    return _own_tiles(op, base, variants, skinny_gemm_kernels.tile_reason, found)[:MAX_SKINNY]


MAX_STEM = 5
"""At most this many of our few-channels conv's tiles, beside CUTLASS's."""


def stem_conv(op: ops.Conv2dOp, base: KernelChoice, found: CandidateSet) -> list[KernelChoice]:
    """Our kernel's tiles: the heuristic's, then 1, 2 and 4 fragments per warp over as many
    pixels, then half and twice the columns (those its rules take)."""
    tile = stem_conv_kernels.StemTile.of(base.tile)
    q = tensor_shape(op.output.type)[2]
    variants = [tile]
    for fragments in (1, 2, 4):
        pixels = stem_conv_kernels.WARPS * fragments * 16
        columns = min(tile.columns, pixels)
        variants.append(stem_conv_kernels.StemTile(max(1, pixels // columns), columns, fragments))
    for columns in (tile.columns // 2, min(q, tile.columns * 2)):
        pixels = stem_conv_kernels.WARPS * tile.warp_fragments * 16
        variants.append(dataclasses.replace(tile, rows=max(1, pixels // max(columns, 1)), columns=max(columns, 1)))
    return _own_tiles(op, base, variants, stem_conv_kernels.tile_reason, found)[:MAX_STEM]


# --------------------------------------------------------------------------- 3.x


def _hopper_ranked(shapes, schedules_for, rows: int, n: int, k: int, count: int, sms: int, found: CandidateSet,
                   family: str, split: bool, base: KernelChoice) -> list[_Ranked]:
    ranked = []
    for shape in shapes:
        tiles_m, tiles_n = math.ceil(rows / shape[0]), math.ceil(n / shape[1])
        score, tiles = tile_score(rows, n, count, shape[0], shape[1], sms)
        wave_use = tiles / (math.ceil(tiles / sms) * sms)  # the busy share of the last wave's SMs, over the grid
        for schedule in schedules_for(shape):
            if (shape[0] // 2 if schedule == "cooperative" else shape[0]) * shape[1] // 128 > MAX_ACCUMULATORS:
                found.prune("accumulators")  # it spills (a 128x256 ping-pong tile: bench/RESULTS.md)
                continue
            for cluster in CLUSTERS:
                if cluster[0] > tiles_m or cluster[1] > tiles_n:
                    found.prune("cluster wider than the grid")
                    continue
                if cluster != (1, 1, 1) and tiles < sms:
                    found.prune("cluster on a partial wave")
                    continue
                slice_k_tiles = SMALL_M_K_TILES if rows <= cutlass_sm90.SMALL_M_ROWS else 8
                splits = (_split_k_options(tiles, k, shape[2], sms, slice_k_tiles)
                          if split and schedule == "cooperative" and count == 1 else [1])
                # a cluster's multicast halves one operand's traffic: a small bonus on big grids
                bonus = (1 + 0.03 * (cluster != (1, 1, 1))) * (1 + 0.02 * (schedule == "pingpong" and shape[0] == 64))
                for split_k in splits:
                    split_score = _split_score(score * bonus, tiles, split_k, sms)
                    choice = dataclasses.replace(base, family=family, arch="sm90", tile=hopper_tile(shape, schedule),
                                                 alignment=(8, 8, 8), split_k=split_k, cluster=cluster, kernel_schedule=schedule)
                    ranked.append(_Ranked(split_score, choice))
                if (split and schedule == "cooperative" and count == 1 and tiles >= sms and wave_use < STREAM_K_BELOW_WAVE_USE
                        and k >= STREAM_K_MIN_K_TILES * shape[2]):
                    choice = dataclasses.replace(base, family=family, arch="sm90", tile=hopper_tile(shape, "streamk"),
                                                 alignment=(8, 8, 8), split_k=1, cluster=cluster, kernel_schedule="streamk")
                    ranked.append(_Ranked(_stream_k_score(score * bonus, wave_use), choice))
    return ranked


STREAM_K_BELOW_WAVE_USE = 0.9
"""A grid of a wave or more whose last wave leaves more than a tenth of the SMs idle (over
the whole grid) is tried on the stream-K scheduler too, which shares the left-over tiles'
K loops among all SMs. Smaller grids are split-k's."""
STREAM_K_MIN_K_TILES = 4
STREAM_K_FIXUP = 0.92
"""The score's guess at what stream-K's partial-tile reduction costs (workspace traffic and
waits), relative to full waves of whole tiles."""


def _stream_k_score(score: float, wave_use: float) -> float:
    """A tile's score with its partial wave made whole by stream-K, less the fix-up."""
    return score / wave_use * STREAM_K_FIXUP


def hopper_gemm(op: ops.GemmOp, base: KernelChoice, sms: int, found: CandidateSet) -> list[KernelChoice]:
    rows, n, k, count = hopper_gemm_problem(op)

    def schedules(shape):
        return ("cooperative", "pingpong") if shape[0] == 128 else ("cooperative",) if shape[0] == 256 else ("pingpong",)

    ranked = _hopper_ranked(HOPPER_GEMM_SHAPES, schedules, rows, n, k, count, sms, found, "gemm", True, base)
    first = base if base.arch == "sm90" else None
    relative = SMALL_M_MIN_RELATIVE_EFFICIENCY if rows * count <= cutlass_sm90.SMALL_M_ROWS else MIN_RELATIVE_EFFICIENCY
    return _keep_best(found, ranked, MAX_PER_GENERATION["3.x"], rows, n, count, sms, first, relative)


def hopper_conv(op: ops.Conv2dOp, base: KernelChoice, sms: int, found: CandidateSet) -> list[KernelChoice]:
    pixels, _, k = hopper_conv_problem(op)
    template = dataclasses.replace(base, iterator_algorithm="optimized", swizzle=1)
    ranked = _hopper_ranked(hopper_conv_shapes(k), lambda shape: ("warpspecialized",), pixels, k, 0, 1, sms, found,
                            "conv2d_fprop", False, template)
    first = base if base.arch == "sm90" else None
    kept = _keep_best(found, ranked, MAX_PER_GENERATION["3.x"], pixels, k, 1, sms, first)
    if first is not None and first.tile.stages == 0 and (stages := cutlass_sm90.occupancy_stages(first.tile.threadblock)):
        # the heuristic's tile with two CTAs per multiprocessor (as many stages as leave room)
        two = dataclasses.replace(first, tile=dataclasses.replace(first.tile, stages=stages))
        kept.insert(kept.index(first) + 1 if first in kept else 0, two)
        while len(kept) > MAX_PER_GENERATION["3.x"]:
            kept.pop()
            found.prune("rank")
    return kept


# ------------------------------------------------- 1x1 convs as persistent GEMMs


POINTWISE_SCHEDULES = (("pingpong", 64), ("pingpong", 128), ("cooperative", 128), ("cooperative", 256))
"""(schedule, tile M) of the persistent GEMM candidates of a pointwise conv; the
cooperative ones also split K where the grid is under half a wave."""


def pointwise_tiles(c: int, k: int) -> list[tuple[int, int, int]]:
    """The CTA tiles worth timing for a pointwise conv of C -> K channels: N covering K
    (rounded to 16) and 64 / 128 / 256 where they pad K by at most half; K 32 and 64 for
    C up to 32, else 64."""
    covering = -(-k // 16) * 16
    widths = sorted({n for n in (covering, 64, 128, 192, 256) if n <= 256 and k / (math.ceil(k / n) * n) >= 1 - MAX_EDGE_WASTE})
    depths = (32, 64) if c <= 32 else (64,)
    return [(m, n, depth) for m in (64, 128, 256) for n in widths for depth in depths]


def pointwise_gemms(op: ops.Conv2dOp, first: KernelChoice, sms: int, found: CandidateSet) -> list[KernelChoice]:
    pixels, c, k = pointwise_problem(op)
    ranked = []
    for m, n, depth in pointwise_tiles(c, k):
        for schedule, tile_m in POINTWISE_SCHEDULES:
            if tile_m != m:
                continue
            if (m // 2 if schedule == "cooperative" else m) * n // 128 > MAX_ACCUMULATORS:
                found.prune("accumulators")
                continue
            score, tiles = tile_score(pixels, k, 1, m, n, sms)
            # a K tile that covers C without padding moves no zeros through shared memory
            score *= 1 + 0.02 * (depth >= c) + 0.01 * (schedule == "pingpong")
            # split-k for grids under half a wave (batch-1 1x1 convs of few pixels, long C)
            for split_k in _split_k_options(tiles, c, depth, sms, 8) if schedule == "cooperative" else [1]:
                choice = dataclasses.replace(pointwise_choice((m, n, depth), schedule), split_k=split_k)
                ranked.append(_Ranked(_split_score(score, tiles, split_k, sms), choice))
    leader = first if first.arch == "sm90" and first.kernel_schedule != "warpspecialized" else None
    return _keep_best(found, ranked, MAX_POINTWISE, pixels, k, 1, sms, leader)


def split_pointwise_gemms(op: ops.Conv2dOp, sms: int, found: CandidateSet) -> list[KernelChoice]:
    """A 1x1 conv (stride 1, no padding) of any channels whose output tiles are under half
    a wave (batch 1, few pixels, long C): its GEMM on the cooperative kernel, split along C.
    The implicit-GEMM conv cannot split, so each of its few CTAs walks all of C alone."""
    problem = pointwise_shape(op)
    if problem is None:
        return []
    pixels, c, k = problem
    ranked = []
    for n in (64, 128):
        score, tiles = tile_score(pixels, k, 1, 128, n, sms)
        for split_k in _split_k_options(tiles, c, 64, sms, 4)[1:]:
            choice = dataclasses.replace(pointwise_choice((128, n, 64), "cooperative"), split_k=split_k)
            ranked.append(_Ranked(_split_score(score, tiles, split_k, sms), choice))
    ranked.sort(key=lambda r: -r.score)
    for _ in ranked[MAX_SPLIT_POINTWISE:]:
        found.prune("rank")
    return [r.choice for r in ranked[:MAX_SPLIT_POINTWISE]]


MAX_SPLIT_POINTWISE = 4


# --------------------------------------------------------------------------- entry


def _spread(choices: list, count: int) -> list:
    """`count` of `choices` taken in turn from each kind (family and CUTLASS generation),
    each kind's in its own order: a bounded search still races every kind it can afford,
    the heuristic's choice (the first) first."""
    kinds: dict[tuple, list] = {}
    for choice in choices:
        kind = (choice.family, generation(choice)) if isinstance(choice, KernelChoice) else (choice,)
        kinds.setdefault(kind, []).append(choice)
    kept: list = []
    while len(kept) < count:
        for queue in kinds.values():
            if queue and len(kept) < count:
                kept.append(queue.pop(0))
    return kept


def candidates(op: Operation, arch: str, sms: int = 0, cutlass: int = 3, split_convs: bool = True,
               halo_mode: int | None = halo_conv_kernels.DEFAULT_MODE, *, heuristic: HeuristicSelector | None = None,
               at_most: int | None = None) -> CandidateSet:
    """The candidates of one op-level GEMM, conv or b2b op for an `arch` target on a GPU of
    `sms` multiprocessors (0: the arch's flagship), newest generation `cutlass`;
    `split_convs`: our split-reduction conv races too where the heuristic gives it the op
    (False: as if it did not exist, select-kernels' few_pixels=cutlass); `halo_mode`: our
    halo conv races too, from that mode, where the heuristic gives it the op (None: as if
    it did not exist, select-kernels' narrow_convs=cutlass).

    `heuristic`, when given, is the configured selector of the build (select-kernels'
    options: depthwise, small_m, few_channels, few_pixels, narrow_convs, conv_ctas) and
    replaces `sms`, `cutlass`, `split_convs` and `halo_mode`: the search then starts from
    exactly the choice that build's heuristic makes. `at_most` keeps that many candidates,
    the heuristic's choice first and then each kind in turn (`_spread`): a bounded search
    whose compile cost is known."""
    if heuristic is None:
        heuristic = HeuristicSelector(sms=sms, cutlass=cutlass, split_convs=split_convs,
                                      halo_convs=halo_mode is not None, halo_mode=halo_mode or halo_conv_kernels.DEFAULT_MODE)
    sms = heuristic.sms or sms or get_target(arch).multiprocessors
    heuristic = dataclasses.replace(heuristic, sms=sms, notes=[])
    cutlass = heuristic.cutlass
    found = CandidateSet()
    first = heuristic.select(op, arch)
    ours, leader = [], first
    # each of our kernels the heuristic gives the op: its tiles, then the choice the
    # heuristic would have made without it (another of ours, or CUTLASS's)
    # a small-window conv the streaming conv takes: its tiles, then the halo or stem conv's
    window = isinstance(op, ops.Conv2dOp) and math.prod(tensor_shape(op.filter.type)[1:3]) > 1
    streams = ((stream_conv_kernels.FAMILY, stream_conv, "stream_windows"),) if window else ()
    for family, generate, switch in (*streams, (halo_conv_kernels.FAMILY, halo_conv, "halo_convs"),
                                     (skinny_gemm_kernels.FAMILY, skinny_gemm, "skinny_gemms"),
                                     (wgsplit_gemm_kernels.FAMILY, lambda op, _, found: wgsplit_gemm(op, sms, found),
                                      "split_gemms"),
                                     (stem_conv_kernels.FAMILY, stem_conv, "stem_convs"),
                                     (splitk_conv_kernels.FAMILY, splitk_conv, "split_convs"),
                                     (stream_conv_kernels.FAMILY, stream_conv, "narrow_pointwise")):
        if isinstance(first, KernelChoice) and first.family == family:
            ours += generate(op, first, found)
            heuristic = dataclasses.replace(heuristic, **{switch: False})
            first = heuristic.select(op, arch)
    hopper = arch == "sm90" and cutlass >= 3
    if isinstance(op, ops.DepthwisePointwiseConv2dOp):  # only our kernel computes it: its tiles
        found.choices = depthwise_pointwise(op, first, found)
        found.generated = len(found.choices) + sum(found.pruned.values())
        return found
    if isinstance(op, ops.B2bGemmOp | ops.B2bConv2dOp):
        found.choices = [first] if first == UNFUSE else [first, UNFUSE]
        found.generated = len(found.choices)
        return found
    legacy = first if generation(first) == "2.x" else dataclasses.replace(
        heuristic, cutlass=2, skinny_gemms=False, stem_convs=False).select(op, arch)
    limit = MAX_PER_GENERATION["2.x"] - (2 if hopper else 0)
    if isinstance(op, ops.GemmOp):
        choices = legacy_gemm(op, legacy, sms, limit, found)
        if hopper and hopper_gemm_problem(op) is not None:
            # our warp-group-split GEMM's tiles, unless the heuristic's choice already raced them
            raced = any(choice.family == wgsplit_gemm_kernels.FAMILY for choice in ours)
            choices = hopper_gemm(op, first, sms, found) + ([] if raced else wgsplit_gemm(op, sms, found)) + choices
    elif legacy.family == "depthwise_conv2d_fprop":
        choices = depthwise(op, legacy, found)
    elif legacy.family == depthwise_kernels.FAMILY:
        choices = direct_depthwise(op, legacy, found, sms) + depthwise(op, heuristic.cutlass_depthwise(op, "sm80"), found)
    else:
        choices = legacy_conv(op, legacy, sms, limit, found)
        if hopper and hopper_conv_problem(op) is not None:
            choices = hopper_conv(op, first, sms, found) + choices
        if hopper and pointwise_problem(op) is not None:
            choices = pointwise_gemms(op, first, sms, found) + choices
        elif hopper:
            choices = split_pointwise_gemms(op, sms, found) + choices
    # the heuristic's own choice leads, so an empty search still has the heuristic's answer
    choices = ours + choices
    choices.sort(key=lambda choice: choice != leader)
    found.choices = list(dict.fromkeys(choices))
    found.generated = len(found.choices) + sum(found.pruned.values())
    if at_most is not None and len(found.choices) > at_most:
        found.pruned["beyond the search's limit"] = len(found.choices) - at_most
        found.choices = _spread(found.choices, at_most)
    return found
