"""form-persistent-kernels: back-to-back GEMMs and convs fused into one persistent kernel.

Bolt's persistent kernels run two GEMMs (or a conv and a 1x1 conv after it) in one
kernel: each threadblock computes a tile of the first op's output over all its N
columns, applies the first epilogue, and feeds that tile straight into the second op,
so the intermediate never goes to global memory. That needs the first op's whole N in
one threadblock tile, hence N <= 256; the second conv must read exactly the tile the
first one wrote, hence 1x1, stride 1, no padding. Whether the intermediate stays in
registers or in shared memory is decided later, by kernel selection.

A pair is considered wherever an `op.gemm`'s A operand is another `op.gemm`'s result, or
an `op.conv2d`'s input is another `op.conv2d`'s result. Pairs are formed in program
order, so in a chain of three the first two fuse and the third stays alone. A pair that
breaks a rule is refused, with every reason in a note.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import element_type_name
from boltir.passes import statistics
from boltir.passes.common import where

MAX_FIRST_N = 256
"""The first op's N (output channels) must fit one threadblock tile."""


# ----------------------------------------------------------------------------- helpers


def is_constant(value: SSAValue | None) -> bool:
    return value is None or isinstance(value.owner, ops.ConstantOp)


def common_refusals(first: Operation, second: Operation, values: list[SSAValue]) -> list[str]:
    """Reasons shared by GEMM and conv pairs: element types, users, epilogues."""
    reasons = []
    types = {element_type_name(value.type.element_type) for value in values}
    if types != {"f16"}:
        reasons.append(f"not fp16 (the pair computes in {', '.join(sorted(types))})")
    if not first.results[0].has_one_use():
        reasons.append("intermediate has another user")
    for which, op in (("first", first), ("second", second)):
        if op.epilogue.residual_kind != "none":
            reasons.append(f"{which} epilogue has a residual")
    return reasons


def weight_refusals(pairs: list[tuple[str, SSAValue | None]]) -> list[str]:
    return [f"{what} is not a constant" for what, value in pairs if not is_constant(value)]


def gemm_refusals(first: ops.GemmOp, second: ops.GemmOp) -> list[str]:
    """Why `first` then `second` (which reads first's result as A) cannot be one kernel."""
    reasons = common_refusals(first, second, [first.a, first.b, first.output, second.b, second.output])
    _, n0, _ = first.problem
    if n0 > MAX_FIRST_N:
        reasons.append(f"first N is {n0} > {MAX_FIRST_N}")
    if second.prop_value("layout_a") != "row":
        reasons.append("second gemm reads the intermediate column-major")
    reasons += weight_refusals(
        [("first B", first.b), ("first bias", first.bias), ("second B", second.b), ("second bias", second.bias)]
    )
    return reasons


def filter_spatial(conv: ops.Conv2dOp) -> tuple[int, int]:
    shape = tensor_shape(conv.filter.type)
    return (shape[1], shape[2]) if conv.prop_value("filter_layout") == "OHWI" else (shape[2], shape[3])


def conv_refusals(first: ops.Conv2dOp, second: ops.Conv2dOp) -> list[str]:
    """Why `first` then `second` (which reads first's result) cannot be one kernel."""
    reasons = common_refusals(first, second, [first.input, first.filter, first.output, second.filter, second.output])
    if first.output_channels > MAX_FIRST_N:
        reasons.append(f"first N (output channels) is {first.output_channels} > {MAX_FIRST_N}")
    layouts = [(op.prop_value("layout"), op.prop_value("filter_layout")) for op in (first, second)]
    if layouts[0] != layouts[1]:
        reasons.append(f"the convs' layouts differ ({'/'.join(layouts[0])} and {'/'.join(layouts[1])})")
    kh, kw = filter_spatial(second)
    if (kh, kw) != (1, 1):
        reasons.append(f"second conv is {kh}x{kw}")
    if second.prop_value("strides") != (1, 1):
        reasons.append(f"second conv has stride {'x'.join(map(str, second.prop_value('strides')))}")
    if any(second.prop_value("pads")):
        reasons.append("second conv is padded")
    for which, op in (("first", first), ("second", second)):
        if op.prop_value("groups") != 1:
            reasons.append(f"{which} conv is grouped ({op.prop_value('groups')} groups)")
    reasons += weight_refusals(
        [
            ("first filter", first.filter),
            ("first bias", first.bias),
            ("second filter", second.filter),
            ("second bias", second.bias),
        ]
    )
    return reasons


# ---------------------------------------------------------------------------- patterns


@dataclass
class FormBackToBack(RewritePattern):
    """gemm(gemm(a, B0), B1) -> b2b_gemm(a, B0, B1); conv1x1(conv(x, W0), W1) ->
    b2b_conv2d(x, W0, W1): the pair becomes one op with both epilogues."""

    owner: ModulePass

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ops.GemmOp) and isinstance(op.a.owner, ops.GemmOp):
            first = op.a.owner
            reasons = gemm_refusals(first, op)
            fused = None if reasons else self.b2b_gemm(first, op)
        elif isinstance(op, ops.Conv2dOp) and isinstance(op.input.owner, ops.Conv2dOp):
            first = op.input.owner
            reasons = conv_refusals(first, op)
            fused = None if reasons else self.b2b_conv(first, op)
        else:
            return
        if fused is None:
            statistics.note(self.owner, f"refused {where(first)}: {'; '.join(reasons)}")
            statistics.count(self.owner, "persistent kernels refused")
            return
        fused.location = first.location
        fused.output.name_hint = op.output.name_hint
        fused.attributes.update(op.attributes)
        rewriter.replace(op, [fused], [fused.output])
        rewriter.erase(first)
        statistics.count(self.owner, "persistent kernels formed")
        statistics.count(self.owner, f"{fused.name} formed")

    @staticmethod
    def b2b_gemm(first: ops.GemmOp, second: ops.GemmOp) -> ops.B2bGemmOp:
        return ops.B2bGemmOp(
            first.a,
            first.b,
            second.b,
            bias0=first.bias,
            bias1=second.bias,
            layout_a=first.prop_value("layout_a"),
            layout_b0=first.prop_value("layout_b"),
            layout_b1=second.prop_value("layout_b"),
            epilogue0=first.epilogue,
            epilogue1=second.epilogue,
            result_type=second.output.type,
        )

    @staticmethod
    def b2b_conv(first: ops.Conv2dOp, second: ops.Conv2dOp) -> ops.B2bConv2dOp:
        return ops.B2bConv2dOp(
            first.input,
            first.filter,
            second.filter,
            bias0=first.bias,
            bias1=second.bias,
            layout=first.prop_value("layout"),
            filter_layout=first.prop_value("filter_layout"),
            strides=first.prop_value("strides"),
            pads=first.prop_value("pads"),
            dilations=first.prop_value("dilations"),
            epilogue0=first.epilogue,
            epilogue1=second.epilogue,
            result_type=second.output.type,
        )


@dataclass(frozen=True)
class FormPersistentKernelsPass(ModulePass):
    """Fuses back-to-back GEMMs, and convs followed by a 1x1 conv, into persistent kernels.

    Requires: op-level IR with epilogues fused (fuse-epilogue): the bias and activation
    of each GEMM/conv in its `#op.epilogue`.
    Guarantees: every `op.gemm` whose A is the result of another `op.gemm`, and every
    `op.conv2d` whose input is the result of another `op.conv2d`, taken in program order,
    is fused with that producer into `op.b2b_gemm` / `op.b2b_conv2d` when: both are f16;
    the first op's N (output channels) is at most 256; its result has no other user;
    neither epilogue has a residual (bias, activation, alpha and beta are kept); the
    weights and biases are constants; the second GEMM reads A row-major; for convs, both
    share one layout, neither is grouped, and the second is 1x1 with stride 1 and no
    padding. Every other such pair is left alone, with a note giving the reasons. The
    module computes the same function (the intermediate is rounded to f16 either way).
    Statistics: "persistent kernels formed", "persistent kernels refused",
    "op.b2b_gemm formed", "op.b2b_conv2d formed".
    """

    name = "form-persistent-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FormBackToBack(self), apply_recursively=False).rewrite_module(op)
