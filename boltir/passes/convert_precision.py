"""convert-precision{dtype=f16}: activations and weights in one float type.

Every float constant is converted at compile time (a new weight), and every float
tensor inside the functions takes the target type; integer and boolean tensors, and the
8- and 4-bit float types (quantization's business), are left as they are. The model's
interface keeps its types: `graph.cast` ops convert the float inputs to the target type
and the results back, so users still feed and read f32. A cast that converting makes an
identity (f32 -> f32 that became f16 -> f16) is dropped.

Softmax, layer norm and the reductions need nothing special: their kernels (and the
interpreter) compute in f32 whatever the tensor type, and round once.

Statistics: "weights converted" (float constants rewritten) and "casts inserted" (at
the inputs and outputs).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import element_type_name, is_numpy_native, numpy_dtype
from boltir.passes import statistics
from boltir.passes.common import constant_name
from boltir.weights import constant_array, make_weight_attr

DTYPES = {"f16": Float16Type, "bf16": BFloat16Type, "f32": Float32Type}
"""The dtype argument's values and the element types they stand for."""

CONVERTED = (Float16Type, BFloat16Type, Float32Type, Float64Type)
"""The float element types that take the target type; narrower floats are kept."""


def converts(value_type: Attribute, target: Attribute) -> bool:
    """Whether a tensor of this type takes the target element type."""
    return (
        isinstance(value_type, TensorType)
        and isinstance(value_type.element_type, CONVERTED)
        and value_type.element_type != target
    )


def retyped(value_type: TensorType, target: Attribute) -> TensorType:
    return TensorType(target, value_type.get_shape())


# ------------------------------------------------------------------------- patterns


@dataclass
class ConvertConstant(RewritePattern):
    """A float constant becomes a new constant of the target type."""

    owner: ModulePass
    target: Attribute

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConstantOp, rewriter: PatternRewriter) -> None:
        if not converts(op.output.type, self.target):
            return
        array = constant_array(op.value).astype(numpy_dtype(self.target))
        name = f"{constant_name(op.output)}.{element_type_name(self.target)}"
        if array.ndim == 0 and not is_numpy_native(array.dtype):
            # The weight store keeps a 0-d array as 1-d (np.ascontiguousarray), and an
            # inline bf16 dense<...> does not read back: store one element, reshape it.
            stored = graph.ConstantOp(make_weight_attr(name, array.reshape(1)))
            scalar = graph.ReshapeOp(stored.output, ())
            new_ops: list[Operation] = [stored, scalar]
        else:
            new_ops = [graph.ConstantOp(make_weight_attr(name, array))]
        for new in new_ops:
            new.location = op.location
        new_ops[0].attributes.update(op.attributes)
        rewriter.replace(op, new_ops)
        statistics.count(self.owner, "weights converted")


@dataclass
class ConvertResultTypes(RewritePattern):
    """A graph op with float results gets them in the target type (its operands follow
    from their producers); a cast that becomes an identity goes away."""

    target: Attribute

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.GraphOp) or isinstance(op, graph.ConstantOp):
            return
        if isinstance(op, graph.CastOp) and op.input.type == op.output.type:
            rewriter.replace(op, [], [op.input])
            return
        if not any(converts(result.type, self.target) for result in op.results):
            return
        result_types = [
            retyped(result.type, self.target) if converts(result.type, self.target) else result.type
            for result in op.results
        ]
        new = type(op).create(
            operands=list(op.operands),
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            location=op.location,
        )
        rewriter.replace(op, [new])


# ------------------------------------------------------------------------ interface


def cast_inputs(function: func.FuncOp, target: Attribute, owner: ModulePass) -> None:
    """Casts each float argument to the target type where the body starts, in order."""
    block = function.body.block
    rewriter = PatternRewriter(InsertPoint.at_start(block))
    previous: Operation | None = None
    for arg in block.args:
        if not converts(arg.type, target) or not arg.uses:
            continue
        cast = graph.CastOp(arg, target)
        cast.location = function.location
        rewriter.insert(cast, InsertPoint.after(previous) if previous else InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(arg, cast.output, lambda use, cast=cast: use.operation is not cast)
        statistics.count(owner, "casts inserted")
        previous = cast


def cast_outputs(function: func.FuncOp, owner: ModulePass) -> None:
    """Casts each returned value back to the type the function declares."""
    for op in function.body.walk():
        if not isinstance(op, func.ReturnOp):
            continue
        rewriter = PatternRewriter(op)
        for index, (value, declared) in enumerate(zip(op.operands, function.function_type.outputs, strict=True)):
            if value.type == declared:
                continue
            cast = graph.CastOp(value, declared.element_type)
            cast.location = op.location
            rewriter.insert(cast, InsertPoint.before(op))
            op.operands[index] = cast.output
            statistics.count(owner, "casts inserted")


# ----------------------------------------------------------------------------- pass


@dataclass(frozen=True)
class ConvertPrecisionPass(ModulePass):
    """Computes the model in `dtype` (f16, bf16 or f32).

    Requires: graph-level IR in `func.func`s. Guarantees: every float tensor inside the
    functions (and every float constant) is `dtype`, except the 8- and 4-bit floats;
    integer and boolean tensors are unchanged; each function keeps its signature, with
    `graph.cast` at the float inputs and outputs; the module computes the same function
    up to `dtype`'s rounding."""

    name = "convert-precision"

    dtype: str = "f16"

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise BoltError(f"dtype must be one of {', '.join(DTYPES)}, got '{self.dtype}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = DTYPES[self.dtype]()
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
        for function in functions:
            cast_inputs(function, target, self)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ConvertConstant(self, target), ConvertResultTypes(target)])
        ).rewrite_module(op)
        for function in functions:
            cast_outputs(function, self)
