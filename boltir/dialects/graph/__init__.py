"""The `graph` dialect: model-level ops with ONNX semantics, inside `func.func @main`.

Tensors are NCHW as the frameworks give them. The convs and pools take an optional
`layout` ("NCHW", the default, or "NHWC": channels last), and the convs a
`filter_layout`; convert-layout sets them (see `LAYOUTS` and `FILTER_LAYOUTS`).

Every op infers its result types from its operands and properties (`infer`), and its
verifier checks that the declared types are the inferred ones. Builders (`__init__`)
take SSA values and plain Python values and compute the result types, so importers and
passes never spell out a shape by hand.

Model input and output names live in the function's argument and result attributes
under `graph.name` (see `INPUT_NAME_ATTR`), because names such as `gpu_0/data_0` are not
valid SSA names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.shapes import Shape

INPUT_NAME_ATTR = "graph.name"
"""Argument / result attribute of `@main` that holds the model's own tensor name."""

Props = dict[str, Attribute]

I64_ARRAY = DenseArrayBase.constr(i64)
"""Integer array properties (strides, pads, axes, perm, ...) hold i64 values."""

F64_ARRAY = DenseArrayBase.constr(Float64Type())
"""Float array properties (resize scales) hold f64 values."""


# ----------------------------------------------------------------------------- helpers


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def f64_array(values: Sequence[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(Float64Type(), [float(v) for v in values])


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), 64)


def f32_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), 32)


def f64_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), 64)


def flag(value: bool) -> UnitAttr | None:
    return UnitAttr() if value else None


def python_value(attr: Attribute | None):
    """The plain Python value of a property: tuple, int, float, str or bool."""
    match attr:
        case None:
            return False
        case UnitAttr():
            return True
        case DenseArrayBase():
            return tuple(attr.get_values())
        case IntegerAttr():
            return attr.value.data
        case FloatAttr():
            return attr.value.data
        case StringAttr():
            return attr.data
    return attr


def tensor_shape(value_type: Attribute) -> Shape:
    assert isinstance(value_type, TensorType)
    return tuple(value_type.get_shape())


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat)


def describe(value_type: Attribute) -> str:
    return str(value_type)


def _drop_none(props: dict[str, Attribute | None]) -> Props:
    return {k: v for k, v in props.items() if v is not None}


LAYOUTS = ("NCHW", "NHWC")
"""Activation layouts of the convs and pools. In NHWC the input and output are N×H×W×C
(global_avg_pool: channels last at any rank), and pads, strides, dilations and
kernel_shape keep their ONNX (H, W) meaning."""

FILTER_LAYOUTS: dict[str, tuple[str, str]] = {
    "graph.conv2d": ("OIHW", "OHWI"),
    "graph.conv_transpose2d": ("IOHW", "IHWO"),
}
"""Filter layouts per conv op, the ONNX one (the default) first. For conv2d, O is the
output channels M and I the input channels per group C/group: OIHW is ONNX's
M×(C/group)×kH×kW, OHWI is M×kH×kW×(C/group) (CUTLASS's KRSC). For conv_transpose2d,
I is the input channels C and O the output channels per group M/group: IOHW is ONNX's
C×(M/group)×kH×kW, IHWO is C×kH×kW×(M/group) (the KRSC filter of the conv whose data
gradient the transposed conv is). In both, the channels-last form is the ONNX weight
transposed by (0, 2, 3, 1)."""


def check_choice(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise VerifyException(f"{what} must be one of {', '.join(allowed)}, got '{value}'")
    return value


def is_channels_last(layout: str) -> bool:
    return layout == "NHWC"


# ------------------------------------------------------------------------------ base


class GraphOp(IRDLOperation):
    """Base of every graph op: static-shaped tensors and types that match `infer`."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    FLOAT_ONLY: ClassVar[bool] = False
    """Whether the data operands must have a floating-point element type."""

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        raise NotImplementedError

    @classmethod
    def prop(cls, props: Props, name: str):
        """The Python value of a property, or its declared default when absent."""
        if name in props:
            return python_value(props[name])
        definition = cls.get_irdl_definition().properties[name]
        return python_value(getattr(definition, "default_value", None))

    def prop_value(self, name: str):
        """The Python value of one of this op's properties."""
        return type(self).prop(self.properties, name)

    def verify_(self) -> None:
        for value in (*self.operands, *self.results):
            if not isinstance(value.type, TensorType) or not value.type.has_static_shape():
                raise VerifyException(f"expects statically shaped tensors, got {value.type}")
        if self.FLOAT_ONLY and self.operands and not is_float(self.operands[0].type.element_type):
            raise VerifyException(
                f"expects a floating-point tensor, got element type {self.operands[0].type.element_type}"
            )
        expected = self.infer(list(self.operand_types), dict(self.properties))
        actual = list(self.result_types)
        if actual != expected:
            shown_expected = ", ".join(map(describe, expected))
            shown_actual = ", ".join(map(describe, actual))
            raise VerifyException(
                f"result type {shown_actual} does not match {shown_expected}, "
                "inferred from its operands and attributes"
            )


def same_element_type(types: Sequence[TensorType], what: str = "operands") -> None:
    elements = {str(t.element_type) for t in types}
    if len(elements) > 1:
        raise VerifyException(f"{what} must share one element type, got {', '.join(sorted(elements))}")


def require_i1(types: Sequence[TensorType]) -> None:
    for value_type in types:
        if value_type.element_type != i1:
            raise VerifyException(f"expects i1 tensors, got {value_type}")


# ------------------------------------------------------------------------- constant


@irdl_op_definition
class ConstantOp(GraphOp):
    """A tensor constant: a weight (`dense_resource<name>`) or a small inline `dense<...>`."""

    name = "graph.constant"
    value = prop_def(base(DenseResourceAttr) | base(DenseIntOrFPElementsAttr))
    output = result_def(TensorType)

    def __init__(self, value: DenseResourceAttr | DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    @classmethod
    def infer(cls, operand_types, props):
        return [props["value"].get_type()]

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        return parse_constant(cls, parser)

    def print(self, printer: Printer) -> None:
        print_constant(self, printer)


def parse_constant(cls, parser: Parser):
    """`graph.constant` and `op.constant`'s syntax: the value (`dense<...>` or
    `dense_resource<...>`), then the attributes."""
    value = parser.parse_attribute()
    if not isinstance(value, DenseResourceAttr | DenseIntOrFPElementsAttr):
        parser.raise_error(f"{cls.name} expects a dense<...> or dense_resource<...> value")
    attributes = parser.parse_optional_attr_dict()
    op = cls(value)
    op.attributes.update(attributes)
    return op


def print_constant(op, printer: Printer) -> None:
    """The inverse of `parse_constant`."""
    printer.print_string(" ")
    printer.print_attribute(op.value)
    printer.print_op_attributes(op.attributes)


# ----------------------------------------------------------------------- elementwise


class UnaryOp(GraphOp):
    """`y = f(x)`, elementwise, same type in and out."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    assembly_format = "$input attr-dict `:` type($output)"

    def __init__(self, input: SSAValue, **props):
        super().__init__(operands=[input], properties=_drop_none(props), result_types=[input.type])

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
        approximate = cls.prop(props, "approximate")
        if approximate not in cls.APPROXIMATIONS:
            raise VerifyException(
                f"approximate must be one of {', '.join(cls.APPROXIMATIONS)}, got '{approximate}'"
            )
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
class CastOp(GraphOp):
    """Converts the element type; the shape stays (ONNX Cast).

    Floats become integers by truncation. For 8-bit float results, `saturate` clamps
    out-of-range values to the largest finite one (else they become NaN or infinity);
    `round_mode` (up, down, nearest) rounds to the exponent-only f8E8M0FNU."""

    name = "graph.cast"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    saturate = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    round_mode = opt_prop_def(StringAttr, default_value=StringAttr("up"))
    assembly_format = "$input attr-dict `:` type($input) `to` type($output)"
    ROUND_MODES: ClassVar = ("up", "down", "nearest")

    def __init__(self, input: SSAValue, element_type: Attribute, *, saturate: bool = True, round_mode: str = "up"):
        result = TensorType(element_type, tensor_shape(input.type))
        props = {"saturate": BoolAttr.from_bool(saturate), "round_mode": StringAttr(round_mode)}
        super().__init__(operands=[input], properties=props, result_types=[result])

    def verify_(self) -> None:
        if tensor_shape(self.input.type) != tensor_shape(self.output.type):
            raise VerifyException(f"cast changes the shape: {self.input.type} to {self.output.type}")
        for value in (self.input, self.output):
            if not value.type.has_static_shape():
                raise VerifyException(f"expects statically shaped tensors, got {value.type}")
        if self.prop_value("round_mode") not in self.ROUND_MODES:
            raise VerifyException(
                f"round_mode must be one of {', '.join(self.ROUND_MODES)}, got '{self.prop_value('round_mode')}'"
            )


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
class WhereOp(GraphOp):
    """`condition ? x : y`, elementwise with broadcasting; the condition is i1."""

    name = "graph.where"
    condition = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$condition `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)"

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


# ----------------------------------------------------------------- linear algebra


def _conv_common(props: Props, cls, spatial_rank: int = 2) -> tuple:
    strides = cls.prop(props, "strides")
    pads = cls.prop(props, "pads")
    dilations = cls.prop(props, "dilations")
    group = cls.prop(props, "group")
    shapes.require_length(strides, spatial_rank, "strides")
    shapes.require_length(pads, 2 * spatial_rank, "pads")
    shapes.require_length(dilations, spatial_rank, "dilations")
    shapes.require_positive(strides, "strides")
    shapes.require_positive(dilations, "dilations")
    shapes.require_non_negative(pads, "pads")
    if group < 1:
        raise VerifyException(f"group must be positive, got {group}")
    return strides, pads, dilations, group


class ConvBase(GraphOp):
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    """ONNX order: top, left, bottom, right."""
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    group = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))
    """NCHW (input N×C×H×W, output N×M×OH×OW) or NHWC (N×H×W×C, N×OH×OW×M)."""
    assembly_format = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    @staticmethod
    def _check_ranks(operand_types) -> None:
        x, w = operand_types[:2]
        if x.get_num_dims() != 4 or w.get_num_dims() != 4:
            raise VerifyException(f"expects a 4-D input and a 4-D weight, got {x} and {w}")
        same_element_type(operand_types)

    @classmethod
    def _layouts(cls, props: Props) -> tuple[str, str]:
        """(layout, filter_layout), checked."""
        layout = check_choice(cls.prop(props, "layout"), LAYOUTS, "layout")
        filter_layout = check_choice(cls.prop(props, "filter_layout"), FILTER_LAYOUTS[cls.name], "filter_layout")
        return layout, filter_layout

    @classmethod
    def _input_nchw(cls, operand_types, layout: str) -> tuple[int, int, int, int]:
        """The input's (N, C, H, W), whatever its layout."""
        x = tensor_shape(operand_types[0])
        return (x[0], x[3], x[1], x[2]) if is_channels_last(layout) else x

    @classmethod
    def _weight_in_onnx_order(cls, operand_types, filter_layout: str) -> tuple[int, int, int, int]:
        """The weight's dims in ONNX order (OIHW for conv2d, IOHW for conv_transpose2d)."""
        w = tensor_shape(operand_types[1])
        return (w[0], w[3], w[1], w[2]) if filter_layout == FILTER_LAYOUTS[cls.name][1] else w

    @staticmethod
    def _output(element_type, layout: str, n: int, m: int, oh: int, ow: int) -> TensorType:
        shape = (n, oh, ow, m) if is_channels_last(layout) else (n, m, oh, ow)
        return TensorType(element_type, shape)


@irdl_op_definition
class Conv2dOp(ConvBase):
    """ONNX Conv: input N×C×H×W, weight M×(C/group)×kH×kW, optional bias M (NCHW / OIHW).

    With `layout = "NHWC"` the input is N×H×W×C and the result N×OH×OW×M; with
    `filter_layout = "OHWI"` the weight is M×kH×kW×(C/group)."""

    name = "graph.conv2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OIHW"))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        group: int = 1,
        layout: str = "NCHW",
        filter_layout: str = "OIHW",
    ):
        props = {
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
            "group": i64_attr(group),
            "layout": StringAttr(layout),
            "filter_layout": StringAttr(filter_layout),
        }
        operands = [input, weight, [bias] if bias is not None else []]
        types = [input.type, weight.type] + ([bias.type] if bias is not None else [])
        super().__init__(operands=operands, properties=props, result_types=self.infer(types, props))

    @classmethod
    def infer(cls, operand_types, props):
        cls._check_ranks(operand_types)
        strides, pads, dilations, group = _conv_common(props, cls)
        layout, filter_layout = cls._layouts(props)
        n, c, h, w = cls._input_nchw(operand_types, layout)
        m, cg, kh, kw = cls._weight_in_onnx_order(operand_types, filter_layout)
        if c % group or m % group:
            raise VerifyException(f"group {group} must divide input channels {c} and output channels {m}")
        if cg != c // group:
            raise VerifyException(
                f"weight has {cg} input channels per group, expected {c // group} (= {c} / group {group})"
            )
        if len(operand_types) == 3 and tensor_shape(operand_types[2]) != (m,):
            raise VerifyException(f"bias must have shape {m}, got {operand_types[2]}")
        oh = shapes.window_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0])
        ow = shapes.window_output_size(w, kw, strides[1], pads[1], pads[3], dilations[1])
        return [cls._output(operand_types[0].element_type, layout, n, m, oh, ow)]


@irdl_op_definition
class ConvTranspose2dOp(ConvBase):
    """ONNX ConvTranspose: input N×C×H×W, weight C×(M/group)×kH×kW, optional bias M
    (NCHW / IOHW).

    With `layout = "NHWC"` the input is N×H×W×C and the result N×OH×OW×M; with
    `filter_layout = "IHWO"` the weight is C×kH×kW×(M/group)."""

    name = "graph.conv_transpose2d"
    output_padding = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0]))
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("IOHW"))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        group: int = 1,
        output_padding: Sequence[int] = (0, 0),
        layout: str = "NCHW",
        filter_layout: str = "IOHW",
    ):
        props = {
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
            "group": i64_attr(group),
            "output_padding": i64_array(output_padding),
            "layout": StringAttr(layout),
            "filter_layout": StringAttr(filter_layout),
        }
        operands = [input, weight, [bias] if bias is not None else []]
        types = [input.type, weight.type] + ([bias.type] if bias is not None else [])
        super().__init__(operands=operands, properties=props, result_types=self.infer(types, props))

    @classmethod
    def infer(cls, operand_types, props):
        cls._check_ranks(operand_types)
        strides, pads, dilations, group = _conv_common(props, cls)
        layout, filter_layout = cls._layouts(props)
        output_padding = cls.prop(props, "output_padding")
        shapes.require_length(output_padding, 2, "output_padding")
        shapes.require_non_negative(output_padding, "output_padding")
        for op_, s, d in zip(output_padding, strides, dilations, strict=True):
            if op_ >= max(s, d):
                raise VerifyException(f"output_padding {op_} must be smaller than its stride or dilation")
        n, c, h, w = cls._input_nchw(operand_types, layout)
        wc, mg, kh, kw = cls._weight_in_onnx_order(operand_types, filter_layout)
        if c % group:
            raise VerifyException(f"group {group} must divide input channels {c}")
        if wc != c:
            raise VerifyException(f"weight has {wc} input channels, expected {c}")
        m = mg * group
        if len(operand_types) == 3 and tensor_shape(operand_types[2]) != (m,):
            raise VerifyException(f"bias must have shape {m}, got {operand_types[2]}")
        oh = shapes.conv_transpose_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0], output_padding[0])
        ow = shapes.conv_transpose_output_size(w, kw, strides[1], pads[1], pads[3], dilations[1], output_padding[1])
        if oh < 1 or ow < 1:
            raise VerifyException(f"output would be empty ({oh}x{ow})")
        return [cls._output(operand_types[0].element_type, layout, n, m, oh, ow)]


@irdl_op_definition
class MatMulOp(GraphOp):
    """numpy.matmul: batched, with broadcast batch dimensions; 1-D operands allowed."""

    name = "graph.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=self.infer([lhs.type, rhs.type], {}))

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        shape = shapes.matmul_shape(tensor_shape(operand_types[0]), tensor_shape(operand_types[1]))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class GemmOp(GraphOp):
    """ONNX Gemm: `alpha * op(A) @ op(B) + beta * C`, C broadcast to M×N."""

    name = "graph.gemm"
    FLOAT_ONLY: ClassVar[bool] = True
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    output = result_def(TensorType)
    alpha = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))
    beta = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    assembly_format = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue | None = None,
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        trans_a: bool = False,
        trans_b: bool = False,
    ):
        props = _drop_none(
            {"alpha": f32_attr(alpha), "beta": f32_attr(beta), "trans_a": flag(trans_a), "trans_b": flag(trans_b)}
        )
        types = [a.type, b.type] + ([c.type] if c is not None else [])
        super().__init__(
            operands=[a, b, [c] if c is not None else []], properties=props, result_types=self.infer(types, props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        a, b = (tensor_shape(t) for t in operand_types[:2])
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(f"expects 2-D A and B, got {operand_types[0]} and {operand_types[1]}")
        m, k = a[::-1] if cls.prop(props, "trans_a") else a
        kb, n = b[::-1] if cls.prop(props, "trans_b") else b
        if k != kb:
            raise VerifyException(f"contraction mismatch: op(A) is {m}x{k} but op(B) is {kb}x{n}")
        if len(operand_types) == 3:
            c = tensor_shape(operand_types[2])
            if not shapes.broadcasts_to(c, (m, n)):
                raise VerifyException(f"C of shape {'x'.join(map(str, c))} does not broadcast to {m}x{n}")
        return [TensorType(operand_types[0].element_type, (m, n))]


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference BatchNormalization over axis 1: `scale * (x - mean) / sqrt(var + eps) + bias`."""

    name = "graph.batch_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input, scale, bias, mean, variance, *, epsilon: float = 1e-5):
        props = {"epsilon": f32_attr(epsilon)}
        operands = [input, scale, bias, mean, variance]
        super().__init__(
            operands=operands, properties=props, result_types=self.infer([o.type for o in operands], props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        x = tensor_shape(operand_types[0])
        if len(x) < 2:
            raise VerifyException(f"expects an input of rank 2 or more, got {operand_types[0]}")
        for name, t in zip(("scale", "bias", "mean", "variance"), operand_types[1:], strict=True):
            if tensor_shape(t) != (x[1],):
                raise VerifyException(f"{name} must have shape {x[1]} (the channels), got {t}")
        if cls.prop(props, "epsilon") < 0:
            raise VerifyException("epsilon must not be negative")
        return [operand_types[0]]


# ------------------------------------------------------------------------- pooling


class Pool2dBase(GraphOp):
    input = operand_def(TensorType)
    output = result_def(TensorType)
    kernel_shape = prop_def(I64_ARRAY)
    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    ceil_mode = opt_prop_def(UnitAttr)
    layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))
    """NCHW (N×C×H×W in and out) or NHWC (N×H×W×C)."""
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    @classmethod
    def infer(cls, operand_types, props):
        layout = check_choice(cls.prop(props, "layout"), LAYOUTS, "layout")
        x = tensor_shape(operand_types[0])
        if len(x) != 4:
            raise VerifyException(f"expects a 4-D {layout} input, got {operand_types[0]}")
        n, c, h, w = (x[0], x[3], x[1], x[2]) if is_channels_last(layout) else x
        kernel = cls.prop(props, "kernel_shape")
        strides = cls.prop(props, "strides")
        pads = cls.prop(props, "pads")
        dilations = cls.prop(props, "dilations") if "dilations" in cls.get_irdl_definition().properties else (1, 1)
        shapes.require_length(kernel, 2, "kernel_shape")
        shapes.require_length(strides, 2, "strides")
        shapes.require_length(pads, 4, "pads")
        shapes.require_length(dilations, 2, "dilations")
        shapes.require_positive(kernel, "kernel_shape")
        shapes.require_positive(strides, "strides")
        shapes.require_positive(dilations, "dilations")
        shapes.require_non_negative(pads, "pads")
        for axis in range(2):
            if pads[axis] >= kernel[axis] or pads[axis + 2] >= kernel[axis]:
                raise VerifyException(f"pads {list(pads)} must be smaller than the kernel {list(kernel)}")
        ceil_mode = cls.prop(props, "ceil_mode")
        oh, ow = (
            shapes.window_output_size(size, kernel[i], strides[i], pads[i], pads[i + 2], dilations[i], ceil_mode)
            for i, size in enumerate((h, w))
        )
        shape = (n, oh, ow, c) if is_channels_last(layout) else (n, c, oh, ow)
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class MaxPool2dOp(Pool2dBase):
    name = "graph.max_pool2d"
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))

    def __init__(
        self,
        input: SSAValue,
        kernel_shape: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
        ceil_mode: bool = False,
        layout: str = "NCHW",
    ):
        props = _drop_none(
            {
                "kernel_shape": i64_array(kernel_shape),
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "dilations": i64_array(dilations),
                "ceil_mode": flag(ceil_mode),
                "layout": StringAttr(layout),
            }
        )
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))


@irdl_op_definition
class AvgPool2dOp(Pool2dBase):
    """Average pool; padding counts toward the divisor only with `count_include_pad`."""

    FLOAT_ONLY: ClassVar[bool] = True

    name = "graph.avg_pool2d"
    count_include_pad = opt_prop_def(UnitAttr)

    def __init__(
        self,
        input: SSAValue,
        kernel_shape: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        ceil_mode: bool = False,
        count_include_pad: bool = False,
        layout: str = "NCHW",
    ):
        props = _drop_none(
            {
                "kernel_shape": i64_array(kernel_shape),
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "ceil_mode": flag(ceil_mode),
                "count_include_pad": flag(count_include_pad),
                "layout": StringAttr(layout),
            }
        )
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))


@irdl_op_definition
class GlobalAvgPoolOp(GraphOp):
    """Mean over every spatial axis: N×C×D1×…×Dk -> N×C×1×…×1; with `layout = "NHWC"`
    (channels last, at any rank) N×D1×…×Dk×C -> N×1×…×1×C."""

    name = "graph.global_avg_pool"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    output = result_def(TensorType)
    layout = opt_prop_def(StringAttr, default_value=StringAttr("NCHW"))
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, *, layout: str = "NCHW"):
        props = {"layout": StringAttr(layout)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        layout = check_choice(cls.prop(props, "layout"), LAYOUTS, "layout")
        x = tensor_shape(operand_types[0])
        if len(x) < 3:
            raise VerifyException(f"expects an input of rank 3 or more, got {operand_types[0]}")
        ones = (1,) * (len(x) - 2)
        shape = (x[0], *ones, x[-1]) if is_channels_last(layout) else (x[0], x[1], *ones)
        return [TensorType(operand_types[0].element_type, shape)]


# ------------------------------------------------------------- normalization, reduce


@irdl_op_definition
class SoftmaxOp(GraphOp):
    """Softmax along one axis (ONNX opset 13 semantics)."""

    name = "graph.softmax"
    FLOAT_ONLY: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(-1))
    assembly_format = "$input attr-dict `:` type($output)"

    def __init__(self, input: SSAValue, axis: int = -1):
        props = {"axis": i64_attr(axis)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        shapes.normalize_axis(cls.prop(props, "axis"), operand_types[0].get_num_dims())
        return [operand_types[0]]


@irdl_op_definition
class LayerNormOp(GraphOp):
    """Normalizes over the axes from `axis` to the last; scale and bias broadcast to them."""

    name = "graph.layer_norm"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(-1))
    epsilon = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def __init__(self, input, scale, bias=None, *, axis: int = -1, epsilon: float = 1e-5):
        props = {"axis": i64_attr(axis), "epsilon": f32_attr(epsilon)}
        types = [input.type, scale.type] + ([bias.type] if bias is not None else [])
        super().__init__(
            operands=[input, scale, [bias] if bias is not None else []],
            properties=props,
            result_types=self.infer(types, props),
        )

    @classmethod
    def infer(cls, operand_types, props):
        same_element_type(operand_types)
        x = tensor_shape(operand_types[0])
        axis = shapes.normalize_axis(cls.prop(props, "axis"), len(x))
        normalized = x[axis:]
        for name, t in zip(("scale", "bias"), operand_types[1:]):
            if not shapes.broadcasts_to(tensor_shape(t), normalized):
                raise VerifyException(
                    f"{name} {t} does not broadcast to the normalized shape {'x'.join(map(str, normalized))}"
                )
        if cls.prop(props, "epsilon") < 0:
            raise VerifyException("epsilon must not be negative")
        return [operand_types[0]]


class ReduceOp(GraphOp):
    """Reduces over `axes`; `keepdims` keeps them as size 1."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = prop_def(I64_ARRAY)
    keepdims = opt_prop_def(UnitAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool = True):
        props = _drop_none({"axes": i64_array(axes), "keepdims": flag(keepdims)})
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        axes = shapes.normalize_axes(cls.prop(props, "axes"), len(x))
        if not axes:
            raise VerifyException("axes must name at least one axis")
        keep = cls.prop(props, "keepdims")
        shape = tuple(1 if i in axes else d for i, d in enumerate(x) if keep or i not in axes)
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "graph.reduce_mean"
    FLOAT_ONLY: ClassVar[bool] = True


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "graph.reduce_max"


# ------------------------------------------------------------------- data movement


class ShapeOnlyOp(GraphOp):
    """An op whose result shape is only given by its result type."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__(operands=[input], result_types=[TensorType(input.type.element_type, tuple(shape))])

    def verify_(self) -> None:
        for value in (self.input, self.output):
            if not value.type.has_static_shape():
                raise VerifyException(f"expects statically shaped tensors, got {value.type}")
        if self.input.type.element_type != self.output.type.element_type:
            raise VerifyException(f"changes the element type: {self.input.type} to {self.output.type}")
        self.check_shapes(tensor_shape(self.input.type), tensor_shape(self.output.type))


@irdl_op_definition
class ReshapeOp(ShapeOnlyOp):
    """Row-major reshape to the result type's shape."""

    name = "graph.reshape"

    @staticmethod
    def check_shapes(source: Shape, target: Shape) -> None:
        if shapes.element_count(source) != shapes.element_count(target):
            raise VerifyException(
                f"cannot reshape {shapes.element_count(source)} elements into "
                f"{'x'.join(map(str, target))} ({shapes.element_count(target)} elements)"
            )


@irdl_op_definition
class ExpandOp(ShapeOnlyOp):
    """Broadcasts the input to the result type's shape (ONNX Expand)."""

    name = "graph.expand"

    @staticmethod
    def check_shapes(source: Shape, target: Shape) -> None:
        if not shapes.broadcasts_to(source, target):
            raise VerifyException(
                f"{'x'.join(map(str, source))} does not expand to {'x'.join(map(str, target))}"
            )


@irdl_op_definition
class FlattenOp(GraphOp):
    """To 2-D: the axes before `axis` form the rows, the rest the columns."""

    name = "graph.flatten"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, axis: int = 1):
        props = {"axis": i64_attr(axis)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        axis = cls.prop(props, "axis")
        if not -len(x) <= axis <= len(x):
            raise VerifyException(f"axis {axis} is out of range for rank {len(x)}")
        if axis < 0:
            axis += len(x)
        rows = shapes.element_count(x[:axis])
        return [TensorType(operand_types[0].element_type, (rows, shapes.element_count(x[axis:])))]


@irdl_op_definition
class TransposeOp(GraphOp):
    name = "graph.transpose"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    perm = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        props = {"perm": i64_array(perm)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        perm = cls.prop(props, "perm")
        if sorted(perm) != list(range(len(x))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of {len(x)} axes")
        return [TensorType(operand_types[0].element_type, tuple(x[p] for p in perm))]


@irdl_op_definition
class ConcatOp(GraphOp):
    name = "graph.concat"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        props = {"axis": i64_attr(axis)}
        super().__init__(
            operands=[list(inputs)], properties=props, result_types=self.infer([v.type for v in inputs], props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        if not operand_types:
            raise VerifyException("expects at least one operand")
        same_element_type(operand_types)
        first = tensor_shape(operand_types[0])
        axis = shapes.normalize_axis(cls.prop(props, "axis"), len(first))
        for t in operand_types[1:]:
            s = tensor_shape(t)
            if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first)) if i != axis):
                raise VerifyException(f"operand {t} does not match {operand_types[0]} outside axis {axis}")
        total = sum(tensor_shape(t)[axis] for t in operand_types)
        return [TensorType(operand_types[0].element_type, first[:axis] + (total,) + first[axis + 1 :])]


@irdl_op_definition
class SplitOp(GraphOp):
    """Splits along `axis` into pieces of the given `sizes`."""

    name = "graph.split"
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    sizes = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($outputs)"

    def __init__(self, input: SSAValue, sizes: Sequence[int], axis: int = 0):
        props = {"axis": i64_attr(axis), "sizes": i64_array(sizes)}
        super().__init__(operands=[input], properties=props, result_types=[self.infer([input.type], props)])

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        axis = shapes.normalize_axis(cls.prop(props, "axis"), len(x))
        sizes = cls.prop(props, "sizes")
        shapes.require_non_negative(sizes, "sizes")
        if sum(sizes) != x[axis]:
            raise VerifyException(f"sizes {list(sizes)} do not add up to dimension {axis} of size {x[axis]}")
        return [TensorType(operand_types[0].element_type, x[:axis] + (s,) + x[axis + 1 :]) for s in sizes]


@irdl_op_definition
class SliceOp(GraphOp):
    """ONNX Slice with static starts, ends, axes and steps."""

    name = "graph.slice"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    starts = prop_def(I64_ARRAY)
    ends = prop_def(I64_ARRAY)
    axes = prop_def(I64_ARRAY)
    steps = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, starts, ends, axes=None, steps=None):
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        props = {"starts": i64_array(starts), "ends": i64_array(ends), "axes": i64_array(axes), "steps": i64_array(steps)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        shape = shapes.slice_shape(
            tensor_shape(operand_types[0]),
            cls.prop(props, "starts"),
            cls.prop(props, "ends"),
            cls.prop(props, "axes"),
            cls.prop(props, "steps"),
        )
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class PadOp(GraphOp):
    """ONNX Pad: `pads` holds every axis' begin, then every axis' end; negative pads crop."""

    name = "graph.pad"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    pads = prop_def(I64_ARRAY)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("constant"))
    value = opt_prop_def(FloatAttr[Float64Type], default_value=f64_attr(0.0))
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"
    MODES: ClassVar = ("constant", "edge", "reflect", "wrap")

    def __init__(self, input: SSAValue, pads: Sequence[int], mode: str = "constant", value: float = 0.0):
        props = {"pads": i64_array(pads), "mode": StringAttr(mode), "value": f64_attr(value)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))

    @classmethod
    def infer(cls, operand_types, props):
        x = tensor_shape(operand_types[0])
        pads = cls.prop(props, "pads")
        mode = cls.prop(props, "mode")
        if mode not in cls.MODES:
            raise VerifyException(f"mode must be one of {', '.join(cls.MODES)}, got '{mode}'")
        shapes.require_length(pads, 2 * len(x), "pads")
        shape = tuple(d + pads[i] + pads[i + len(x)] for i, d in enumerate(x))
        if any(d < 0 for d in shape):
            raise VerifyException(f"pads {list(pads)} crop more than the input {'x'.join(map(str, x))} holds")
        if mode == "reflect":
            for i, d in enumerate(x):
                if max(pads[i], pads[i + len(x)]) >= d:
                    raise VerifyException(f"reflect padding of axis {i} must be smaller than its size {d}")
        if mode in ("edge", "wrap") and any(d == 0 for d in x):
            raise VerifyException(f"{mode} padding needs a non-empty input")
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class ResizeOp(GraphOp):
    """ONNX Resize with one scale per axis: nearest, (n-)linear or cubic.

    `tf_crop_and_resize` samples the region `roi` (every axis' start, then every axis'
    end, as fractions of the input) and writes `extrapolation_value` outside it."""

    name = "graph.resize"
    FLOAT_ONLY: ClassVar[bool] = True
    input = operand_def(TensorType)
    output = result_def(TensorType)
    scales = prop_def(F64_ARRAY)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("nearest"))
    coordinate_transformation_mode = opt_prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    nearest_mode = opt_prop_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    cubic_coeff_a = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(-0.75))
    exclude_outside = opt_prop_def(UnitAttr)
    roi = opt_prop_def(F64_ARRAY)
    extrapolation_value = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.0))
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    MODES: ClassVar = ("nearest", "linear", "cubic")
    COORDINATE_MODES: ClassVar = (
        "half_pixel",
        "half_pixel_symmetric",
        "pytorch_half_pixel",
        "align_corners",
        "asymmetric",
        "tf_crop_and_resize",
    )
    NEAREST_MODES: ClassVar = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")

    def __init__(
        self,
        input: SSAValue,
        scales: Sequence[float],
        *,
        mode: str = "nearest",
        coordinate_transformation_mode: str = "half_pixel",
        nearest_mode: str = "round_prefer_floor",
        sizes: Sequence[int] | None = None,
        cubic_coeff_a: float = -0.75,
        exclude_outside: bool = False,
        roi: Sequence[float] | None = None,
        extrapolation_value: float = 0.0,
    ):
        props = _drop_none(
            {
                "scales": f64_array(scales),
                "mode": StringAttr(mode),
                "coordinate_transformation_mode": StringAttr(coordinate_transformation_mode),
                "nearest_mode": StringAttr(nearest_mode),
                "cubic_coeff_a": f32_attr(cubic_coeff_a),
                "exclude_outside": flag(exclude_outside),
                "roi": None if roi is None else f64_array(roi),
                "extrapolation_value": f32_attr(extrapolation_value),
            }
        )
        x = tensor_shape(input.type)
        shape = tuple(sizes) if sizes is not None else tuple(int(d * s) for d, s in zip(x, scales, strict=True))
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    def verify_(self) -> None:
        for value in (self.input, self.output):
            if not value.type.has_static_shape():
                raise VerifyException(f"expects statically shaped tensors, got {value.type}")
        if not is_float(self.input.type.element_type) or self.input.type.element_type != self.output.type.element_type:
            raise VerifyException(f"expects floating-point tensors of one element type, got {self.input.type}")
        for name, allowed in (
            ("mode", self.MODES),
            ("coordinate_transformation_mode", self.COORDINATE_MODES),
            ("nearest_mode", self.NEAREST_MODES),
        ):
            if self.prop_value(name) not in allowed:
                raise VerifyException(f"{name} must be one of {', '.join(allowed)}, got '{self.prop_value(name)}'")
        x, y = tensor_shape(self.input.type), tensor_shape(self.output.type)
        scales = self.prop_value("scales")
        shapes.require_length(scales, len(x), "scales")
        if len(y) != len(x):
            raise VerifyException(f"changes the rank: {self.input.type} to {self.output.type}")
        roi = self.prop_value("roi") or None
        if self.prop_value("coordinate_transformation_mode") == "tf_crop_and_resize":
            if roi is None:
                raise VerifyException("tf_crop_and_resize needs a roi")
            shapes.require_length(roi, 2 * len(x), "roi")
        elif roi is not None:
            raise VerifyException("roi is only used by tf_crop_and_resize")
        for axis, (d, s, o) in enumerate(zip(x, scales, y, strict=True)):
            if s <= 0:
                raise VerifyException(f"scales must be positive, got {list(scales)}")
            # tf_crop_and_resize samples the roi at any output size; other modes scale.
            if roi is None and abs(d * s - o) >= 1.0:
                raise VerifyException(f"axis {axis}: size {d} scaled by {s} cannot give {o}")


class AxesOp(GraphOp):
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input: SSAValue, axes: Sequence[int]):
        props = {"axes": i64_array(axes)}
        super().__init__(operands=[input], properties=props, result_types=self.infer([input.type], props))


@irdl_op_definition
class SqueezeOp(AxesOp):
    name = "graph.squeeze"

    @classmethod
    def infer(cls, operand_types, props):
        shape = shapes.squeeze_shape(tensor_shape(operand_types[0]), cls.prop(props, "axes"))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class UnsqueezeOp(AxesOp):
    name = "graph.unsqueeze"

    @classmethod
    def infer(cls, operand_types, props):
        shape = shapes.unsqueeze_shape(tensor_shape(operand_types[0]), cls.prop(props, "axes"))
        return [TensorType(operand_types[0].element_type, shape)]


@irdl_op_definition
class GatherOp(GraphOp):
    """ONNX Gather: picks `indices` (i32 or i64, negative from the end) along `axis`."""

    name = "graph.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int = 0):
        props = {"axis": i64_attr(axis)}
        super().__init__(
            operands=[data, indices], properties=props, result_types=self.infer([data.type, indices.type], props)
        )

    @classmethod
    def infer(cls, operand_types, props):
        data, indices = operand_types
        if not isinstance(indices.element_type, IntegerType) or indices.element_type.width.data not in (32, 64):
            raise VerifyException(f"indices must be i32 or i64, got {indices}")
        x = tensor_shape(data)
        axis = shapes.normalize_axis(cls.prop(props, "axis"), len(x))
        return [TensorType(data.element_type, x[:axis] + tensor_shape(indices) + x[axis + 1 :])]


Graph = Dialect(
    "graph",
    [
        ConstantOp,
        ReluOp,
        LeakyReluOp,
        GeluOp,
        SigmoidOp,
        TanhOp,
        SiluOp,
        HardSwishOp,
        HardSigmoidOp,
        ClipOp,
        ErfOp,
        SqrtOp,
        ExpOp,
        NegOp,
        ReciprocalOp,
        NotOp,
        CastOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        EqualOp,
        GreaterOp,
        GreaterOrEqualOp,
        LessOp,
        LessOrEqualOp,
        AndOp,
        OrOp,
        XorOp,
        SumOp,
        WhereOp,
        Conv2dOp,
        ConvTranspose2dOp,
        MatMulOp,
        GemmOp,
        BatchNormOp,
        MaxPool2dOp,
        AvgPool2dOp,
        GlobalAvgPoolOp,
        SoftmaxOp,
        LayerNormOp,
        ReduceMeanOp,
        ReduceSumOp,
        ReduceMaxOp,
        ReshapeOp,
        ExpandOp,
        FlattenOp,
        TransposeOp,
        ConcatOp,
        SplitOp,
        SliceOp,
        PadOp,
        ResizeOp,
        SqueezeOp,
        UnsqueezeOp,
        GatherOp,
    ],
    [],
)
