"""fold-constants: evaluates graph ops whose operands are all constants, at compile time.

Importers fold what they can see at import; passes such as fold-batchnorm and the layout
and precision conversions leave new constant subexpressions behind (a transpose of a
weight, a reshape of a scale). This pass runs each such op in the numpy interpreter, the
reference every pass is checked against, so a folded value is exactly what the op would
have computed at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import numpy_dtype
from boltir.interp import make_interpreter
from boltir.passes import statistics
from boltir.passes.common import NoteOnce, weight_name, where
from boltir.weights import constant_array, make_weight_attr


def folded_name(op: Operation, index: int) -> str:
    """A weight name for result `index` of `op`: the first weight operand's name with the
    op kind appended (`fc.weight.transpose`), else the result's SSA name."""
    result = op.results[index]
    weights = [name for operand in op.operands if (name := weight_name(operand)) is not None]
    if not weights and result.name_hint:
        return result.name_hint
    base = weights[0] if weights else next((name for operand in op.operands if (name := operand.name_hint)), "folded")
    name = f"{base}.{op.name.removeprefix('graph.')}"
    return name if len(op.results) == 1 else f"{name}_{index}"


class FoldConstantOp(RewritePattern):
    """Replaces a graph op whose operands are all `graph.constant` by one constant per result."""

    def __init__(self, owner: ModulePass, interpreter: Interpreter):
        self.owner = owner
        self.interpreter = interpreter
        self.note = NoteOnce(owner)

    def refuse(self, op: Operation, reason: str) -> None:
        self.note(op, f"left {where(op)} alone: {reason}")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.GraphOp) or isinstance(op, graph.ConstantOp) or not op.operands:
            return
        producers = [operand.owner for operand in op.operands]
        if not all(isinstance(producer, graph.ConstantOp) for producer in producers):
            return
        try:
            inputs = tuple(constant_array(producer.value) for producer in producers)
        except BoltError as error:  # a weight printed without its data (--elide-weights)
            self.refuse(op, error.message)
            return
        try:
            with np.errstate(all="ignore"):  # 1/0 folds to inf, as it computes at run time
                values = self.interpreter.run_op(op, inputs)
        except (BoltError, ArithmeticError, ValueError) as error:
            # Left for run time, where the same error would name the model's input.
            self.refuse(op, f"evaluating it failed: {error}")
            return
        constants = []
        for index, (result, value) in enumerate(zip(op.results, values, strict=True)):
            array = np.asarray(value).astype(numpy_dtype(result.type.element_type), copy=False)
            constant = graph.ConstantOp(make_weight_attr(folded_name(op, index), array.reshape(result.type.get_shape())))
            constant.location = op.location
            constants.append(constant)
        rewriter.replace(op, constants, [constant.output for constant in constants])
        for producer in set(producers):
            if not producer.output.uses:
                rewriter.erase(producer)
        statistics.count(self.owner, "ops folded")


def remove_unused_constants(owner: ModulePass, module: ModuleOp) -> None:
    """Erases the constants nothing uses (folding erases the operands it used up)."""
    unused = [op for op in module.walk() if isinstance(op, graph.ConstantOp) and not op.output.uses]
    for op in unused:
        op.detach()
        op.erase()
    if unused:
        statistics.count(owner, "unused constants removed", len(unused))


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Folds every graph op whose operands are all `graph.constant` into new constants.

    Requires: graph-level IR; the weights' data (not a printout made with --elide-weights;
    ops on elided weights are left alone, with a note).
    Guarantees: no graph op other than `graph.constant` has only constant operands
    (except ops whose evaluation fails, left for run time with a note); every
    `graph.constant` is used; the module computes the same function.
    """

    name = "fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Chains fold in one sweep: a folded op's users come later in its block.
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldConstantOp(self, make_interpreter(op))], dce_enabled=False)
        ).rewrite_module(op)
        remove_unused_constants(self, op)
