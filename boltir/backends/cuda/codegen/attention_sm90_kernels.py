"""The Hopper instance kind of the attention family (`attention_kernels` chooses it): CUTLASS
example 88's forward FMHA (`examples/88_hopper_fmha` in the nvidia-cutlass wheel: TMA
loads, wgmma, a load warp group and two MMA warp groups), included from the wheel and
compiled for sm_90a; the launcher is ours (`templates/attention_sm90.cu.j2`), and so is
the fusion that applies op.attention's masks (`templates/boltir_attention_sm90.h`: the
additive bias, key_lengths, causal, the keys past Sk of the last tile, all read in the
mainloop's `before_softmax` hook).

**Instances.** The key is the element type, the head dim (64 or 128: the tile's third
extent), whether a bias is read, and the schedule:
- "persistent" (the example's "ping-pong": `KernelTmaWarpSpecializedPingpong`, a grid of
  one block per SM walking the tiles, Q loaded by its own warp): the default;
- "cooperative" (`KernelTmaWarpSpecializedCooperative`, one block per query tile);
- "tma" (`KernelTma`, not warp-specialized, one block per query tile; D = 64 only);
- "wide" (the persistent schedule on 128-key tiles; D = 64 only): half the key steps, each
  with twice the work between the two products' softmax;
- "locked" ("wide" with the example's kIsMainloopLocked option: the two MMA warp groups
  take turns at the softmax; D = 64 only);
- "overlap" ("wide"'s tiles and persistent kernel with our own mainloop,
  `templates/boltir_attention_sm90_overlap.h`: each key step's softmax runs while the
  previous step's P·V product does, inside a warp group; D = 64 only);
- "overlap_q4" ("overlap" with two Q stages a warp group, where the example keeps one: the
  next tile's Q, and behind it its first K and V, load while this tile runs; the producer
  loads in order, so with one stage it waits at each tile's start for the consumers to
  release Q) and "overlap_q4kv8" (the same with 8 K/V stages, not 5), and "wide_q4"
  ("wide" with two Q stages a warp group: the example's own compute), timed by
  bench.check_attention, and "overlap_q4_sums" ("overlap_q4" reducing the rows' sums and
  computing O's scales while the last P·V product runs, where the example's `tail` does it
  after the product); `attention_kernels.hopper_schedule` chooses one of the last two where
  there is neither a bias nor a causal mask.
Tiles (`SCHEDULES`' tiles): 128 queries × 64 keys for D = 64, 128 × 128 for D = 128 (the
example's); 64 × 128 for "tma" (the example's) and 128 × 128 for "wide". The
problem (sizes, strides, scale, causal, key lengths) is passed at run time, so layouts,
masks and scales share an instance.

**Launch.** The same ABI as the family's other kernels (`attention_kernels.PROBLEM_FIELDS`).
Each layout is its (row, 1, (batch, head)) strides, which TMA descriptors take when every
stride and the k/v offsets are multiples of 16 bytes (8 elements): BHSD, BSHD and packed
BS3HD all are for D = 64 and 128. The scale replaces the example's 1/√D in the mainloop's
parameters; with a bias the fusion computes q·k·scale + bias itself and the softmax takes
the scores unscaled. The workspace holds the kernel's log-sum-exp rows, B·H·Sq floats,
written and never read. A row whose keys are all masked is zeros, also when a -inf bias
masks it (the softmax's sum is 0).

**What it does not take** (`reason`; those ops get example 41's kernel): f32, head dims
other than 64 and 128 or D ≠ Dv, a
bias of another element type than q or broadcast along the keys, more than 65535 batches or
heads, strides TMA cannot describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from boltir.backends.cuda.codegen.generator import header_text, render
from boltir.target import get_target

ELEMENTS = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t"}
HEAD_DIMS = (64, 128)
TILES = {64: (128, 64), 128: (128, 128)}
"""The example's tiles: head dim -> (queries, keys)."""
WIDE_TILES = {64: (128, 128)}
PINGPONG = "cutlass::gemm::KernelTmaWarpSpecializedPingpong"


@dataclass(frozen=True)
class Schedule:
    """A Hopper schedule: the example's kernel schedule type, its description, its tiles
    (head dim -> (queries, keys); it takes the head dims it lists), the example's kernel
    options beyond the schedule's own (fmha_options.hpp), and whether the kernel runs our
    mainloop (templates/boltir_attention_sm90_overlap.h) on the example's loads and
    epilogue instead of the example's compute."""

    kernel_schedule: str
    text: str
    tiles: dict
    options: tuple[str, ...] = ()
    own_mainloop: bool = False
    sums_under_last_product: bool = False
    """Our mainloop's SumsUnderLastProduct: the rows' totals while the last P·V product runs."""


STAGES_Q_4 = "cutlass::fmha::kernel::Option<cutlass::fmha::kernel::Tag::kStagesQ, cute::Int<4>>"
"""Two Q stages for each of the two MMA warp groups (the example's default: one each)."""

SCHEDULES = {
    "persistent": Schedule(PINGPONG, "persistent: one block per SM walks the tiles", TILES),
    "cooperative": Schedule("cutlass::gemm::KernelTmaWarpSpecializedCooperative", "cooperative: one block per query tile",
                            TILES),
    # half the queries of a block (twice the blocks: a batch-1 attention of 12 heads and 128
    # queries fills 24 SMs instead of 12) and twice the keys per step
    "tma": Schedule("cutlass::gemm::KernelTma", "TMA, not warp-specialized: one block per 64-query tile", {64: (64, 128)}),
    "wide": Schedule(PINGPONG, "persistent on 128-key tiles", WIDE_TILES),
    # the warp groups' softmax steps one at a time, so that one warp group's softmax runs
    # while the other's products do (FlashAttention-3's ping-pong)
    "locked": Schedule(PINGPONG, "persistent on 128-key tiles, the two MMA warp groups taking turns at the softmax",
                       WIDE_TILES,
                       ("cutlass::fmha::kernel::Option<cutlass::fmha::kernel::Tag::kIsMainloopLocked, cute::true_type>",)),
    "overlap": Schedule(PINGPONG, "persistent on 128-key tiles, our mainloop: each step's softmax overlaps the previous "
                        "P.V product", WIDE_TILES, own_mainloop=True),
    "wide_q4": Schedule(PINGPONG, "persistent on 128-key tiles, two Q stages a warp group", WIDE_TILES, (STAGES_Q_4,)),
    "overlap_q4": Schedule(PINGPONG, "persistent on 128-key tiles, our mainloop, two Q stages a warp group", WIDE_TILES,
                           (STAGES_Q_4,), own_mainloop=True),
    "overlap_q4_sums": Schedule(PINGPONG, "persistent on 128-key tiles, our mainloop finishing the rows' sums under the "
                                "last product, two Q stages a warp group", WIDE_TILES, (STAGES_Q_4,), own_mainloop=True,
                                sums_under_last_product=True),
    "overlap_q4kv8": Schedule(PINGPONG, "persistent on 128-key tiles, our mainloop, two Q stages a warp group, 8 K/V stages",
                              WIDE_TILES, (STAGES_Q_4, "cutlass::fmha::kernel::Option<cutlass::fmha::kernel::Tag::kStagesKV, "
                                                       "cute::Int<8>>"), own_mainloop=True),
}
DEFAULT_SCHEDULE = "persistent"
HEADER = "kernel/fmha_kernel_builder.hpp"
"""From the wheel's `examples/88_hopper_fmha` (an nvcc include path)."""
FUSION_HEADER = "boltir_attention_sm90.h"
"""Our fusion, pasted into the unit."""
MAINLOOP_HEADER = "boltir_attention_sm90_overlap.h"
"""Our mainloop (the "overlap" schedule), pasted into the unit after the fusion."""
EPILOGUES_HEADER = "boltir_attention_sm90_epilogues.h"
"""Our epilogue for bench/trace_attention.py (TracedEpilogue), pasted after the mainloop into
traced units only."""
TRACE_STEPS = False
"""Our mainloop's units record each MMA warp group's events for bench/trace_attention.py (set
by it only; builds never trace)."""
INCLUDE_PATH = "<cutlass>/examples/88_hopper_fmha"
TMA_ELEMENTS = 8
"""TMA takes strides and addresses in multiples of 16 bytes: 8 f16/bf16 elements."""
GRID_LIMIT = 65535


class _Strides(Protocol):
    b: int
    h: int
    m: int


class _Geometry(Protocol):
    """`attention_kernels.Geometry` (not imported: that module imports this one)."""

    batch: int
    heads: int
    seq_q: int
    seq_k: int
    head_dim: int
    head_dim_value: int
    q: _Strides
    k: _Strides
    v: _Strides
    output: _Strides
    k_offset: int
    v_offset: int


def reason(element: str, g: _Geometry, bias: tuple[tuple[int, ...], str] | None) -> str | None:
    """Why the Hopper kernel does not compute an attention of these element type, geometry
    and bias (its shape and element type), or None."""
    if element not in ELEMENTS:
        return f"element type {element}: the Hopper attention kernel takes {' or '.join(ELEMENTS)}"
    if g.head_dim != g.head_dim_value or g.head_dim not in HEAD_DIMS:
        return f"head dims {g.head_dim} and {g.head_dim_value}: the Hopper attention kernel takes D = Dv = 64 or 128"
    if g.seq_k == 0:
        return "no keys"
    if g.batch > GRID_LIMIT or g.heads > GRID_LIMIT:
        return f"{g.batch} batches of {g.heads} heads: the Hopper attention kernel takes at most {GRID_LIMIT} of each"
    strides = [s for operand in (g.q, g.k, g.v, g.output) for s in (operand.b, operand.h, operand.m)]
    if any(s % TMA_ELEMENTS for s in (*strides, g.k_offset, g.v_offset)):
        return f"strides not multiples of {TMA_ELEMENTS} elements: TMA takes 16-byte strides"
    if bias is not None:
        shape, bias_element = bias
        if bias_element != element:
            return f"the bias is {bias_element} but q is {element}: the Hopper kernel reads the bias as q's element type"
        if shape[-1] != g.seq_k:
            return f"the bias {'x'.join(map(str, shape))} broadcasts along the keys: the Hopper kernel reads bias rows of Sk keys"
    return None


def tile(head_dim: int, schedule: str = DEFAULT_SCHEDULE) -> tuple[int, int]:
    return SCHEDULES[schedule].tiles[head_dim]


def schedule_reason(schedule: str, head_dim: int) -> str | None:
    """Why the schedule does not take this head dim, or None (an unknown schedule is
    `attention_kernels.sm90_schedule`'s error)."""
    tiles = SCHEDULES[schedule].tiles if schedule in SCHEDULES else TILES
    if head_dim not in tiles:
        return f"the Hopper attention's '{schedule}' schedule takes D = {' or '.join(map(str, tiles))}, got {head_dim}"
    return None


def instance_key(element: str, head_dim: int, bias: bool, schedule: str) -> str:
    queries, keys = tile(head_dim, schedule)
    return f"attention_sm90 {element} tile {queries}x{keys} head_dim {head_dim} {schedule} bias={'yes' if bias else 'no'}"


def emit_source(common: dict, element: str, head_dim: int, bias: bool, schedule: str) -> str:
    """The instance's kernel and launcher (`common`: the family's name, key and ABI fields)."""
    queries, keys = tile(head_dim, schedule)
    chosen = SCHEDULES[schedule]
    return render("attention_sm90.cu.j2", **common, element=ELEMENTS[element], head_dim=head_dim, bias=bias,
                  tile_q=queries, tile_k=keys, kernel_schedule=chosen.kernel_schedule, schedule_text=chosen.text,
                  kernel_options=chosen.options, own_mainloop=chosen.own_mainloop,
                  trace=TRACE_STEPS and chosen.own_mainloop, sums_under_last_product=chosen.sums_under_last_product,
                  shared_memory_bytes=get_target("sm90").shared_memory_bytes)


def fusion_header(own_mainloop: bool = False) -> str:
    """Our fusion, and our mainloop where a unit's instance runs it (which records its
    events, and brackets the example's epilogue with two more, where TRACE_STEPS is set;
    other units' sources stay as they were without the traced epilogue)."""
    if not own_mainloop:
        return header_text(FUSION_HEADER)
    trace = "#define BOLTIR_ATTENTION_TRACE 1\n" if TRACE_STEPS else ""
    epilogues = header_text(EPILOGUES_HEADER) if TRACE_STEPS else ""
    return header_text(FUSION_HEADER) + trace + header_text(MAINLOOP_HEADER) + epilogues
