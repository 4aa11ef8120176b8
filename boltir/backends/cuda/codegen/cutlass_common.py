"""What the CUTLASS 2.x (`cutlass_kernels`) and 3.x (`cutlass_sm90`) generators share: the
template families, element and epilogue names, how a batched GEMM's batch dimensions map
onto one strided batch, and the operand checks both apply."""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Operation

from boltir.dialects import cutlass
from boltir.dialects.graph import tensor_shape
from boltir.dialects.op import EpilogueAttr

FAMILIES: dict[type, str] = {
    cutlass.GemmOp: "gemm",
    cutlass.Conv2dFpropOp: "conv2d_fprop",
    cutlass.DepthwiseConv2dFpropOp: "depthwise_conv2d_fprop",
    cutlass.B2bGemmOp: "b2b_gemm",
    cutlass.B2bConv2dOp: "b2b_conv2d",
}


CutlassOp = (
    cutlass.GemmOp | cutlass.Conv2dFpropOp | cutlass.DepthwiseConv2dFpropOp | cutlass.B2bGemmOp | cutlass.B2bConv2dOp
)


def family(op: Operation) -> str:
    try:
        return FAMILIES[type(op)]
    except KeyError:
        raise ValueError(f"'{op.name}' is not a cutlass template op") from None


def element_name(value) -> str:
    return str(value.type.element_type)


def describe_epilogue(epilogue: EpilogueAttr) -> str:
    return f"#op.epilogue<{', '.join(epilogue.describe())}>"


def batch_layout(op: cutlass.GemmOp) -> tuple[str, bool, bool] | str:
    """How a GEMM's batch dimensions map onto one strided batch: (mode, A batched,
    B batched), or why they do not."""
    a, b = tensor_shape(op.a.type), tensor_shape(op.b.type)
    out = tensor_shape(op.output.type)
    batch = out[:-2]
    count = 1
    for d in batch:
        count *= d

    def strided(shape) -> bool | None:
        lead = shape[:-2]
        lead_count = 1
        for d in lead:
            lead_count *= d
        if lead_count == 1:
            return False  # shared by every batch (stride 0)
        padded = (1,) * (len(batch) - len(lead)) + tuple(lead)
        if padded == tuple(batch):
            return True
        return None

    if count == 1:
        return ("none", False, False)
    a_batched, b_batched = strided(a), strided(b)
    if a_batched is None or b_batched is None:
        return (
            f"the batch dimensions of A {list(a[:-2])} and B {list(b[:-2])} do not reduce to one strided batch "
            f"of {list(batch)} (each operand must have all of them or none)"
        )
    mode = {(True, True): "a+b", (True, False): "a", (False, True): "b"}[(a_batched, b_batched)]
    return (mode, a_batched, b_batched)


def gemm_batching(op: cutlass.GemmOp) -> dict:
    mode, a_batched, b_batched = batch_layout(op)
    fold = mode == "a" and op.prop_value("layout_a") == "row"
    batched = mode != "none" and not fold
    return {"batch_mode": mode, "a_batched": a_batched, "b_batched": b_batched, "fold_batch": fold, "batched": batched}


def depthwise_output_tile(pixels: int) -> tuple[int, int]:
    """The threadblock's output tile (H, W) for `pixels` output pixels: the most square
    factorization, H <= W (8 x 8 for 64, 4 x 8 for 32)."""
    h = max(d for d in range(1, int(pixels**0.5) + 1) if pixels % d == 0)
    return h, pixels // h


def check_elements(op: Operation, inputs: Iterable, allowed: tuple[str, ...]) -> str | None:
    elements = [element_name(v) for v in inputs]
    output = element_name(op.output)
    if len(set(elements)) != 1:
        return f"the operands must share one element type, got {', '.join(elements)}"
    if elements[0] not in allowed:
        return f"element type {elements[0]} is not supported (supported: {', '.join(allowed)})"
    if output != elements[0]:
        return f"the output element type ({output}) must be the operands' ({elements[0]})"
    return None


def check_bias(bias, output) -> str | None:
    if bias is not None and element_name(bias) != element_name(output):
        return f"the bias element type ({element_name(bias)}) must be the output's ({element_name(output)})"
    return None
