"""fuse-elementwise: chains of elementwise ops become one `op.elementwise` kernel.

Requires: op-level IR, after fuse-epilogue (what a GEMM or conv can absorb is gone).
Guarantees:
- every `op.unary`, `op.binary`, `op.select` and `op.cast` becomes an `op.elementwise`
  whose body computes it in scalar `arith`/`math` ops (f16 and bf16 in f32, rounded once
  at the end), except what a body cannot express (integer pow, casts to or from the
  8-, 6- and 4-bit types), which stays as it is and is counted;
- an elementwise op whose only user is another elementwise op is merged into it (its
  inputs broadcast to the user's shape, so broadcasts fuse too), and inputs the merge
  makes identical are passed once;
- the module computes the same function, up to that single rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from boltir.dialects import op as ops
from boltir.dialects.elementwise_body import (
    BodyBuilder as BodyBuilder,  # re-exported for the CUDA target
)
from boltir.dialects.elementwise_body import as_elementwise, convertible
from boltir.passes import statistics

ELEMENTWISE_KINDS = (ops.UnaryOp, ops.BinaryOp, ops.SelectOp, ops.CastOp)


class ToElementwise(RewritePattern):
    def __init__(self, pass_: ModulePass):
        self.pass_ = pass_

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ELEMENTWISE_KINDS):
            return
        if not convertible(op):
            statistics.count(self.pass_, f"{op.name} left as it is (types a body cannot hold)")
            return
        rewriter.replace(op, as_elementwise(op))


def merge(producer: ops.ElementwiseOp, consumer: ops.ElementwiseOp) -> ops.ElementwiseOp:
    """One elementwise op computing `consumer` with `producer` inlined into its body."""
    inputs: list[SSAValue] = []
    for value in consumer.inputs:
        candidates = producer.inputs if value is producer.output else [value]
        for candidate in candidates:
            if candidate not in inputs:
                inputs.append(candidate)
    block = Block(arg_types=[v.type.element_type for v in inputs])
    arg_of = dict(zip(inputs, block.args, strict=True))

    def inline(body: Block, mapping: dict[SSAValue, SSAValue]) -> SSAValue:
        result = None
        for body_op in body.ops:
            if isinstance(body_op, ops.YieldOp):
                result = mapping[body_op.operands[0]]
                break
            clone = body_op.clone(value_mapper=mapping)
            block.add_op(clone)
        return result

    produced = inline(producer.body.block, {a: arg_of[v] for a, v in zip(producer.body.block.args, producer.inputs, strict=True)})
    consumer_mapping = {
        a: (produced if v is producer.output else arg_of[v]) for a, v in zip(consumer.body.block.args, consumer.inputs, strict=True)
    }
    block.add_op(ops.YieldOp(inline(consumer.body.block, consumer_mapping)))
    skip_intermediate_rounding(block)
    merged = ops.ElementwiseOp(inputs, Region(block), consumer.output.type)
    merged.location = consumer.location
    return merged


def skip_intermediate_rounding(block: Block) -> None:
    """`extf(truncf(x))` between two fused steps becomes `x`: a fused kernel keeps its
    f32 values and rounds once, at the end."""
    for body_op in list(block.ops):
        if isinstance(body_op, arith.ExtFOp) and isinstance(truncation := body_op.input.owner, arith.TruncFOp):
            if truncation.input.type == body_op.result.type:
                body_op.result.replace_all_uses_with(truncation.input)
                block.erase_op(body_op)
    for body_op in reversed(list(block.ops)):
        if isinstance(body_op, arith.TruncFOp) and not list(body_op.result.uses):
            block.erase_op(body_op)


class MergeChains(RewritePattern):
    def __init__(self, pass_: ModulePass):
        self.pass_ = pass_

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ops.ElementwiseOp):
            return
        for value in op.inputs:
            producer = value.owner
            # Its only user is `op` (which may use it more than once, as in `y * y`).
            if isinstance(producer, ops.ElementwiseOp) and all(use.operation is op for use in producer.output.uses):
                merged = merge(producer, op)
                rewriter.replace(op, merged)
                rewriter.erase(producer)
                statistics.count(self.pass_, "elementwise ops merged")
                return


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Requires: op-level IR after fuse-epilogue. Guarantees: elementwise chains are
    single op.elementwise kernels with scalar arith/math bodies; same function."""

    name = "fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ToElementwise(self), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(MergeChains(self), apply_recursively=True).rewrite_module(op)
        if kernels := sum(isinstance(o, ops.ElementwiseOp) for o in op.walk()):
            statistics.count(self, "elementwise kernels", kernels)


