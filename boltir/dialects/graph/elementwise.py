"""`graph` dialect constants and elementwise ops: unary math and activations, casts,
broadcasting binary ops, comparisons, logic, sum and where."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr, StringAttr, TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import VarConstraint, base, irdl_op_definition, operand_def, opt_prop_def, result_def, var_operand_def
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    CastBase,
    ConstantBase,
    Props,
    SelectBase,
    check_choice,
    drop_none,
    f32_attr,
    f64_attr,
    static_tensors,
    tensor_shape,
)
from boltir.dialects.graph.core import GraphOp, require_i1, same_element_type

# ------------------------------------------------------------------------- constant


@irdl_op_definition
class ConstantOp(GraphOp, ConstantBase):
    """A tensor constant: a weight (`dense_resource<name>`) or a small inline `dense<...>`."""

    name = "graph.constant"

    @classmethod
    def infer(cls, operand_types, props):
        return [props["value"].get_type()]


# ----------------------------------------------------------------------- elementwise


class UnaryOp(GraphOp):
    """`y = f(x)`, elementwise, same type in and out."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    assembly_format = "$input attr-dict `:` type($output)"

    def __init__(self, input: SSAValue, **props):
        super().__init__(operands=[input], properties=drop_none(props), result_types=[input.type])

    @classmethod
    def infer(cls, operand_types, props):
        return [operand_types[0]]


class FloatUnaryOp(UnaryOp):
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ReluOp(UnaryOp):
    name = "graph.relu"


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    name = "graph.leaky_relu"
    alpha = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.01))

    def __init__(self, input: SSAValue, alpha: float = 0.01):
        super().__init__(input, alpha=f32_attr(alpha))


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """`approximate = "none"` is the erf form, `"tanh"` the tanh approximation."""

    name = "graph.gelu"
    approximate = opt_prop_def(StringAttr, default_value=StringAttr("none"))
    APPROXIMATIONS: ClassVar = ("none", "tanh")

    def __init__(self, input: SSAValue, approximate: str = "none"):
        super().__init__(input, approximate=StringAttr(approximate))

    @classmethod
    def infer(cls, operand_types, props):
        check_choice("approximate", cls.prop(props, "approximate"), cls.APPROXIMATIONS)
        return [operand_types[0]]


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    name = "graph.sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    name = "graph.tanh"


@irdl_op_definition
class SiluOp(FloatUnaryOp):
    name = "graph.silu"


@irdl_op_definition
class HardSwishOp(FloatUnaryOp):
    name = "graph.hardswish"


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """`max(0, min(1, alpha * x + beta))`."""

    name = "graph.hardsigmoid"
    alpha = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.2))
    beta = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.5))

    def __init__(self, input: SSAValue, alpha: float = 0.2, beta: float = 0.5):
        super().__init__(input, alpha=f32_attr(alpha), beta=f32_attr(beta))


@irdl_op_definition
class ClipOp(UnaryOp):
    """Clamps to `[min, max]`; a missing bound is unbounded; with min > max every value
    becomes max (ONNX Clip)."""

    name = "graph.clip"
    min = opt_prop_def(FloatAttr[Float64Type])
    max = opt_prop_def(FloatAttr[Float64Type])

    def __init__(self, input: SSAValue, min: float | None = None, max: float | None = None):
        super().__init__(
            input,
            min=None if min is None else f64_attr(min),
            max=None if max is None else f64_attr(max),
        )



@irdl_op_definition
class ErfOp(FloatUnaryOp):
    name = "graph.erf"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    name = "graph.sqrt"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    name = "graph.exp"


@irdl_op_definition
class NegOp(UnaryOp):
    name = "graph.neg"


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    name = "graph.reciprocal"


@irdl_op_definition
class NotOp(UnaryOp):
    """Elementwise logical not of an i1 tensor."""

    name = "graph.not"

    @classmethod
    def infer(cls, operand_types, props):
        require_i1(operand_types)
        return super().infer(operand_types, props)


@irdl_op_definition
class CastOp(GraphOp, CastBase):
    """Converts the element type; the shape stays (ONNX Cast).

    Floats become integers by truncation. For 8-bit float results, `saturate` clamps
    out-of-range values to the largest finite one (else they become NaN or infinity);
    `round_mode` (up, down, nearest) rounds to the exponent-only f8E8M0FNU."""

    name = "graph.cast"

    def verify_(self) -> None:
        if tensor_shape(self.input.type) != tensor_shape(self.output.type):
            raise VerifyException(f"cast changes the shape: {self.input.type} to {self.output.type}")
        static_tensors(self)
        self.check_round_mode()


class BinaryOp(GraphOp):
    """`z = f(x, y)`, elementwise with ONNX (numpy) broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        props: Props = {}
        super().__init__(
            operands=[lhs, rhs], properties=props, result_types=self.infer([lhs.type, rhs.type], props)
        )

    @classmethod
    def result_element_type(cls, operand_type: TensorType) -> Attribute:
        return operand_type.element_type

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        shape = shapes.broadcast_shapes(*(tensor_shape(t) for t in operand_types))
        return [TensorType(cls.result_element_type(operand_types[0]), shape)]


@irdl_op_definition
class AddOp(BinaryOp):
    name = "graph.add"


@irdl_op_definition
class SubOp(BinaryOp):
    name = "graph.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    name = "graph.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    name = "graph.div"


@irdl_op_definition
class PowOp(BinaryOp):
    """`x ** y`; integer tensors raise to non-negative integer powers."""

    name = "graph.pow"


class ComparisonOp(BinaryOp):
    """An elementwise comparison of two tensors of one element type, as i1."""

    @classmethod
    def result_element_type(cls, operand_type):
        return i1


@irdl_op_definition
class EqualOp(ComparisonOp):
    """Elementwise `x == y`, as i1."""

    name = "graph.equal"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """Elementwise `x > y`, as i1."""

    name = "graph.greater"


@irdl_op_definition
class GreaterOrEqualOp(ComparisonOp):
    """Elementwise `x >= y`, as i1."""

    name = "graph.greater_equal"


@irdl_op_definition
class LessOp(ComparisonOp):
    """Elementwise `x < y`, as i1."""

    name = "graph.less"


@irdl_op_definition
class LessOrEqualOp(ComparisonOp):
    """Elementwise `x <= y`, as i1."""

    name = "graph.less_equal"


class LogicalOp(BinaryOp):
    """An elementwise logical op on two i1 tensors."""

    @classmethod
    def infer(cls, operand_types, props):
        require_i1(operand_types)
        return super().infer(operand_types, props)


@irdl_op_definition
class AndOp(LogicalOp):
    """Elementwise `x and y` on i1."""

    name = "graph.and"


@irdl_op_definition
class OrOp(LogicalOp):
    """Elementwise `x or y` on i1."""

    name = "graph.or"


@irdl_op_definition
class XorOp(LogicalOp):
    """Elementwise `x xor y` on i1."""

    name = "graph.xor"


@irdl_op_definition
class SumOp(GraphOp):
    """The elementwise sum of one or more broadcast tensors."""

    name = "graph.sum"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue]):
        super().__init__(operands=[list(inputs)], result_types=self.infer([v.type for v in inputs], {}))

    @classmethod
    def infer(cls, operand_types, props):
        if not operand_types:
            raise VerifyException("expects at least one operand")
        same_element_type(operand_types)
        shape = shapes.broadcast_shapes(*(tensor_shape(t) for t in operand_types))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class WhereOp(GraphOp, SelectBase):
    """`condition ? x : y`, elementwise with broadcasting; the condition is i1."""

    name = "graph.where"

    def __init__(self, condition: SSAValue, true_value: SSAValue, false_value: SSAValue):
        types = [condition.type, true_value.type, false_value.type]
        super().__init__(operands=[condition, true_value, false_value], result_types=self.infer(types, {}))

    @classmethod
    def infer(cls, operand_types, props):
        condition, true_type, false_type = operand_types
        if condition.element_type != i1:
            raise VerifyException(f"condition must be an i1 tensor, got {condition}")
        same_element_type([true_type, false_type], "the two values")
        shape = shapes.broadcast_shapes(*(tensor_shape(t) for t in operand_types))
        return [TensorType(true_type.element_type, shape)]

