"""An example boltir pass plugin: drops an activation applied to its own output.

relu(relu(x)) is relu(x), and so for every idempotent activation. Importers meet this
in models exported from frameworks that apply an activation both inside a block and
after it. Load it without touching boltir:

    bolt-opt model.mlir --pass-plugin examples/plugins/drop_idempotent_activations.py \
        -p drop-idempotent-activations

A plugin is a plain Python file; every `ModulePass` subclass it defines is registered
under its `name`.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from boltir.dialects import graph



class DropRepeatedRelu(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReluOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if isinstance(producer, graph.ReluOp):
            rewriter.replace(op, [], [producer.output])


class DropRepeatedClip(RewritePattern):
    """clip(clip(x, a, b), a, b) is clip(x, a, b): same bounds only."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ClipOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if isinstance(producer, graph.ClipOp) and producer.properties == op.properties:
            rewriter.replace(op, [], [producer.output])


@dataclass(frozen=True)
class DropIdempotentActivations(ModulePass):
    """Requires: graph-level IR. Guarantees: no relu feeds a relu, and no clip feeds a
    clip with the same bounds; the module computes the same function."""

    name = "drop-idempotent-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([DropRepeatedRelu(), DropRepeatedClip()])
        ).rewrite_module(op)
