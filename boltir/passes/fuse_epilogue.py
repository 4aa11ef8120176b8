"""fuse-epilogue: bias, activations and residuals move into the GEMM or conv epilogue.

Requires: op-level IR (lower-graph-to-op ran).
Guarantees: where a GEMM or conv result has one user and that user is
- an `op.binary add` of a per-output-channel tensor: it becomes the epilogue's bias
  (added to a bias already there when both are constants);
- an `op.unary` activation (relu, clip, gelu in both forms, sigmoid, silu, hardswish,
  tanh, leaky_relu, hardsigmoid): it becomes the epilogue's activation, or its second
  activation after a residual;
- an `op.binary add` or `mul` of a tensor of the output's shape: it becomes the residual;
the user is replaced by the fused op, so the module computes the same function. The
order of the epilogue (bias, activation, residual, activation) is respected: nothing is
fused out of order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.passes import statistics
from boltir.passes.common import constant_of
from boltir.weights import make_weight_attr

FusableOp = ops.GemmOp | ops.Conv2dOp | ops.ConvTranspose2dOp
EPILOGUE_ACTIVATIONS = tuple(kind for kind in ops.ACTIVATION_ARITY if kind != "none")


def channel_axis(op: FusableOp) -> int:
    if isinstance(op, ops.GemmOp):
        return op.output.type.get_num_dims() - 1
    return 3 if op.prop_value("layout") == "NHWC" else 1


def as_channel_vector(op: FusableOp, value: SSAValue) -> int | None:
    """The channel count if `value` broadcasts along the output channels only."""
    out = tensor_shape(op.output.type)
    shape = tensor_shape(value.type)
    if len(shape) > len(out):
        return None
    aligned = (1,) * (len(out) - len(shape)) + shape
    axis = channel_axis(op)
    if all(d == 1 for i, d in enumerate(aligned) if i != axis) and aligned[axis] == out[axis]:
        return out[axis]
    return None


def single_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def rebuild(op: FusableOp, epilogue: ops.EpilogueAttr, bias: SSAValue | None, residual: SSAValue | None) -> FusableOp:
    """The same GEMM or conv with another epilogue and epilogue operands."""
    operands = list(op.operands[:2])
    new = type(op).build(
        operands=[*operands, [bias] if bias is not None else [], [residual] if residual is not None else []],
        properties={**{k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}, "epilogue": epilogue},
        result_types=[op.output.type],
    )
    new.location = op.location
    return new


class FuseIntoEpilogue(RewritePattern):
    def __init__(self, pass_: ModulePass):
        self.pass_ = pass_

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, FusableOp):
            return
        self.pending: list[Operation] = []
        user = single_user(op.output)
        if user is None:
            return
        epilogue = op.epilogue
        first, residual_kind = epilogue.first_activation, epilogue.residual_kind
        fused: tuple[ops.EpilogueAttr, SSAValue | None, SSAValue | None, str] | None = None
        if isinstance(user, ops.UnaryOp) and user.fn.data in EPILOGUE_ACTIVATIONS:
            activation = ops.Activation(user.fn.data, tuple(user.prop_value("args")))
            if first.kind == "none" and residual_kind == "none":
                fused = (epilogue.with_changes(activation=activation), op.bias, op.residual, f"activation {activation.kind}")
            elif residual_kind != "none" and epilogue.second_activation.kind == "none":
                fused = (epilogue.with_changes(activation2=activation), op.bias, op.residual, f"activation {activation.kind} after the residual")
        elif isinstance(user, ops.BinaryOp) and user.fn.data in ("add", "mul"):
            other = user.rhs if user.lhs is op.output else user.lhs
            if other is op.output:
                return
            fused = self.fuse_binary(op, user, other)
        if fused is None:
            return
        new_epilogue, bias, residual, what = fused
        new = rebuild(op, new_epilogue, bias, residual)
        replaced_constants = [v.owner for v in (*user.operands, *op.operands) if isinstance(v.owner, ops.ConstantOp)]
        rewriter.replace(user, [*self.pending, new], [new.output])
        rewriter.erase(op)
        for constant in dict.fromkeys(replaced_constants):  # the addend or old bias a new constant replaced
            if not list(constant.output.uses) and constant.parent is not None:
                rewriter.erase(constant)
        statistics.count(self.pass_, f"{what} fused")

    def fuse_binary(self, op: FusableOp, user: ops.BinaryOp, other: SSAValue):
        epilogue = op.epilogue
        untouched = epilogue.first_activation.kind == "none" and epilogue.residual_kind == "none"
        channels = as_channel_vector(op, other)
        if user.fn.data == "add" and untouched and channels is not None:
            bias = self.combined_bias(op, other, channels)
            if bias is not None:
                return epilogue.with_changes(bias=True, beta=1.0), bias, op.residual, "bias"
        if epilogue.residual_kind == "none" and other.type == op.output.type:
            return epilogue.with_changes(residual=user.fn.data), op.bias, other, f"residual {user.fn.data}"
        return None

    def combined_bias(self, op: FusableOp, addend: SSAValue, channels: int) -> SSAValue | None:
        """The new bias: the addend as a vector, plus the old bias where there is one."""
        values = constant_of(addend)
        if op.bias is None:
            if tensor_shape(addend.type) == (channels,):
                return addend
            if values is not None:
                return self.new_constant(op, "bias", values.reshape(channels).astype(values.dtype))
            reshape = ops.ReshapeOp(addend, (channels,))
            self.pending.append(reshape)
            return reshape.output
        old = constant_of(op.bias)
        if values is None or old is None or op.epilogue.beta.value.data != 1.0:
            return None
        return self.new_constant(op, "bias", (old.astype(np.float64) + values.reshape(channels)).astype(old.dtype))

    def new_constant(self, op: Operation, hint: str, array: np.ndarray) -> SSAValue:
        constant = ops.ConstantOp(make_weight_attr(hint, array))
        constant.location = op.location
        self.pending.append(constant)
        return constant.output


@dataclass(frozen=True)
class FuseEpiloguePass(ModulePass):
    """Requires: op-level IR. Guarantees: biases, activations and residual adds or
    multiplies that directly follow a GEMM or conv are in its epilogue; same function."""

    name = "fuse-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseIntoEpilogue(self), apply_recursively=True).rewrite_module(op)
