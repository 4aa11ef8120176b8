"""The scalar body of `op.elementwise`: `arith`/`math` ops on one element of each input.

`as_elementwise` turns one `op.unary`, `op.binary`, `op.select` or `op.cast` into the
`op.elementwise` that computes it, and `BodyBuilder` appends scalar ops to a body.
fuse-elementwise builds its kernels with them; the CUDA target builds the bodies of ops
it generates alone (and of epilogue steps it splits off) the same way, so one code
generator serves both. f16 and bf16 compute in f32 and round once, at the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    f32,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from boltir.dialects import op as ops

STANDARD_FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)


def compute_type(element_type: Attribute) -> Attribute:
    """Bodies compute f16 and bf16 in f32; f32, f64 and integers as they are."""
    if isinstance(element_type, Float16Type | BFloat16Type):
        return f32
    return element_type


class BodyBuilder:
    """Appends scalar arith/math ops to a block and returns their results."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float, value_type: Attribute) -> SSAValue:
        if isinstance(value_type, IntegerType):
            return self.add(arith.ConstantOp(IntegerAttr(int(value), value_type)))
        return self.add(arith.ConstantOp(FloatAttr(float(value), value_type)))

    def convert(self, value: SSAValue, target: Attribute) -> SSAValue:
        """A scalar conversion between the standard float and integer types."""
        source = value.type
        if source == target:
            return value
        if isinstance(source, AnyFloat) and isinstance(target, AnyFloat):
            wider = source.bitwidth < target.bitwidth
            return self.add(arith.ExtFOp(value, target) if wider else arith.TruncFOp(value, target))
        if isinstance(source, IntegerType) and isinstance(target, AnyFloat):
            if source.width.data == 1:
                return self.add(arith.SelectOp(value, self.const(1.0, target), self.const(0.0, target)))
            return self.add(arith.SIToFPOp(value, target))
        if isinstance(source, AnyFloat) and isinstance(target, IntegerType):
            if target.width.data == 1:
                return self.add(arith.CmpfOp(value, self.const(0.0, source), "une"))
            return self.add(arith.FPToSIOp(value, target))
        if isinstance(source, IntegerType) and isinstance(target, IntegerType):
            if target.width.data == 1:
                return self.add(arith.CmpiOp(value, self.const(0, source), "ne"))
            if source.width.data == 1:
                return self.add(arith.SelectOp(value, self.const(1, target), self.const(0, target)))
            wider = source.width.data < target.width.data
            return self.add(arith.ExtSIOp(value, target) if wider else arith.TruncIOp(value, target))
        raise NotImplementedError(f"no scalar conversion from {source} to {target}")

    def maximum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MaximumfOp(a, b))

    def minimum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MinimumfOp(a, b))

    def sigmoid(self, x: SSAValue) -> SSAValue:
        one = self.const(1.0, x.type)
        exp = self.add(math_dialect.ExpOp(self.add(arith.NegfOp(x))))
        return self.add(arith.DivfOp(one, self.add(arith.AddfOp(one, exp))))

    def clamp01(self, x: SSAValue) -> SSAValue:
        return self.minimum(self.maximum(x, self.const(0.0, x.type)), self.const(1.0, x.type))


def unary_body(b: BodyBuilder, fn: str, args: tuple[float, ...], x: SSAValue) -> SSAValue:
    """`fn(x)` in scalar ops; x is in the compute type."""
    t = x.type
    if fn == "identity":
        return x
    if fn == "relu":
        return b.maximum(x, b.const(0.0, t)) if isinstance(t, AnyFloat) else b.add(arith.MaxSIOp(x, b.const(0, t)))
    if fn == "clip":
        low, high = args
        if isinstance(t, IntegerType):
            raise NotImplementedError("integer clip")
        if low > -ops.UNBOUNDED:
            x = b.maximum(x, b.const(low, t))
        if high < ops.UNBOUNDED:
            x = b.minimum(x, b.const(high, t))
        return x
    if fn == "leaky_relu":
        positive = b.add(arith.CmpfOp(x, b.const(0.0, t), "oge"))
        return b.add(arith.SelectOp(positive, x, b.add(arith.MulfOp(x, b.const(args[0], t)))))
    if fn == "gelu":
        scaled = b.add(arith.MulfOp(x, b.const(1 / math.sqrt(2.0), t)))
        one_plus = b.add(arith.AddfOp(b.const(1.0, t), b.add(math_dialect.ErfOp(scaled))))
        return b.add(arith.MulfOp(b.add(arith.MulfOp(x, b.const(0.5, t))), one_plus))
    if fn == "gelu_tanh":
        cube = b.add(arith.MulfOp(b.add(arith.MulfOp(x, x)), x))
        inner = b.add(arith.AddfOp(x, b.add(arith.MulfOp(cube, b.const(0.044715, t)))))
        tanh = b.add(math_dialect.TanhOp(b.add(arith.MulfOp(inner, b.const(math.sqrt(2.0 / math.pi), t)))))
        one_plus = b.add(arith.AddfOp(b.const(1.0, t), tanh))
        return b.add(arith.MulfOp(b.add(arith.MulfOp(x, b.const(0.5, t))), one_plus))
    if fn == "sigmoid":
        return b.sigmoid(x)
    if fn == "silu":
        return b.add(arith.MulfOp(x, b.sigmoid(x)))
    if fn == "hardswish":
        gate = b.clamp01(b.add(arith.AddfOp(b.add(arith.MulfOp(x, b.const(1 / 6, t))), b.const(0.5, t))))
        return b.add(arith.MulfOp(x, gate))
    if fn == "hardsigmoid":
        return b.clamp01(b.add(arith.AddfOp(b.add(arith.MulfOp(x, b.const(args[0], t))), b.const(args[1], t))))
    if fn == "tanh":
        return b.add(math_dialect.TanhOp(x))
    if fn == "erf":
        return b.add(math_dialect.ErfOp(x))
    if fn == "sqrt":
        return b.add(math_dialect.SqrtOp(x))
    if fn == "exp":
        return b.add(math_dialect.ExpOp(x))
    if fn == "neg":
        return b.add(arith.NegfOp(x)) if isinstance(t, AnyFloat) else b.add(arith.SubiOp(b.const(0, t), x))
    if fn == "reciprocal":
        return b.add(arith.DivfOp(b.const(1.0, t), x))
    if fn == "not":
        return b.add(arith.XOrIOp(x, b.const(1, t)))
    raise NotImplementedError(fn)


FLOAT_BINARY: dict[str, Callable] = {
    "add": arith.AddfOp,
    "sub": arith.SubfOp,
    "mul": arith.MulfOp,
    "div": arith.DivfOp,
    "pow": math_dialect.PowFOp,
}
INTEGER_BINARY: dict[str, Callable] = {
    "add": arith.AddiOp,
    "sub": arith.SubiOp,
    "mul": arith.MuliOp,
    "div": arith.DivSIOp,
    "and": arith.AndIOp,
    "or": arith.OrIOp,
    "xor": arith.XOrIOp,
}
COMPARISONS: dict[str, tuple[str, str, str]] = {
    "equal": ("oeq", "eq", "eq"),
    "greater": ("ogt", "sgt", "ugt"),
    "greater_equal": ("oge", "sge", "uge"),
    "less": ("olt", "slt", "ult"),
    "less_equal": ("ole", "sle", "ule"),
}
"""Each comparison's arith predicate: cmpf (ordered: false on NaN, as numpy), cmpi on
integers, and cmpi on i1 (unsigned: numpy's True > False)."""


def binary_body(b: BodyBuilder, fn: str, x: SSAValue, y: SSAValue) -> SSAValue:
    floating = isinstance(x.type, AnyFloat)
    if fn in COMPARISONS:
        float_predicate, signed, unsigned = COMPARISONS[fn]
        if floating:
            return b.add(arith.CmpfOp(x, y, float_predicate))
        return b.add(arith.CmpiOp(x, y, unsigned if x.type == i1 else signed))
    table = FLOAT_BINARY if floating else INTEGER_BINARY
    if fn not in table:
        raise NotImplementedError(f"{fn} on {x.type}")
    return b.add(table[fn](x, y))


def expressible(element_type: Attribute) -> bool:
    """Whether a body can hold values of this type (standard floats and integers)."""
    if isinstance(element_type, IntegerType):
        return element_type.width.data in (1, 8, 16, 32, 64) and element_type.signedness.data != Signedness.UNSIGNED
    return isinstance(element_type, STANDARD_FLOATS)


def as_elementwise(op: Operation) -> ops.ElementwiseOp:
    """The op.elementwise that computes one unary/binary/select/cast op."""
    inputs = list(op.operands)
    block = Block(arg_types=[v.type.element_type for v in inputs])
    b = BodyBuilder(block)
    out_type = op.results[0].type.element_type
    if isinstance(op, ops.CastOp):
        # One conversion, so one rounding (f64 -> f16 or i32 -> bf16 through f32 would
        # round twice); only f16 <-> bf16 goes through f32, which holds both exactly.
        source = block.args[0].type
        same_width = isinstance(source, AnyFloat) and isinstance(out_type, AnyFloat) and source.bitwidth == out_type.bitwidth
        value = b.convert(block.args[0], f32 if same_width else out_type)
    elif isinstance(op, ops.SelectOp):
        value = b.add(arith.SelectOp(block.args[0], block.args[1], block.args[2]))
    else:
        work = compute_type(inputs[0].type.element_type)
        args = [b.convert(a, work) for a in block.args]
        if isinstance(op, ops.UnaryOp):
            value = unary_body(b, op.fn.data, tuple(op.prop_value("args")), args[0])
        else:
            value = binary_body(b, op.fn.data, *args)
    block.add_op(ops.YieldOp(b.convert(value, out_type)))
    new = ops.ElementwiseOp(inputs, Region(block), op.results[0].type)
    new.location = op.location
    return new


def convertible(op: Operation) -> bool:
    types = [v.type.element_type for v in (*op.operands, *op.results)]
    if not all(expressible(t) for t in types):
        return False
    if isinstance(op, ops.BinaryOp) and op.fn.data == "pow" and not isinstance(types[0], AnyFloat):
        return False
    if isinstance(op, ops.UnaryOp) and op.fn.data == "clip" and not isinstance(types[0], AnyFloat):
        return False
    return True
