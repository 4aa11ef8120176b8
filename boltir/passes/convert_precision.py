"""convert-precision{dtype=f16}: activations and weights in one float type.

Every float constant is converted at compile time (a new weight; finite values beyond
the target's range saturate to its largest finite value, so that an exporter's "most
negative float" mask, finfo(f32).min, stays finite: -inf times a zero mask is NaN), and every float
tensor inside the functions takes the target type; integer and boolean tensors, and the
8- and 4-bit float types (quantization's business), are left as they are. The model's
interface keeps its types: `graph.cast` ops convert the float inputs to the target type
and the results back, so users still feed and read f32. A cast that converting makes an
identity (f32 -> f32 that became f16 -> f16) is dropped.

Softmax, layer norm and the reductions need nothing special: their kernels (and the
interpreter) compute in f32 whatever the tensor type, and round once.

`keep_f32=name1,name2` keeps the named ops in f32 (`boltc --keep-f32`): an op is named by
its `NameLoc` location, which the ONNX importer gives every op it makes from a node (the
node's name, else its first output's) and the passes carry to what they make of it. A
kept op computes in f32 from f32 weights (a weight that other ops share is copied), reads
the model's f32 inputs directly, and `graph.cast` ops convert at its edges to and from
the other ops. An unknown name, a name left only on constants, and an op with no float
tensor are one-line errors.

Statistics: "weights converted" (float constants rewritten), "casts inserted" (at the
inputs and outputs), and with `keep_f32`, "ops kept in f32" and "casts around f32 ops".
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    NameLoc,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

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


@dataclass
class Precisions:
    """Which float type each op computes in: `target`, or f32 for the kept ops (a set
    that follows the ops as the patterns replace them)."""

    target: Attribute
    kept: set[Operation] = field(default_factory=set)

    def of(self, op: Operation) -> Attribute:
        return Float32Type() if op in self.kept else self.target

    def replaced(self, old: Operation, new: list[Operation]) -> None:
        if old in self.kept:
            self.kept.update(new)


# ------------------------------------------------------------------------- patterns


def saturating_cast(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`array` in `dtype`, with finite values beyond its range clipped to its largest
    finite magnitude (infinities and NaN stay what they are)."""
    import ml_dtypes

    if array.dtype.kind == "f" and np.dtype(dtype).itemsize < array.dtype.itemsize:
        limit = float(ml_dtypes.finfo(dtype).max)
        finite = np.isfinite(array)
        array = np.where(finite, np.clip(array, -limit, limit), array)
    return array.astype(dtype)



@dataclass
class ConvertConstant(RewritePattern):
    """A float constant becomes a new constant of the target type."""

    owner: ModulePass
    precisions: Precisions

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConstantOp, rewriter: PatternRewriter) -> None:
        target = self.precisions.of(op)
        if not converts(op.output.type, target):
            return
        array = saturating_cast(constant_array(op.value), numpy_dtype(target))
        name = f"{constant_name(op.output)}.{element_type_name(target)}"
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
        self.precisions.replaced(op, new_ops)
        rewriter.replace(op, new_ops)
        statistics.count(self.owner, "weights converted")


@dataclass
class ConvertResultTypes(RewritePattern):
    """A graph op with float results gets them in the target type (its operands follow
    from their producers); a cast that becomes an identity goes away."""

    precisions: Precisions

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, graph.GraphOp) or isinstance(op, graph.ConstantOp):
            return
        if isinstance(op, graph.CastOp) and op.input.type == op.output.type:
            rewriter.replace(op, [], [op.input])
            return
        target = self.precisions.of(op)
        if not any(converts(result.type, target) for result in op.results):
            return
        result_types = [
            retyped(result.type, target) if converts(result.type, target) else result.type
            for result in op.results
        ]
        new = type(op).create(
            operands=list(op.operands),
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            location=op.location,
        )
        self.precisions.replaced(op, [new])
        rewriter.replace(op, [new])


# ------------------------------------------------------------------------ interface


def cast_inputs(function: func.FuncOp, target: Attribute, owner: ModulePass, kept: set[Operation]) -> None:
    """Casts each float argument to the target type where the body starts, in order; the
    kept ops go on reading the argument itself."""
    block = function.body.block
    rewriter = PatternRewriter(InsertPoint.at_start(block))
    previous: Operation | None = None
    for arg in block.args:
        if not converts(arg.type, target) or all(use.operation in kept for use in arg.uses):
            continue
        cast = graph.CastOp(arg, target)
        cast.location = function.location
        rewriter.insert(cast, InsertPoint.after(previous) if previous else InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(
            arg, cast.output, lambda use, cast=cast: use.operation is not cast and use.operation not in kept
        )
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


# ------------------------------------------------------------------------- keep f32


def op_names(module: ModuleOp) -> dict[str, list[Operation]]:
    """The graph ops of each name (their `NameLoc`), in module order."""
    named: dict[str, list[Operation]] = {}
    for op in module.walk():
        if isinstance(op, graph.GraphOp) and isinstance(op.location, NameLoc):
            named.setdefault(op.location.desc.data, []).append(op)
    return named


def is_converted_float(value_type: Attribute) -> bool:
    return isinstance(value_type, TensorType) and isinstance(value_type.element_type, CONVERTED)


def has_float_tensor(op: Operation) -> bool:
    return any(is_converted_float(v.type) for v in (*op.operands, *op.results))


def near_matches(name: str, names: list[str]) -> list[str]:
    """Up to three names like `name`, ignoring case, the likest first."""
    by_lower = {n.lower(): n for n in sorted(names, reverse=True)}
    return [by_lower[n] for n in difflib.get_close_matches(name.lower(), list(by_lower), n=3)]


def kept_ops(module: ModuleOp, names: tuple[str, ...]) -> set[Operation]:
    """The ops `names` name, which compute in f32; a one-line error for a name that
    names no such op."""
    named = op_names(module)
    kept: set[Operation] = set()
    for name in names:
        if name not in named:
            close = near_matches(name, list(named))
            hint = f"near matches: {', '.join(repr(c) for c in close)}" if close else (
                "ops are named by their ONNX node names" if named else "the model's ops carry no names")
            raise BoltError(f"keep-f32: no op named '{name}' is left when precision is chosen (it is not in the model, "
                            f"or an earlier pass folded it into another op, as a BatchNormalization into its conv); {hint}")
        computing = [op for op in named[name] if not isinstance(op, graph.ConstantOp)]
        if not computing:
            raise BoltError(f"keep-f32: op '{name}' was folded into constants at compile time; nothing computes it when the model runs")
        floating = [op for op in computing if has_float_tensor(op)]
        if not floating:
            raise BoltError(f"keep-f32: op '{name}' ({computing[0].name}) has no float operand or result; there is nothing to keep in f32")
        kept.update(floating)
    return kept


def keep_weights_f32(kept: set[Operation]) -> None:
    """Float constants that kept ops read are kept too; one that other ops also read is
    copied for the kept ones, so that they read it unrounded."""
    for op in list(kept):
        for operand in op.operands:
            constant = operand.owner
            if not isinstance(constant, graph.ConstantOp) or constant in kept or not is_converted_float(operand.type):
                continue
            if all(use.operation in kept for use in operand.uses):
                kept.add(constant)
                continue
            copy = constant.clone()
            copy.output.name_hint = operand.name_hint
            Rewriter.insert_op(copy, InsertPoint.after(constant))
            operand.replace_uses_with_if(copy.output, lambda use: use.operation in kept)
            kept.add(copy)


def cast_around_kept(function: func.FuncOp, precisions: Precisions, owner: ModulePass) -> None:
    """After the conversion: a `graph.cast` on every float edge between ops that compute
    in different types (into and out of the kept ops); casts take any input as it is.
    A float that a cast made from an integer (or boolean, or 8-bit float) is cast again
    from that input: it reaches a kept op as the model's own cast to f32, not through f16."""
    casts: dict[tuple[SSAValue, Attribute], SSAValue] = {}
    bypassed: list[Operation] = []
    for op in list(function.body.walk()):
        if not isinstance(op, graph.GraphOp) or isinstance(op, (graph.ConstantOp, graph.CastOp)):
            continue
        wanted = precisions.of(op)
        for index, operand in enumerate(op.operands):
            if not converts(operand.type, wanted):
                continue
            source = operand
            if isinstance(operand.owner, graph.CastOp) and not is_converted_float(operand.owner.input.type):
                source = operand.owner.input
                bypassed.append(operand.owner)
            if (source, wanted) not in casts:
                cast = graph.CastOp(source, wanted)
                cast.location = op.location
                Rewriter.insert_op(cast, InsertPoint.before(op))
                casts[(source, wanted)] = cast.output
                statistics.count(owner, "casts around f32 ops")
            op.operands[index] = casts[(source, wanted)]
    for cast in dict.fromkeys(bypassed):
        if not cast.output.uses:
            Rewriter.erase_op(cast)


# ----------------------------------------------------------------------------- pass


@dataclass(frozen=True)
class ConvertPrecisionPass(ModulePass):
    """Computes the model in `dtype` (f16, bf16 or f32).

    Requires: graph-level IR in `func.func`s. Guarantees: every float tensor inside the
    functions (and every float constant) is `dtype`, except the 8- and 4-bit floats;
    integer and boolean tensors are unchanged; each function keeps its signature, with
    `graph.cast` at the float inputs and outputs; the module computes the same function
    up to `dtype`'s rounding. With `keep_f32`, the named ops (and the weights they read)
    are f32 instead, with `graph.cast` at their edges to the other ops."""

    name = "convert-precision"

    dtype: str = "f16"
    keep_f32: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise BoltError(f"dtype must be one of {', '.join(DTYPES)}, got '{self.dtype}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        precisions = Precisions(DTYPES[self.dtype](), kept_ops(op, self.keep_f32) if self.keep_f32 else set())
        if precisions.kept:
            statistics.count(self, "ops kept in f32", len(precisions.kept))
        keep_weights_f32(precisions.kept)
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
        for function in functions:
            cast_inputs(function, precisions.target, self, precisions.kept)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ConvertConstant(self, precisions), ConvertResultTypes(precisions)])
        ).rewrite_module(op)
        for function in functions:
            if precisions.kept:
                cast_around_kept(function, precisions, self)
            cast_outputs(function, self)
