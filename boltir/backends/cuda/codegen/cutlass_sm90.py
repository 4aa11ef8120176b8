"""CUTLASS 3.x (Hopper, sm_90a) instances of `cutlass.gemm` and `cutlass.conv2d_fprop`:
what they can run, and the context of their templates (`gemm_sm90.cu.j2`,
`conv2d_fprop_sm90.cu.j2`). `emitter.py` dispatches here for every op whose `arch` is
"sm90"; the launcher ABI is the 2.x one, so the host program and the profilers call both
alike.

An sm90 instance is `CollectiveBuilder` mainloop + epilogue: wgmma on operands that TMA
brings into shared memory, in a warp-specialized kernel. Its parameters:

- `tile`: threadblock = the CTA tile (M, N, K); warp = one consumer warpgroup's share
  (cooperative: two warpgroups split M; pingpong and warpspecialized: one warpgroup
  computes the whole tile); instruction = the wgmma shape (64, N, 16); stages = the
  pipeline depth, 0 for as many as fit beside the epilogue;
- `kernel_schedule`: "cooperative" or "pingpong" (persistent) or "warpspecialized" (one
  consumer, the only schedule of CUTLASS's 3.x implicit-GEMM conv, which has no persistent
  one); a 1x1 conv (stride 1, no padding) with a persistent schedule runs as the GEMM it
  is (below); "streamk" (GEMMs): the cooperative kernel on the stream-K scheduler with
  CUTLASS's own decomposition: whole tiles for the full waves, and the K loops of the
  tiles left over shared by every SM (reduced in f32 in the workspace, in a fixed order),
  so that a grid of 1.5 waves does not leave half the GPU idle for its last one;
- `cluster`: thread-block cluster (M, N, 1), whose CTAs share A or B tiles by TMA multicast;
- `swizzle`: the persistent scheduler's largest raster swizzle;
- `split_k`: the stream-K scheduler in split-K mode (cooperative only), reduced in f32 in
  the workspace;
- the epilogue: one epilogue visitor tree of boltir's own, `Sm90Compute` over the
  accumulator, the bias (`Sm90RowBroadcast`) and the residual (`Sm90SrcFetch`, C), whose
  function is the whole `#op.epilogue` in f32 (`epilogues.epilogue_expression`).

TMA needs 16-byte aligned rows: every contiguous extent (K, N; a conv's C and K) is a
multiple of 8 16-bit elements, and the alignment is (8, 8, 8).

**Pointwise convs as persistent GEMMs.** Over NHWC activations and OHWI filters a 1x1
conv of stride 1 without padding is exactly the GEMM output[NHW, K] = input[NHW, C] @
filter[K, C]^T on the same buffers. A `cutlass.conv2d_fprop` of that shape whose
`kernel_schedule` is "cooperative" or "pingpong" renders `conv2d_fprop_pointwise_sm90.cu.j2`:
the 3.x GEMM instance of the same tile, schedule and epilogue (`gemm_sm90.cu.j2`), behind
the conv's launcher ABI. The persistent kernel's producer warp loads the next tiles'
inputs while the consumers store this tile's output (TMA, asynchronous), which a
memory-bound conv (few channels: one or two K tiles per output tile) needs to stream at
DRAM bandwidth; the non-persistent implicit-GEMM conv does not overlap the two. As a GEMM
it also takes split-k (cooperative): a batch-1 1x1 conv of few pixels and many channels
has too few output tiles to fill the GPU, and the implicit-GEMM conv cannot split C.
"""

from __future__ import annotations

import math

from boltir.backends.cuda.codegen.cutlass_common import (
    check_bias,
    check_elements,
    family,
    gemm_batching,
)
from boltir.backends.cuda.codegen.epilogues import epilogue_expression, plan_problem
from boltir.dialects import cutlass
from boltir.dialects.graph import tensor_shape

GEMM_SCHEDULES = ("cooperative", "pingpong", "warpspecialized", "streamk")
COOPERATIVE = ("cooperative", "streamk")
"""The schedules whose two consumer warpgroups split the tile's M."""
CONV_SCHEDULES = ("warpspecialized",)
POINTWISE_SCHEDULES = ("cooperative", "pingpong")
KERNEL_SCHEDULE_TYPES = {
    ("gemm", "cooperative"): "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    ("gemm", "pingpong"): "cutlass::gemm::KernelTmaWarpSpecializedPingpong",
    ("gemm", "warpspecialized"): "cutlass::gemm::KernelTmaWarpSpecialized",
    ("gemm", "streamk"): "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    ("conv2d_fprop", "warpspecialized"): "cutlass::conv::KernelImplicitTmaWarpSpecializedSm90",
    # a pointwise conv's persistent schedules are the GEMM's (the conv runs as a GEMM)
    ("conv2d_fprop", "cooperative"): "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
    ("conv2d_fprop", "pingpong"): "cutlass::gemm::KernelTmaWarpSpecializedPingpong",
}
EPILOGUE_SCHEDULE_TYPES = {
    "cooperative": "cutlass::epilogue::TmaWarpSpecializedCooperative",
    "pingpong": "cutlass::epilogue::TmaWarpSpecialized",
    "warpspecialized": "cutlass::epilogue::TmaWarpSpecialized",
    "streamk": "cutlass::epilogue::TmaWarpSpecializedCooperative",
}
SCHEDULE_TEXT = {
    "cooperative": "TMA warp-specialized cooperative, persistent",
    "pingpong": "TMA warp-specialized ping-pong, persistent",
    "warpspecialized": "TMA warp-specialized",
    "streamk": "TMA warp-specialized cooperative, persistent, stream-K tail",
}
HEADERS = {
    "gemm": ("cutlass/gemm/device/gemm_universal_adapter.h", "cutlass/gemm/kernel/gemm_universal.hpp",
             "cutlass/gemm/kernel/tile_scheduler.hpp", "cutlass/gemm/collective/collective_builder.hpp",
             "cutlass/epilogue/collective/collective_builder.hpp", "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp",
             "cutlass/util/packed_stride.hpp"),
    "conv2d_fprop": ("cute/tensor.hpp", "cutlass/conv/convnd_problem_shape.hpp", "cutlass/conv/device/conv_universal_adapter.hpp",
                     "cutlass/conv/kernel/conv_universal.hpp", "cutlass/conv/collective/collective_builder.hpp",
                     "cutlass/epilogue/collective/collective_builder.hpp",
                     "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"),
}
ELEMENTS = ("f16", "bf16")
SMALL_M_ROWS = 256
"""A GEMM of at most this many rows (batch-1 transformers: 128 to 197 tokens) has few tiles,
each walking all of K on one SM, and reading its weight from DRAM is most of its bytes: the
heuristic gives it narrow tiles, and its launcher prefetches the weight (B, unbatched, at
most PREFETCH_MAX_BYTES) into the L2 before the kernel waits on its predecessors, so that
the read overlaps them (`boltir_pdl::prefetch_share`; BOLTIR_PDL=noprefetch turns it off)."""


def narrow_columns_pay(rows: int, n: int, sms: int, count: int = 1) -> bool:
    """Whether a GEMM of `rows` rows (at most SMALL_M_ROWS) takes 32-column tiles rather than
    64: where 64 x 64 tiles leave half the multiprocessors idle, each CTA walks all of K
    alone, and twice the CTAs halve that walk (BERT b1's N = 768 GEMMs, bench/RESULTS.md)."""
    return rows <= SMALL_M_ROWS and math.ceil(rows / 64) * math.ceil(n / 64) * count * 2 <= sms


PREFETCH_MAX_BYTES = 16 * 2**20
"""A third of the H100's and H200's 50 MB L2: a bigger weight would push its own first
lines out before the mainloop reads them."""
TMA_ALIGNMENT = 8
"""16 bytes of a 16-bit element: TMA's row alignment."""
SHARED_MEMORY_FOR_MAINLOOP = 227 * 1024 - 32 * 1024
"""An explicit stage count must leave room for the epilogue's own stages (about 32 KiB
for the 64 x 32 epilogue tiles of C and D)."""


SHARED_MEMORY_PER_SM = 228 * 1024
"""An H100's / H200's shared memory per multiprocessor (227 KiB at most per CTA, 1 KiB of
each CTA's reserved by the system)."""
EPILOGUE_SHARED_MEMORY = 16 * 1024
"""What the TMA epilogue keeps in shared memory beside the mainloop's stages, rounded up:
sizeof(CollectiveEpilogue::SharedStorage) was 9216 bytes for a 128 x 64 conv tile with
bias + ReLU (its D stages only; computed on the CPU from the instance's types)."""


def occupancy_stages(threadblock: tuple[int, int, int], ctas: int = 2) -> int:
    """The most mainloop stages with which `ctas` CTAs of a non-persistent 3.x kernel share
    one multiprocessor (0 where not even 2 stages fit). With stages = 0 (as many as fit)
    the implicit-GEMM conv takes the whole shared memory, one CTA per SM: its epilogue and
    its next CTA's pipeline fill then never overlap (a 128 x 64 x 64 tile took 9 stages,
    221696 bytes, computed on the CPU)."""
    m, n, k = threadblock
    per_cta = SHARED_MEMORY_PER_SM // ctas - 1024 - EPILOGUE_SHARED_MEMORY
    stages = per_cta // ((m + n) * k * 2)
    return stages if stages >= 2 else 0


def cluster_of(op) -> tuple[int, int, int]:
    return tuple(op.prop_value("cluster")) if "cluster" in op.properties else (1, 1, 1)


def schedule_of(op) -> str:
    return op.prop_value("kernel_schedule") if "kernel_schedule" in op.properties else "auto"


def expected_warp_tile(schedule: str, threadblock: tuple[int, int, int]) -> tuple[int, int, int]:
    m, n, k = threadblock
    return (m // 2, n, k) if schedule in COOPERATIVE else (m, n, k)


def tile_reason(family: str, schedule: str, tile: cutlass.Tile) -> str | None:
    """Why this tile and schedule are not a 3.x instance CUTLASS builds, or None."""
    schedules = GEMM_SCHEDULES if family == "gemm" else CONV_SCHEDULES + POINTWISE_SCHEDULES
    if schedule not in schedules:
        return f"a 3.x {family} takes kernel_schedule {' or '.join(repr(s) for s in schedules)}, got '{schedule}'"
    m, n, k = tile.threadblock
    if schedule in COOPERATIVE and m not in (128, 256):
        return f"the {schedule} schedule splits M between two warpgroups: the tile's M must be 128 or 256, got {m}"
    if schedule not in COOPERATIVE and m not in (64, 128):
        return f"one consumer warpgroup takes a tile M of 64 or 128, got {m}"
    if n % 16 or not 16 <= n <= 256:
        return f"the tile's N must be a multiple of 16 up to 256 (wgmma's N), got {n}"
    if k not in (32, 64, 128):
        return f"the tile's K must be 32, 64 or 128 (16-bit wgmma, 128-byte swizzled rows), got {k}"
    warp = expected_warp_tile(schedule, tile.threadblock)
    if tile.warp != warp:
        return f"a {schedule} warpgroup computes {list(warp)} of a {list(tile.threadblock)} tile; the warp tile is {list(tile.warp)}"
    if tile.instruction != (64, n, 16):
        return f"the wgmma shape of this tile is [64, {n}, 16], got {list(tile.instruction)}"
    if tile.stages and tile.stages * (m + n) * k * 2 > SHARED_MEMORY_FOR_MAINLOOP:
        return (f"{tile.stages} stages of a {m}x{n}x{k} tile need {tile.stages * (m + n) * k * 2} bytes of shared memory, "
                f"more than the {SHARED_MEMORY_FOR_MAINLOOP} beside the epilogue (use stages = 0: as many as fit)")
    return None


def cluster_reason(cluster: tuple[int, int, int]) -> str | None:
    if cluster[2] != 1 or cluster[0] not in (1, 2, 4) or cluster[1] not in (1, 2, 4) or cluster[0] * cluster[1] > 4:
        return f"the cluster must be (1, 2 or 4) x (1, 2 or 4) x 1 with at most 4 CTAs, got {list(cluster)}"
    return None


def _common_reason(op, family: str, operands) -> str | None:
    if (reason := check_elements(op, operands, ELEMENTS)) is not None:
        return reason.replace("supported:", "3.x instances take:")
    if op.prop_value("op_class") != "tensorop":
        return "3.x instances are tensor-op kernels (op_class = \"tensorop\")"
    if str(op.accumulator) != "f32":
        return f"3.x instances accumulate in f32, got {op.accumulator}"
    if tuple(op.prop_value("alignment")) != (TMA_ALIGNMENT,) * 3:
        return f"TMA moves 16-byte rows: the alignment must be (8, 8, 8), got {tuple(op.prop_value('alignment'))}"
    if (reason := tile_reason(family, schedule_of(op), op.tile.value)) is not None:
        return reason
    if (reason := cluster_reason(cluster_of(op))) is not None:
        return reason
    if (problem := plan_problem(op.epilogue)) is not None:
        return problem
    return check_bias(op.bias, op.output)


def gemm_reason(op: cutlass.GemmOp) -> str | None:
    if (reason := _common_reason(op, "gemm", (op.a, op.b))) is not None:
        return reason
    batching = gemm_batching(op)
    if batching["batch_mode"] not in ("none", "a+b") and not batching["fold_batch"]:
        return f"a 3.x GEMM batches A and B together (or folds the batch into M); this one batches {batching['batch_mode']} alone"
    split_k = op.prop_value("split_k")
    if split_k > 1 and schedule_of(op) != "cooperative":
        return (f"split-k ({split_k} slices) runs on the stream-K scheduler in split-K mode, which only the cooperative "
                f"schedule takes (streamk chooses its own split)")
    return None


def conv_problem_reason(input_shape, filter_shape, output_shape, pads, strides, dilations) -> str | None:
    """What of a conv's shape the 3.x implicit GEMM cannot take (TMA im2col), or None."""
    c, k = input_shape[3], filter_shape[0]
    if c % TMA_ALIGNMENT or k % TMA_ALIGNMENT:
        return f"TMA im2col moves 16-byte pixels: C ({c}) and K ({k}) must be multiples of 8"
    if min(reached_extents(input_shape, filter_shape, output_shape, pads, strides, dilations)) < 1:
        return "the windows reach no input row or column"
    return None


def reached_extents(input_shape, filter_shape, output_shape, pads, strides, dilations) -> tuple[int, int]:
    """Input rows and columns the conv's windows reach: all of them, or fewer where the last
    window stops short of the end (a 1x1 stride-2 conv on an even size), in which case the
    3.x template describes the input cropped to them (TMA im2col takes no negative pad)."""
    _, h, w, _ = input_shape
    _, r, s, _ = filter_shape
    _, p, q, _ = output_shape
    return (min(h, (p - 1) * strides[0] + (r - 1) * dilations[0] + 1 - pads[0]),
            min(w, (q - 1) * strides[1] + (s - 1) * dilations[1] + 1 - pads[1]))


def crops_input(input_shape, filter_shape, output_shape, pads, strides, dilations) -> bool:
    """Whether the 3.x template describes this conv's input cropped (`reached_extents`)."""
    return reached_extents(input_shape, filter_shape, output_shape, pads, strides, dilations) != tuple(input_shape[1:3])


def conv_reason(op: cutlass.Conv2dFpropOp) -> str | None:
    if schedule_of(op) in POINTWISE_SCHEDULES and (reason := pointwise_reason(op)) is not None:
        return (f"a 3.x conv2d_fprop takes kernel_schedule 'warpspecialized' here: the persistent "
                f"'{schedule_of(op)}' runs 1x1 convs as GEMMs, and {reason}")
    if (reason := _common_reason(op, "conv2d_fprop", (op.input, op.filter))) is not None:
        return reason
    split_k = op.prop_value("split_k")
    if split_k != 1 and not is_pointwise_gemm(op):
        return "the 3.x implicit-GEMM conv has no split-k"
    if split_k != 1 and schedule_of(op) != "cooperative":
        return (f"split-k ({split_k} slices) of a 1x1 conv's GEMM runs on the stream-K scheduler in split-K mode, "
                f"which only the cooperative schedule takes")
    return conv_problem_reason(tensor_shape(op.input.type), tensor_shape(op.filter.type), tensor_shape(op.output.type),
                               op.prop_value("pads"), op.prop_value("strides"), op.prop_value("dilations"))


# ------------------------------------------------------- pointwise convs as GEMMs


def pointwise_shape_reason(filter_shape, pads, strides) -> str | None:
    """Why a conv (OHWI filter) is not a 1x1 conv of stride 1 without padding, the shape
    that is one GEMM on its own NHWC buffers; None when it is."""
    _, r, s, _ = filter_shape
    if (r, s) != (1, 1):
        return f"this one's filter is {r}x{s}"
    if tuple(strides) != (1, 1):
        return f"this one's stride is {list(strides)}"
    if any(pads):
        return f"this one has padding {list(pads)}"
    return None


def pointwise_reason(op) -> str | None:
    return pointwise_shape_reason(tensor_shape(op.filter.type), op.prop_value("pads"), op.prop_value("strides"))


def is_pointwise_gemm(op) -> bool:
    """Whether a 3.x `cutlass.conv2d_fprop` runs as a persistent GEMM (module docstring)."""
    return family(op) == "conv2d_fprop" and schedule_of(op) in POINTWISE_SCHEDULES and pointwise_reason(op) is None


def template_name(op) -> str:
    """The jinja template of a 3.x instance: `<family>_sm90`, or the pointwise conv's."""
    return "conv2d_fprop_pointwise_sm90" if is_pointwise_gemm(op) else family(op) + "_sm90"


def _pointwise_gemm_context(op, name: str) -> dict:
    """What `gemm_sm90.cu.j2` needs beyond the conv's context: A = input (NHW x C,
    row-major), B = filter (K x C row-major: column-major C x K), one GEMM, no batch."""
    return {
        "gemm_name": name + "_gemm",
        "gemm_headers": HEADERS["gemm"],
        "layout_a": "row",
        "layout_b": "col",
        "cutlass_layout_a": "cutlass::layout::RowMajor",
        "cutlass_layout_b": "cutlass::layout::ColumnMajor",
        "batch_mode": "none",
        "a_batched": False,
        "b_batched": False,
        "fold_batch": False,
        "batched": False,
        "batching_text": "one GEMM of n*h*w rows: the 1x1 conv's input, filter and output as they lie",
    }


def unsupported_reason(op) -> str | None:
    kind = family(op)
    if kind == "gemm":
        return gemm_reason(op)
    if kind == "conv2d_fprop":
        return conv_reason(op)
    return f"{kind} has no CUTLASS 3.x template; use an sm80 (2.x) instance, which runs on sm90 too"


def _epilogue_context(op) -> dict:
    epilogue = op.epilogue
    has_bias = epilogue.has_bias and epilogue.beta.value.data != 0.0
    has_residual = epilogue.residual_kind != "none"
    parameters = ["float acc"] + (["float bias"] if has_bias else []) + (["float residual"] if has_residual else [])
    # Each node's arguments, in tree order: the accumulator, the bias (pointer, the value
    # where it is null, its strides), the residual, then the compute node's own.
    children = ["{}"] + (["{static_cast<ElementD const *>(bias), ElementD(0), {}}"] if has_bias else []) + (["{}"] if has_residual else [])
    return {
        "has_bias": has_bias,
        "has_residual": has_residual,
        "epilogue_parameters": ", ".join(parameters),
        "epilogue_expression": epilogue_expression(epilogue),
        "fusion_arguments": "{" + ", ".join([*children, "{}"]) + "}",
    }


def context(op, name: str = "") -> dict:
    """What the sm90 templates need beyond the 2.x context of the same family (`name`: the
    instance's launcher, which a pointwise conv's GEMM launcher is named after)."""
    kind = family(op)
    schedule = schedule_of(op)
    pointwise = _pointwise_gemm_context(op, name) if is_pointwise_gemm(op) else {}
    return {
        **pointwise,
        "cluster": cluster_of(op),
        "schedule": schedule,
        "schedule_text": SCHEDULE_TEXT[schedule],
        "kernel_schedule": KERNEL_SCHEDULE_TYPES[(kind, schedule)],
        "epilogue_schedule": EPILOGUE_SCHEDULE_TYPES[schedule],
        "prefetch_rows": SMALL_M_ROWS,
        "prefetch_max_bytes": PREFETCH_MAX_BYTES,
        **_epilogue_context(op),
    }
