"""What one launch computes and moves: the FLOPs and bytes of the kernel that runs an op,
by counting rules (`RULES`), which the roofline (`roofline.py`) and the kernel selection
(whether an op is bound by DRAM or by the tensor cores) both read.

    launch_cost(op)        # LaunchCost(flops, bytes, note)
    conv_channels(op)      # (input channels, output channels, depthwise) of a conv, else None

The rules: one entry per op class, a FLOP rule and a byte rule.

- **FLOPs.** GEMMs and convs (CUTLASS instances, plain fallbacks, back-to-back pairs):
  2 × multiply-adds of the shapes the kernel runs, so the channels and GEMM sizes that
  `pad-alignment` added count; the epilogue's few operations per output element do not.
  Our depthwise kernel computes the op-level conv itself: the op.conv2d rule counts it.
  Fused attention: its two products (half of them when causal).
  Pooling: one operation per window tap and output element (global pooling: per input
  element); reductions: one per input element; softmax `SOFTMAX_FLOPS` and layer norm
  `LAYER_NORM_FLOPS` per element; an elementwise region: its body's arithmetic ops per
  output element (conversions and constants are not arithmetic); `op.unary`,
  `op.binary` and `op.select` one per output element; casts, running sums (cumsum)
  and data movement none.
- **Bytes.** Each operand read once and the result written once, in their element
  sizes (weights, biases and residuals are operands). A slice reads only what it writes,
  a gather its indices and the rows it writes. A back-to-back pair's intermediate, and
  attention's scores, stay on chip.
- **An op without a rule** is counted by bytes alone, and its row says so in `note`.

"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.dialects.common import tensor_shape
from boltir.dtypes import element_type_name, numpy_dtype

SOFTMAX_FLOPS = 5
"""Per element: the running max, the subtraction, exp, the sum and the division."""
LAYER_NORM_FLOPS = 8
"""Per element: mean (add), variance (subtract, multiply, add), normalize (subtract,
multiply), scale and shift."""
NOT_ARITHMETIC = frozenset({
    "op.yield", "arith.constant", "arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci",
    "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "arith.bitcast", "arith.index_cast",
})
"""Ops of an elementwise body that count no FLOP."""


@dataclass(frozen=True)
class LaunchCost:
    flops: int
    bytes: int
    note: str = ""
    """Why the count is partial, where it is (an op without a rule)."""


# ------------------------------------------------------------------- sizes


def elements(value: SSAValue) -> int:
    return math.prod(tensor_shape(value.type))


def tensor_bytes(value: SSAValue) -> int:
    return elements(value) * numpy_dtype(value.type.element_type).itemsize


def launch_element(op: Operation) -> str:
    """The element type of the launch's first operand (of its result if it has none)."""
    value = op.operands[0] if op.operands else op.results[0]
    return element_type_name(value.type.element_type)


# ------------------------------------------------------------------ bytes


def every_tensor_once(op: Operation) -> int:
    """Each operand read once, each result written once."""
    return sum(tensor_bytes(v) for v in op.operands) + sum(tensor_bytes(r) for r in op.results)


def reads_what_it_writes(op: Operation) -> int:
    """A slice: the elements it copies, read and written."""
    return 2 * sum(tensor_bytes(r) for r in op.results)


def gather_bytes(op: ops.GatherOp) -> int:
    """The indices, and the rows it copies, read and written."""
    return sum(tensor_bytes(v) for v in op.operands[1:]) + reads_what_it_writes(op)


# ------------------------------------------------------------------ FLOPs


def no_flops(op: Operation) -> int:
    return 0


def one_per_output(op: Operation) -> int:
    return elements(op.results[0])


def per_element(count: int) -> Callable[[Operation], int]:
    def flops(op: Operation) -> int:
        return count * elements(op.operands[0])
    return flops


def gemm_flops(op: ops.GemmOp | cutlass.GemmOp) -> int:
    """2 × batch × M × N × K (the output's elements × K)."""
    _, _, _, k = ops.gemm_shape(tensor_shape(op.a.type), tensor_shape(op.b.type), op.prop_value("layout_a"),
                                op.prop_value("layout_b"))
    return 2 * elements(op.output) * k


def conv_flops(op: Operation) -> int:
    """2 × output elements × the filter taps of one output (R × S × C / groups): the
    filter's shape after its output channels, in OHWI and OIHW alike (depthwise: R × S × 1)."""
    return 2 * elements(op.output) * math.prod(tensor_shape(op.filter.type)[1:])


def conv_max_pool_flops(op: ops.Conv2dMaxPoolOp) -> int:
    """The conv's (2 × its output elements, before the pool, × the taps of one output)
    and one comparison per pooled tap."""
    conv = math.prod(op.conv_shape())
    return 2 * conv * math.prod(tensor_shape(op.filter.type)[1:]) + conv


def conv_transpose_flops(op: ops.ConvTranspose2dOp) -> int:
    """2 × input elements × the taps each one scatters (R × S × K / groups)."""
    return 2 * elements(op.input) * math.prod(tensor_shape(op.filter.type)[1:])


def b2b_gemm_flops(op: ops.B2bGemmOp | cutlass.B2bGemmOp) -> int:
    """Both GEMMs: 2 × batch × M × (N0 × K0 + N1 × N0)."""
    # CUTLASS's b2b GEMM takes a row-major A and column-major B0 (its verifier's layouts)
    layouts = ("row", "col") if isinstance(op, cutlass.B2bGemmOp) else (op.prop_value("layout_a"), op.prop_value("layout_b0"))
    first, _, n0, k0 = ops.gemm_shape(tensor_shape(op.a.type), tensor_shape(op.b0.type), *layouts)
    return 2 * (math.prod(first) * k0 + elements(op.output) * n0)


def b2b_conv_flops(op: ops.B2bConv2dOp | cutlass.B2bConv2dOp) -> int:
    """Both convs; the intermediate has the output's pixels and the first filter's K0."""
    k0, k1 = tensor_shape(op.filter0.type)[0], tensor_shape(op.filter1.type)[0]
    intermediate = elements(op.output) // k1 * k0
    return 2 * (intermediate * math.prod(tensor_shape(op.filter0.type)[1:])
                + elements(op.output) * math.prod(tensor_shape(op.filter1.type)[1:]))


def depthwise_pointwise_flops(op: ops.DepthwisePointwiseConv2dOp) -> int:
    """The expansion (Cin an expanded element), the depthwise conv (R·S taps an intermediate
    element) and the 1×1 conv (C an output element)."""
    _, r, s, _ = tensor_shape(op.filter0.type)
    expansion = math.prod(op.expanded_shape()) * tensor_shape(op.input.type)[3] if op.expand is not None else 0
    return 2 * (expansion + math.prod(op.intermediate_shape()) * r * s + elements(op.output) * op.channels())


def pool_flops(op: ops.Pool2dOp) -> int:
    """One operation per tap: the window over each output, or every input for global pooling."""
    if op.kind.data.startswith("global"):
        return elements(op.input)
    return elements(op.output) * math.prod(op.prop_value("kernel_shape"))


def attention_flops(op: ops.AttentionOp) -> int:
    """q @ kᵀ and p @ v: 2 × B·H·Sq·Sk × (D + Dv), halved when causal (the scores above the
    diagonal are skipped); the softmax's few per score are not counted."""
    q, k, v = op.head_shapes()
    b, h, sq, d = q
    products = 2 * b * h * sq * k[2] * (d + v[3])
    return products // 2 if op.prop_value("causal") else products


def elementwise_region_flops(op: ops.ElementwiseOp) -> int:
    arithmetic = sum(1 for inner in op.body.block.ops if inner.name not in NOT_ARITHMETIC)
    return arithmetic * elements(op.output)


# ------------------------------------------------------------------- rules

Rule = tuple[Callable[[Operation], int], Callable[[Operation], int]]

MOVED: Rule = (no_flops, every_tensor_once)

RULES: dict[type, Rule] = {
    # GEMMs and convs: the CUTLASS instances and the op-level forms (plain fallbacks)
    cutlass.GemmOp: (gemm_flops, every_tensor_once),
    ops.GemmOp: (gemm_flops, every_tensor_once),
    cutlass.Conv2dFpropOp: (conv_flops, every_tensor_once),
    cutlass.DepthwiseConv2dFpropOp: (conv_flops, every_tensor_once),
    ops.Conv2dOp: (conv_flops, every_tensor_once),
    ops.Conv2dMaxPoolOp: (conv_max_pool_flops, every_tensor_once),
    ops.SpaceToDepthConv2dOp: (conv_flops, every_tensor_once),  # the image read once, as the blocked tensor was
    ops.ConvTranspose2dOp: (conv_transpose_flops, every_tensor_once),
    cutlass.B2bGemmOp: (b2b_gemm_flops, every_tensor_once),
    ops.B2bGemmOp: (b2b_gemm_flops, every_tensor_once),
    cutlass.B2bConv2dOp: (b2b_conv_flops, every_tensor_once),
    ops.B2bConv2dOp: (b2b_conv_flops, every_tensor_once),
    ops.DepthwisePointwiseConv2dOp: (depthwise_pointwise_flops, every_tensor_once),  # the intermediate stays on the chip
    # the compute kernels
    ops.Pool2dOp: (pool_flops, every_tensor_once),
    ops.SoftmaxOp: (per_element(SOFTMAX_FLOPS), every_tensor_once),
    ops.LayerNormOp: (per_element(LAYER_NORM_FLOPS), every_tensor_once),
    ops.ReduceOp: (per_element(1), every_tensor_once),
    ops.CumSumOp: MOVED,  # bytes-bound: one add per element, never near the FLOP roof
    ops.AttentionOp: (attention_flops, every_tensor_once),
    # elementwise
    ops.ElementwiseOp: (elementwise_region_flops, every_tensor_once),
    ops.UnaryOp: (one_per_output, every_tensor_once),
    ops.BinaryOp: (one_per_output, every_tensor_once),
    ops.SelectOp: (one_per_output, every_tensor_once),
    ops.CastOp: MOVED,
    # data movement
    ops.LayoutTransformOp: MOVED,
    ops.PadOp: MOVED,
    ops.ConcatOp: MOVED,
    ops.ReshapeOp: MOVED,
    ops.ResizeOp: MOVED,
    ops.SpaceToDepthOp: MOVED,  # the image's input kernel: the image read once, the blocked input written once
    ops.SliceOp: (no_flops, reads_what_it_writes),
    ops.GatherOp: (no_flops, gather_bytes),
}


CONVS = (cutlass.Conv2dFpropOp, cutlass.DepthwiseConv2dFpropOp, ops.Conv2dOp, ops.Conv2dMaxPoolOp,
         ops.SpaceToDepthConv2dOp)
"""The single convs a launch runs (not back-to-back pairs or transposed convs)."""


def conv_channels(op: Operation) -> tuple[int, int, bool] | None:
    """(input channels, output channels, depthwise) of a launch's conv, from its filter (K ×
    R × S × C/groups in OHWI, K × C/groups × R × S in OIHW; CUTLASS's are OHWI) and groups;
    None for any other op. The benches' floor for memory-bound convs reads it from the
    manifest: those with few channels on one side, or depthwise."""
    if not isinstance(op, CONVS):
        return None
    shape = tensor_shape(op.filter.type)
    oihw = isinstance(op, ops.ConvBase) and op.prop_value("filter_layout") == "OIHW"
    per_group = shape[1] if oihw else shape[-1]
    if isinstance(op, cutlass.DepthwiseConv2dFpropOp):
        return shape[0], shape[0], True
    groups = op.prop_value("groups") if isinstance(op, ops.ConvBase) else 1
    return per_group * groups, shape[0], per_group == 1 and groups == shape[0] > 1


def gemm_problem(op: Operation) -> dict | None:
    """{"rows", "n", "k", "weight_bytes"} of a launch's GEMM (rows: M times A's batch; the
    weight is B, whose batch dims are the ones it shares with A); None for any other op. The
    benches' small-M floor reads it from the manifest: a GEMM of few rows is bound by reading
    its weight once, or by its launch."""
    if not isinstance(op, ops.GemmOp | cutlass.GemmOp):
        return None
    a = tensor_shape(op.a.type)
    _, m, n, k = ops.gemm_shape(a, tensor_shape(op.b.type), op.prop_value("layout_a"), op.prop_value("layout_b"))
    return {"rows": math.prod(a[:-2]) * m, "n": n, "k": k, "weight_bytes": tensor_bytes(op.b)}


def launch_cost(op: Operation) -> LaunchCost:
    """The FLOPs and bytes of the kernel that runs `op`; bytes alone for an op without a rule."""
    rule = RULES.get(type(op))
    if rule is None:
        return LaunchCost(0, every_tensor_once(op), f"no FLOP rule for {op.name}: bytes only")
    flops, moved = rule
    return LaunchCost(flops(op), moved(op))
