"""The `op` dialect: what one kernel computes, with every layout explicit.

Each op names the layout of its operands: activations are "NHWC" or "NCHW", conv
filters "OHWI" or "OIHW", GEMM operands "row" or "col" major. GEMMs and convs carry
their epilogue as one structured attribute, `#op.epilogue<...>`:

    out = act2( act(alpha * acc + beta * bias)  (+ or *)  residual )

where `bias` (per output channel) and `residual` (the output's shape) are optional
operands. Back-to-back ops (`b2b_gemm`, `b2b_conv2d`) chain two of them in one
persistent kernel, each with its own epilogue. Elementwise work is `op.unary`,
`op.binary`, `op.select` and `op.cast` until `fuse-elementwise` turns chains of them into
one `op.elementwise`, whose body is scalar `arith`/`math` code ending in `op.yield`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Block, Dialect, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.graph import (
    F64_ARRAY,
    I64_ARRAY,
    f32_attr,
    f64_array,
    i64_array,
    i64_attr,
    is_float,
    parse_constant,
    print_constant,
    python_value,
    tensor_shape,
)
from boltir.dialects.graph import CastOp as GraphCastOp
from boltir.dialects.graph import ResizeOp as GraphResizeOp
from boltir.dialects.shapes import Shape

# --------------------------------------------------------------------- activations

ACTIVATION_ARITY: dict[str, int] = {
    "none": 0,
    "relu": 0,
    "clip": 2,  # min, max
    "gelu": 0,  # the erf form
    "gelu_tanh": 0,
    "sigmoid": 0,
    "silu": 0,
    "hardswish": 0,
    "tanh": 0,
    "leaky_relu": 1,  # alpha
    "hardsigmoid": 2,  # alpha, beta
}
"""The activations an epilogue applies, with how many float arguments each takes."""

UNBOUNDED = sys.float_info.max
"""Stands for a missing clip bound (clip's args are two floats): `-UNBOUNDED` for no
minimum, `UNBOUNDED` for no maximum."""

UNARY_ARITY: dict[str, int] = {
    **{k: v for k, v in ACTIVATION_ARITY.items() if k != "none"},
    "identity": 0,
    "erf": 0,
    "sqrt": 0,
    "exp": 0,
    "neg": 0,
    "reciprocal": 0,
    "not": 0,
}
"""Every function `op.unary` applies: the activations, plain math and logical not (on i1)."""

COMPARISON_FUNCTIONS = ("equal", "greater", "greater_equal", "less", "less_equal")
"""The `op.binary` functions that compare their operands and give i1."""
LOGICAL_FUNCTIONS = ("and", "or", "xor")
"""The `op.binary` functions on i1 operands."""
BINARY_FUNCTIONS = ("add", "sub", "mul", "div", "pow", *COMPARISON_FUNCTIONS, *LOGICAL_FUNCTIONS)
RESIDUAL_KINDS = ("none", "add", "mul")


def format_float(value: float) -> str:
    """A float as the IR parser reads it back: always with a decimal point (Python's
    `repr` writes 1e-05, which the MLIR lexer reads as the integer 1 and an identifier)."""
    text = repr(float(value))
    if not math.isfinite(value):
        raise VerifyException(f"epilogue values must be finite, got {text}")
    mantissa, exponent, power = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + exponent + power


@dataclass(frozen=True)
class Activation:
    kind: str = "none"
    args: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ACTIVATION_ARITY:
            raise VerifyException(f"unknown activation '{self.kind}'; known: {', '.join(ACTIVATION_ARITY)}")
        if len(self.args) != ACTIVATION_ARITY[self.kind]:
            arity = ACTIVATION_ARITY[self.kind]
            raise VerifyException(f"activation {self.kind} takes {arity} argument{'' if arity == 1 else 's'}, got {len(self.args)}")
        if not all(math.isfinite(a) for a in self.args):
            raise VerifyException(f"activation {self.kind} takes finite arguments, got {', '.join(map(repr, self.args))}")

    def __str__(self) -> str:
        if not self.args:
            return self.kind
        return f"{self.kind}({', '.join(format_float(a) for a in self.args)})"


def _parse_activation(parser: AttrParser) -> Activation:
    kind = parser.parse_identifier(context_msg=" (an activation)")
    args: list[float] = []
    if parser.parse_optional_punctuation("(") is not None:
        args.append(float(parser.parse_number()))
        while parser.parse_optional_punctuation(",") is not None:
            args.append(float(parser.parse_number()))
        parser.parse_punctuation(")")
    try:
        return Activation(kind, tuple(args))
    except VerifyException as error:
        parser.raise_error(str(error))


def _floats(values: Sequence[float]) -> ArrayAttr:
    return ArrayAttr([FloatAttr(float(v), 64) for v in values])


@irdl_attr_definition
class EpilogueAttr(ParametrizedAttribute):
    """What a GEMM or conv does to its accumulator before storing it:
    `act2(act(alpha * acc + beta * bias) <residual> residual)`.

    Printed as `#op.epilogue<alpha = 0.5, bias, relu, residual = add, then relu>`; every
    item is optional and `#op.epilogue<>` stores the accumulator as it is."""

    name = "op.epilogue"

    alpha: FloatAttr = param_def()
    beta: FloatAttr = param_def()
    bias: IntAttr = param_def()
    activation: StringAttr = param_def()
    activation_args: ArrayAttr = param_def()
    residual: StringAttr = param_def()
    activation2: StringAttr = param_def()
    activation2_args: ArrayAttr = param_def()

    @staticmethod
    def make(
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        bias: bool = False,
        activation: Activation = Activation(),
        residual: str = "none",
        activation2: Activation = Activation(),
    ) -> EpilogueAttr:
        return EpilogueAttr(
            FloatAttr(float(alpha), 64),
            FloatAttr(float(beta), 64),
            IntAttr(int(bias)),
            StringAttr(activation.kind),
            _floats(activation.args),
            StringAttr(residual),
            StringAttr(activation2.kind),
            _floats(activation2.args),
        )

    # Python views
    @property
    def has_bias(self) -> bool:
        return bool(self.bias.data)

    @property
    def first_activation(self) -> Activation:
        return Activation(self.activation.data, tuple(a.value.data for a in self.activation_args.data))

    @property
    def second_activation(self) -> Activation:
        return Activation(self.activation2.data, tuple(a.value.data for a in self.activation2_args.data))

    @property
    def residual_kind(self) -> str:
        return self.residual.data

    def with_changes(self, **changes) -> EpilogueAttr:
        fields = {
            "alpha": self.alpha.value.data,
            "beta": self.beta.value.data,
            "bias": self.has_bias,
            "activation": self.first_activation,
            "residual": self.residual_kind,
            "activation2": self.second_activation,
        }
        fields.update(changes)
        return EpilogueAttr.make(**fields)

    @property
    def is_identity(self) -> bool:
        return self == EpilogueAttr.make()

    def describe(self) -> list[str]:
        items = []
        if self.alpha.value.data != 1.0:
            items.append(f"alpha = {format_float(self.alpha.value.data)}")
        if self.beta.value.data != 1.0:
            items.append(f"beta = {format_float(self.beta.value.data)}")
        if self.has_bias:
            items.append("bias")
        if self.first_activation.kind != "none":
            items.append(str(self.first_activation))
        if self.residual_kind != "none":
            items.append(f"residual = {self.residual_kind}")
        if self.second_activation.kind != "none":
            items.append(f"then {self.second_activation}")
        return items

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{', '.join(self.describe())}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        fields: dict = {}
        parser.parse_punctuation("<")
        if parser.parse_optional_punctuation(">") is not None:
            return list(EpilogueAttr.make().parameters)
        while True:
            if parser.parse_optional_keyword("alpha") is not None:
                parser.parse_punctuation("=")
                key, value = "alpha", float(parser.parse_number())
            elif parser.parse_optional_keyword("beta") is not None:
                parser.parse_punctuation("=")
                key, value = "beta", float(parser.parse_number())
            elif parser.parse_optional_keyword("bias") is not None:
                key, value = "bias", True
            elif parser.parse_optional_keyword("residual") is not None:
                parser.parse_punctuation("=")
                key, value = "residual", parser.parse_keyword_in(("add", "mul"), " (residual kind)")
            elif parser.parse_optional_keyword("then") is not None:
                key, value = "activation2", _parse_activation(parser)
            else:
                key, value = "activation", _parse_activation(parser)
            if key in fields:
                what = {"activation": "an activation", "activation2": "a second activation"}.get(key, key)
                parser.raise_error(f"the epilogue has {what} twice")
            fields[key] = value
            if parser.parse_optional_punctuation(">") is not None:
                break
            parser.parse_punctuation(",")
        try:
            return list(EpilogueAttr.make(**fields).parameters)
        except VerifyException as error:
            parser.raise_error(str(error))

    def verify(self) -> None:
        if self.residual.data not in RESIDUAL_KINDS:
            raise VerifyException(f"residual must be one of {', '.join(RESIDUAL_KINDS)}, got '{self.residual.data}'")
        if self.activation2.data != "none" and self.residual.data == "none":
            raise VerifyException("a second activation needs a residual before it")
        for name in ("alpha", "beta"):
            if not math.isfinite(getattr(self, name).value.data):
                raise VerifyException(f"{name} must be finite, got {getattr(self, name).value.data!r}")
        self.first_activation, self.second_activation  # noqa: B018 -- validates kinds and arity


IDENTITY_EPILOGUE = EpilogueAttr.make()

ACTIVATION_LAYOUTS = ("NHWC", "NCHW")
FILTER_LAYOUTS = {"NHWC": "OHWI", "NCHW": "OIHW"}
TRANSPOSED_FILTER_LAYOUTS = {"NHWC": "IHWO", "NCHW": "IOHW"}
MATRIX_LAYOUTS = ("row", "col")


def layout_string(options: Sequence[str]):
    return opt_prop_def(StringAttr, default_value=StringAttr(options[0]))


def check_choice(what: str, value: str, options: Sequence[str]) -> None:
    if value not in options:
        raise VerifyException(f"{what} must be one of {', '.join(options)}, got '{value}'")


def split_attr_dict(cls: type[IRDLOperation], entries: dict[str, Attribute]) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """A custom form's attribute dictionary as (properties, discardable attributes): the
    op's declared properties are read from it, as `ParsePropInAttrDict` does."""
    declared = cls.get_irdl_definition().properties
    properties = {name: value for name, value in entries.items() if name in declared}
    attributes = {name: value for name, value in entries.items() if name not in declared}
    return properties, attributes


def static_tensors(op: IRDLOperation) -> None:
    for value in (*op.operands, *op.results):
        if not isinstance(value.type, TensorType) or not value.type.has_static_shape():
            raise VerifyException(f"expects statically shaped tensors, got {value.type}")


def same_element_type(values: Sequence[SSAValue], what: str) -> None:
    elements = list(dict.fromkeys(str(v.type.element_type) for v in values))
    if len(elements) > 1:
        raise VerifyException(f"{what} must share one element type, got {' and '.join(elements)}")


def expect_type(what: str, actual: Attribute, expected: TensorType) -> None:
    if actual != expected:
        raise VerifyException(f"{what} type {actual} does not match {expected}, inferred from the operands and attributes")


def check_epilogue_operands(epilogue: EpilogueAttr, bias: SSAValue | None, residual: SSAValue | None, channels: int, out: TensorType) -> None:
    """The epilogue's bias and residual flags agree with the operands that are present."""
    if epilogue.has_bias != (bias is not None):
        raise VerifyException("the epilogue's bias flag and the bias operand disagree")
    if (epilogue.residual_kind != "none") != (residual is not None):
        raise VerifyException("the epilogue's residual and the residual operand disagree")
    if bias is not None and tensor_shape(bias.type) != (channels,):
        raise VerifyException(f"bias must have shape {channels}, got {bias.type}")
    if residual is not None and residual.type != out:
        raise VerifyException(f"residual type {residual.type} must be the output type {out}")


class OpBase(IRDLOperation):
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def prop_value(self, name: str):
        """The Python value of a property, or its declared default when absent."""
        if name in self.properties:
            return python_value(self.properties[name])
        definition = type(self).get_irdl_definition().properties[name]
        return python_value(getattr(definition, "default_value", None))


class KeywordOperandsFormat(IRDLOperation):
    """Custom syntax for ops with optional operands named by a keyword:

        op.gemm %a, %b bias %c residual %r {attributes} : (types of the operands) -> type

    `REQUIRED` lists the positional operands, `OPTIONAL` the optional ones in order; the
    operand types follow the operands as printed."""

    REQUIRED: ClassVar[tuple[str, ...]] = ()
    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse(cls, parser: Parser):
        start = parser.pos
        unresolved = [parser.parse_unresolved_operand()]
        for _ in cls.REQUIRED[1:]:
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        segments: list = [[u] for u in unresolved]
        for keyword in cls.OPTIONAL:
            if parser.parse_optional_keyword(keyword) is not None:
                operand = parser.parse_unresolved_operand()
                unresolved.append(operand)
                segments.append([operand])
            else:
                segments.append([])
        properties, attributes = split_attr_dict(cls, parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        resolved = iter(parser.resolve_operands(unresolved, function_type.inputs.data, start))
        operands = [[next(resolved) for _ in segment] for segment in segments]
        return cls.build(
            operands=operands, properties=properties, attributes=attributes, result_types=list(function_type.outputs.data)
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([getattr(self, name) for name in self.REQUIRED], printer.print_operand)
        for keyword in self.OPTIONAL:
            if (value := getattr(self, keyword)) is not None:
                printer.print_string(f" {keyword} ")
                printer.print_operand(value)
        definition = type(self).get_irdl_definition()
        shown = {
            name: value
            for name, value in self.properties.items()
            if name != "operandSegmentSizes"
            and not (name in definition.properties and getattr(definition.properties[name], "default_value", None) == value)
        }
        printer.print_op_attributes({**shown, **self.attributes})
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)


# ------------------------------------------------------------------------ constant


@irdl_op_definition
class ConstantOp(OpBase):
    """A weight or small constant (as `graph.constant`)."""

    name = "op.constant"
    value = prop_def(base(DenseResourceAttr) | base(DenseIntOrFPElementsAttr))
    output = result_def(TensorType)

    def __init__(self, value: DenseResourceAttr | DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    def verify_(self) -> None:
        if self.output.type != self.value.get_type():
            raise VerifyException(f"result type {self.output.type} does not match the value's {self.value.get_type()}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        return parse_constant(cls, parser)

    def print(self, printer: Printer) -> None:
        print_constant(self, printer)


# ------------------------------------------------------------------------- GEMM


def gemm_shape(a: Shape, b: Shape, layout_a: str, layout_b: str) -> tuple[Shape, int, int, int]:
    """Output shape and (M, N, K) of a (batched, broadcast) GEMM."""
    if len(a) < 2 or len(b) < 2:
        raise VerifyException(f"GEMM operands need rank 2 or more, got {len(a)} and {len(b)}")
    m, k = (a[-2], a[-1]) if layout_a == "row" else (a[-1], a[-2])
    kb, n = (b[-2], b[-1]) if layout_b == "row" else (b[-1], b[-2])
    if k != kb:
        raise VerifyException(f"contraction mismatch: A is {m}x{k} but B is {kb}x{n}")
    batch = shapes.broadcast_shapes(a[:-2], b[:-2])
    return (*batch, m, n), m, n, k


@irdl_op_definition
class GemmOp(KeywordOperandsFormat, OpBase):
    """`D = epilogue(A @ B)`. A is M×K ("row") or stored K×M ("col"); B is K×N ("row") or
    stored N×K ("col", like a Linear layer's weight). Leading batch dimensions broadcast
    (attention's batched GEMMs); the output is row-major [batch..., M, N]."""

    name = "op.gemm"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    output = result_def(TensorType)
    layout_a = layout_string(MATRIX_LAYOUTS)
    layout_b = layout_string(MATRIX_LAYOUTS)
    epilogue = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    REQUIRED: ClassVar = ("a", "b")
    OPTIONAL: ClassVar = ("bias", "residual")

    def __init__(self, a, b, *, bias=None, residual=None, layout_a="row", layout_b="row", epilogue=None, result_type=None):
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        props = {"layout_a": StringAttr(layout_a), "layout_b": StringAttr(layout_b), "epilogue": epilogue}
        if result_type is None:
            shape, *_ = gemm_shape(tensor_shape(a.type), tensor_shape(b.type), layout_a, layout_b)
            result_type = TensorType(a.type.element_type, shape)
        super().__init__(
            operands=[a, b, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=props,
            result_types=[result_type],
        )

    @property
    def problem(self) -> tuple[int, int, int]:
        _, m, n, k = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b.type), self.prop_value("layout_a"), self.prop_value("layout_b"))
        return m, n, k

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout_a", self.prop_value("layout_a"), MATRIX_LAYOUTS)
        check_choice("layout_b", self.prop_value("layout_b"), MATRIX_LAYOUTS)
        if self.a.type.element_type != self.b.type.element_type:
            raise VerifyException("A and B must share one element type")
        shape, _, n, _ = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b.type), self.prop_value("layout_a"), self.prop_value("layout_b"))
        expected = TensorType(self.output.type.element_type, shape)
        expect_type("result", self.output.type, expected)
        check_epilogue_operands(self.epilogue, self.bias, self.residual, n, self.output.type)


# ------------------------------------------------------------------------- convs


def conv_output_shape(
    x: Shape, w: Shape, layout: str, filter_layout: str, strides, pads, dilations, groups: int
) -> tuple[Shape, int]:
    """NHWC or NCHW output shape of a conv, and its output channels."""
    n, h, wd, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
    if filter_layout == "OHWI":
        k, kh, kw, cg = w
    else:
        k, cg, kh, kw = w
    if groups < 1 or c % groups or k % groups:
        raise VerifyException(f"groups {groups} must divide input channels {c} and output channels {k}")
    if cg != c // groups:
        raise VerifyException(f"filter has {cg} input channels per group, expected {c // groups}")
    oh = shapes.window_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0])
    ow = shapes.window_output_size(wd, kw, strides[1], pads[1], pads[3], dilations[1])
    return ((n, oh, ow, k) if layout == "NHWC" else (n, k, oh, ow)), k


class ConvBase(KeywordOperandsFormat, OpBase):
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    output = result_def(TensorType)
    layout = layout_string(ACTIVATION_LAYOUTS)
    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    """top, left, bottom, right"""
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    groups = opt_prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    epilogue = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    REQUIRED: ClassVar = ("input", "filter")
    OPTIONAL: ClassVar = ("bias", "residual")

    def window(self) -> tuple:
        return (self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations"), self.prop_value("groups"))

    def check_window(self) -> None:
        strides, pads, dilations, groups = self.window()
        shapes.require_length(strides, 2, "strides")
        shapes.require_length(pads, 4, "pads")
        shapes.require_length(dilations, 2, "dilations")
        shapes.require_positive(strides, "strides")
        shapes.require_positive(dilations, "dilations")
        shapes.require_non_negative(pads, "pads")

    @property
    def output_channels(self) -> int:
        shape = tensor_shape(self.output.type)
        return shape[3] if self.prop_value("layout") == "NHWC" else shape[1]


def _conv_props(layout, filter_layout, strides, pads, dilations, groups, epilogue) -> dict:
    return {
        "layout": StringAttr(layout),
        "filter_layout": StringAttr(filter_layout),
        "strides": i64_array(strides),
        "pads": i64_array(pads),
        "dilations": i64_array(dilations),
        "groups": i64_attr(groups),
        "epilogue": epilogue,
    }


@irdl_op_definition
class Conv2dOp(ConvBase):
    """An implicit-GEMM conv: NHWC activations with OHWI filters (or NCHW with OIHW),
    grouped and depthwise included, with a fused epilogue."""

    name = "op.conv2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OHWI"))

    def __init__(
        self, input, filter, *, bias=None, residual=None, layout="NHWC", filter_layout=None, strides=(1, 1),
        pads=(0, 0, 0, 0), dilations=(1, 1), groups=1, epilogue=None,
    ):
        filter_layout = filter_layout or FILTER_LAYOUTS[layout]
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        shape, _ = conv_output_shape(
            tensor_shape(input.type), tensor_shape(filter.type), layout, filter_layout, strides, pads, dilations, groups
        )
        super().__init__(
            operands=[input, filter, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=_conv_props(layout, filter_layout, strides, pads, dilations, groups, epilogue),
            result_types=[TensorType(input.type.element_type, shape)],
        )

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        check_choice("filter_layout", self.prop_value("filter_layout"), tuple(FILTER_LAYOUTS.values()))
        self.check_window()
        if self.input.type.get_num_dims() != 4 or self.filter.type.get_num_dims() != 4:
            raise VerifyException("expects a 4-D input and a 4-D filter")
        same_element_type([self.input, self.filter], "the input and the filter")
        strides, pads, dilations, groups = self.window()
        shape, k = conv_output_shape(
            tensor_shape(self.input.type), tensor_shape(self.filter.type), self.prop_value("layout"),
            self.prop_value("filter_layout"), strides, pads, dilations, groups,
        )
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, k, self.output.type)


@irdl_op_definition
class ConvTranspose2dOp(ConvBase):
    """A transposed conv (ONNX ConvTranspose): filters C×(K/groups)×kH×kW ("IOHW") or
    C×kH×kW×(K/groups) ("IHWO"), with a fused epilogue."""

    name = "op.conv_transpose2d"
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("IHWO"))
    output_padding = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0]))

    def __init__(
        self, input, filter, *, bias=None, residual=None, layout="NHWC", filter_layout=None, strides=(1, 1),
        pads=(0, 0, 0, 0), dilations=(1, 1), groups=1, output_padding=(0, 0), epilogue=None,
    ):
        filter_layout = filter_layout or TRANSPOSED_FILTER_LAYOUTS[layout]
        epilogue = epilogue or EpilogueAttr.make(bias=bias is not None, residual="add" if residual is not None else "none")
        props = _conv_props(layout, filter_layout, strides, pads, dilations, groups, epilogue)
        props["output_padding"] = i64_array(output_padding)
        shape = self._shape(tensor_shape(input.type), tensor_shape(filter.type), layout, filter_layout, strides, pads, dilations, groups, output_padding)
        super().__init__(
            operands=[input, filter, [bias] if bias is not None else [], [residual] if residual is not None else []],
            properties=props,
            result_types=[TensorType(input.type.element_type, shape)],
        )

    @staticmethod
    def _shape(x, w, layout, filter_layout, strides, pads, dilations, groups, output_padding) -> Shape:
        n, h, wd, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
        if filter_layout == "IHWO":
            wc, kh, kw, kg = w
        else:
            wc, kg, kh, kw = w
        if wc != c or groups < 1 or c % groups:
            raise VerifyException(f"filter has {wc} input channels for an input of {c} in {groups} groups")
        k = kg * groups
        oh = shapes.conv_transpose_output_size(h, kh, strides[0], pads[0], pads[2], dilations[0], output_padding[0])
        ow = shapes.conv_transpose_output_size(wd, kw, strides[1], pads[1], pads[3], dilations[1], output_padding[1])
        return (n, oh, ow, k) if layout == "NHWC" else (n, k, oh, ow)

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        check_choice("filter_layout", self.prop_value("filter_layout"), tuple(TRANSPOSED_FILTER_LAYOUTS.values()))
        self.check_window()
        same_element_type([self.input, self.filter], "the input and the filter")
        strides, pads, dilations, groups = self.window()
        shape = self._shape(
            tensor_shape(self.input.type), tensor_shape(self.filter.type), self.prop_value("layout"),
            self.prop_value("filter_layout"), strides, pads, dilations, groups, self.prop_value("output_padding"),
        )
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, shape))
        check_epilogue_operands(self.epilogue, self.bias, self.residual, self.output_channels, self.output.type)


# ------------------------------------------------------------ back-to-back (persistent)


@irdl_op_definition
class B2bGemmOp(KeywordOperandsFormat, OpBase):
    """Two GEMMs in one persistent kernel: `D1 = epilogue1(epilogue0(A @ B0) @ B1)`; the
    intermediate (M×N0) never leaves the chip. No residuals: bias and activation only."""

    name = "op.b2b_gemm"
    a = operand_def(TensorType)
    b0 = operand_def(TensorType)
    b1 = operand_def(TensorType)
    bias0 = opt_operand_def(TensorType)
    bias1 = opt_operand_def(TensorType)
    output = result_def(TensorType)
    layout_a = layout_string(MATRIX_LAYOUTS)
    layout_b0 = layout_string(MATRIX_LAYOUTS)
    layout_b1 = layout_string(MATRIX_LAYOUTS)
    epilogue0 = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    epilogue1 = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    REQUIRED: ClassVar = ("a", "b0", "b1")
    OPTIONAL: ClassVar = ("bias0", "bias1")

    def __init__(self, a, b0, b1, *, bias0=None, bias1=None, layout_a="row", layout_b0="row", layout_b1="row", epilogue0, epilogue1, result_type):
        super().__init__(
            operands=[a, b0, b1, [bias0] if bias0 is not None else [], [bias1] if bias1 is not None else []],
            properties={
                "layout_a": StringAttr(layout_a),
                "layout_b0": StringAttr(layout_b0),
                "layout_b1": StringAttr(layout_b1),
                "epilogue0": epilogue0,
                "epilogue1": epilogue1,
            },
            result_types=[result_type],
        )

    def verify_(self) -> None:
        static_tensors(self)
        for name in ("layout_a", "layout_b0", "layout_b1"):
            check_choice(name, self.prop_value(name), MATRIX_LAYOUTS)
        same_element_type([self.a, self.b0, self.b1], "A, B0 and B1")
        first, m, n0, _ = gemm_shape(tensor_shape(self.a.type), tensor_shape(self.b0.type), self.prop_value("layout_a"), self.prop_value("layout_b0"))
        second, _, n1, _ = gemm_shape(first, tensor_shape(self.b1.type), "row", self.prop_value("layout_b1"))
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, second))
        intermediate = TensorType(self.output.type.element_type, first)
        for epilogue, bias, channels in ((self.epilogue0, self.bias0, n0), (self.epilogue1, self.bias1, n1)):
            if epilogue.residual_kind != "none":
                raise VerifyException("back-to-back epilogues take no residual")
            check_epilogue_operands(epilogue, bias, None, channels, intermediate)


@irdl_op_definition
class B2bConv2dOp(KeywordOperandsFormat, OpBase):
    """Two convs in one persistent kernel: any conv, then a 1×1 stride-1 unpadded conv of
    its output, each with a bias + activation epilogue."""

    name = "op.b2b_conv2d"
    input = operand_def(TensorType)
    filter0 = operand_def(TensorType)
    filter1 = operand_def(TensorType)
    bias0 = opt_operand_def(TensorType)
    bias1 = opt_operand_def(TensorType)
    output = result_def(TensorType)
    layout = layout_string(ACTIVATION_LAYOUTS)
    filter_layout = opt_prop_def(StringAttr, default_value=StringAttr("OHWI"))
    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    epilogue0 = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    epilogue1 = opt_prop_def(EpilogueAttr, default_value=IDENTITY_EPILOGUE)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    REQUIRED: ClassVar = ("input", "filter0", "filter1")
    OPTIONAL: ClassVar = ("bias0", "bias1")

    def __init__(self, input, filter0, filter1, *, bias0=None, bias1=None, layout="NHWC", filter_layout=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), epilogue0, epilogue1, result_type):
        super().__init__(
            operands=[input, filter0, filter1, [bias0] if bias0 is not None else [], [bias1] if bias1 is not None else []],
            properties={
                "layout": StringAttr(layout),
                "filter_layout": StringAttr(filter_layout or FILTER_LAYOUTS[layout]),
                "strides": i64_array(strides),
                "pads": i64_array(pads),
                "dilations": i64_array(dilations),
                "epilogue0": epilogue0,
                "epilogue1": epilogue1,
            },
            result_types=[result_type],
        )

    def verify_(self) -> None:
        static_tensors(self)
        layout, filter_layout = self.prop_value("layout"), self.prop_value("filter_layout")
        check_choice("layout", layout, ACTIVATION_LAYOUTS)
        check_choice("filter_layout", filter_layout, tuple(FILTER_LAYOUTS.values()))
        same_element_type([self.input, self.filter0, self.filter1], "the input and the filters")
        strides, pads, dilations = self.prop_value("strides"), self.prop_value("pads"), self.prop_value("dilations")
        first, k0 = conv_output_shape(tensor_shape(self.input.type), tensor_shape(self.filter0.type), layout, filter_layout, strides, pads, dilations, 1)
        w1 = tensor_shape(self.filter1.type)
        spatial = w1[1:3] if filter_layout == "OHWI" else w1[2:4]
        if spatial != (1, 1):
            raise VerifyException(f"the second conv must be 1x1, got a {spatial[0]}x{spatial[1]} filter")
        second, k1 = conv_output_shape(first, w1, layout, filter_layout, (1, 1), (0, 0, 0, 0), (1, 1), 1)
        expect_type("result", self.output.type, TensorType(self.output.type.element_type, second))
        intermediate = TensorType(self.output.type.element_type, first)
        for epilogue, bias, channels in ((self.epilogue0, self.bias0, k0), (self.epilogue1, self.bias1, k1)):
            if epilogue.residual_kind != "none":
                raise VerifyException("back-to-back epilogues take no residual")
            check_epilogue_operands(epilogue, bias, None, channels, intermediate)


# ------------------------------------------------------------------------- pooling

POOL_KINDS = ("max", "avg", "global_avg", "global_max")


@irdl_op_definition
class Pool2dOp(OpBase):
    """Max, average or global pooling over H and W, in NHWC or NCHW."""

    name = "op.pool2d"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    kind = prop_def(StringAttr)
    layout = layout_string(ACTIVATION_LAYOUTS)
    kernel_shape = opt_prop_def(I64_ARRAY)
    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    ceil_mode = opt_prop_def(UnitAttr)
    count_include_pad = opt_prop_def(UnitAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, kind: str, *, layout="NHWC", kernel_shape=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), ceil_mode=False, count_include_pad=False):
        props = {
            "kind": StringAttr(kind),
            "layout": StringAttr(layout),
            "strides": i64_array(strides),
            "pads": i64_array(pads),
            "dilations": i64_array(dilations),
        }
        if kernel_shape is not None:
            props["kernel_shape"] = i64_array(kernel_shape)
        if ceil_mode:
            props["ceil_mode"] = UnitAttr()
        if count_include_pad:
            props["count_include_pad"] = UnitAttr()
        shape = self._shape(tensor_shape(input.type), props)
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    @classmethod
    def _shape(cls, x: Shape, props) -> Shape:
        get = lambda name, default=None: python_value(props[name]) if name in props else default  # noqa: E731
        layout = get("layout", "NHWC")
        kind = get("kind")
        n, h, w, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
        if kind.startswith("global"):
            oh = ow = 1
        else:
            kernel = get("kernel_shape")
            if kernel is None:
                raise VerifyException(f"a {kind} pool needs kernel_shape")
            strides, pads, dilations = get("strides", (1, 1)), get("pads", (0, 0, 0, 0)), get("dilations", (1, 1))
            oh = shapes.window_output_size(h, kernel[0], strides[0], pads[0], pads[2], dilations[0], get("ceil_mode", False))
            ow = shapes.window_output_size(w, kernel[1], strides[1], pads[1], pads[3], dilations[1], get("ceil_mode", False))
        return (n, oh, ow, c) if layout == "NHWC" else (n, c, oh, ow)

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("kind", self.kind.data, POOL_KINDS)
        check_choice("layout", self.prop_value("layout"), ACTIVATION_LAYOUTS)
        if self.input.type.get_num_dims() != 4:
            raise VerifyException("expects a 4-D input")
        if self.kind.data in ("avg", "global_avg") and not is_float(self.input.type.element_type):
            raise VerifyException("average pooling needs a floating-point tensor")
        if self.kind.data == "avg" and tuple(self.prop_value("dilations")) != (1, 1):
            raise VerifyException(f"an avg pool takes no dilations, got {list(self.prop_value('dilations'))}")
        shape = self._shape(tensor_shape(self.input.type), dict(self.properties))
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


# ------------------------------------------------------- normalization and reduction


@irdl_op_definition
class SoftmaxOp(OpBase):
    """Softmax along one axis, computed in f32 inside the kernel."""

    name = "op.softmax"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$input attr-dict `:` type($output)"

    def __init__(self, input, axis: int):
        super().__init__(operands=[input], properties={"axis": i64_attr(axis)}, result_types=[input.type])

    def verify_(self) -> None:
        static_tensors(self)
        shapes.normalize_axis(self.prop_value("axis"), self.input.type.get_num_dims())


@irdl_op_definition
class LayerNormOp(OpBase):
    """Normalizes the axes from `axis` on, in f32, then scales (and shifts)."""

    name = "op.layer_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[Float32Type])
    assembly_format = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def __init__(self, input, scale, bias=None, *, axis: int, epsilon: float):
        super().__init__(
            operands=[input, scale, [bias] if bias is not None else []],
            properties={"axis": i64_attr(axis), "epsilon": f32_attr(epsilon)},
            result_types=[input.type],
        )

    def verify_(self) -> None:
        static_tensors(self)
        x = tensor_shape(self.input.type)
        axis = shapes.normalize_axis(self.prop_value("axis"), len(x))
        for value in (self.scale, self.bias):
            if value is not None and not shapes.broadcasts_to(tensor_shape(value.type), x[axis:]):
                raise VerifyException(f"{value.type} does not broadcast to the normalized shape {x[axis:]}")
        expect_type("result", self.output.type, self.input.type)


REDUCE_KINDS = ("mean", "sum", "max")


@irdl_op_definition
class ReduceOp(OpBase):
    name = "op.reduce"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    kind = prop_def(StringAttr)
    axes = prop_def(I64_ARRAY)
    keepdims = opt_prop_def(UnitAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, kind: str, axes: Sequence[int], keepdims: bool):
        x = tensor_shape(input.type)
        normalized = shapes.normalize_axes(axes, len(x))
        shape = tuple(1 if i in normalized else d for i, d in enumerate(x) if keepdims or i not in normalized)
        props = {"kind": StringAttr(kind), "axes": i64_array(axes)}
        if keepdims:
            props["keepdims"] = UnitAttr()
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("kind", self.kind.data, REDUCE_KINDS)
        x = tensor_shape(self.input.type)
        axes = shapes.normalize_axes(self.prop_value("axes"), len(x))
        keep = self.prop_value("keepdims")
        shape = tuple(1 if i in axes else d for i, d in enumerate(x) if keep or i not in axes)
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


# ---------------------------------------------------------------- data movement


@irdl_op_definition
class ResizeOp(OpBase):
    """ONNX Resize on physical axes (the attributes of `graph.resize`)."""

    name = "op.resize"
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

    def verify_(self) -> None:
        static_tensors(self)
        if len(self.prop_value("scales")) != self.input.type.get_num_dims():
            raise VerifyException("scales must have one value per axis")
        # The modes and the output shape follow graph.resize's rules.
        for name, allowed in (
            ("mode", GraphResizeOp.MODES),
            ("coordinate_transformation_mode", GraphResizeOp.COORDINATE_MODES),
            ("nearest_mode", GraphResizeOp.NEAREST_MODES),
        ):
            check_choice(name, self.prop_value(name), allowed)
        if not is_float(self.input.type.element_type) or self.input.type.element_type != self.output.type.element_type:
            raise VerifyException(f"expects floating-point tensors of one element type, got {self.input.type} and {self.output.type}")
        x, y = tensor_shape(self.input.type), tensor_shape(self.output.type)
        if len(x) != len(y):
            raise VerifyException(f"changes the rank: {self.input.type} to {self.output.type}")
        crop = self.prop_value("coordinate_transformation_mode") == "tf_crop_and_resize"
        for axis, (d, scale, o) in enumerate(zip(x, self.prop_value("scales"), y, strict=True)):
            if scale <= 0 or (not crop and abs(d * scale - o) >= 1.0):
                raise VerifyException(f"axis {axis}: size {d} scaled by {scale} cannot give {o}")


@irdl_op_definition
class GatherOp(OpBase):
    name = "op.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data, indices, axis: int):
        x = tensor_shape(data.type)
        a = shapes.normalize_axis(axis, len(x))
        shape = x[:a] + tensor_shape(indices.type) + x[a + 1 :]
        super().__init__(operands=[data, indices], properties={"axis": i64_attr(axis)}, result_types=[TensorType(data.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        indices = self.indices.type.element_type
        if not isinstance(indices, IntegerType) or indices.width.data not in (32, 64):
            raise VerifyException(f"indices must be i32 or i64, got {self.indices.type}")
        x = tensor_shape(self.data.type)
        a = shapes.normalize_axis(self.prop_value("axis"), len(x))
        expected = TensorType(self.data.type.element_type, x[:a] + tensor_shape(self.indices.type) + x[a + 1 :])
        expect_type("result", self.output.type, expected)


@irdl_op_definition
class LayoutTransformOp(OpBase):
    """Moves data between layouts: a permutation of the axes (NCHW -> NHWC is [0,2,3,1])."""

    name = "op.layout_transform"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    perm = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, perm: Sequence[int]):
        x = tensor_shape(input.type)
        super().__init__(operands=[input], properties={"perm": i64_array(perm)}, result_types=[TensorType(input.type.element_type, tuple(x[p] for p in perm))])

    def verify_(self) -> None:
        static_tensors(self)
        x = tensor_shape(self.input.type)
        perm = self.prop_value("perm")
        if sorted(perm) != list(range(len(x))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of {len(x)} axes")
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, tuple(x[p] for p in perm)))


@irdl_op_definition
class ReshapeOp(OpBase):
    """A view with another shape (row-major order kept): no data moves."""

    name = "op.reshape"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, shape: Sequence[int]):
        super().__init__(operands=[input], result_types=[TensorType(input.type.element_type, tuple(shape))])

    def verify_(self) -> None:
        static_tensors(self)
        if shapes.element_count(tensor_shape(self.input.type)) != shapes.element_count(tensor_shape(self.output.type)):
            raise VerifyException(f"cannot reshape {self.input.type} into {self.output.type}")
        if self.input.type.element_type != self.output.type.element_type:
            raise VerifyException("reshape keeps the element type")


@irdl_op_definition
class PadOp(OpBase):
    """ONNX Pad (constant, edge, reflect, wrap); `pads` holds all begins then all ends."""

    name = "op.pad"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    pads = prop_def(I64_ARRAY)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("constant"))
    value = opt_prop_def(FloatAttr[Float64Type], default_value=FloatAttr(0.0, 64))
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, pads: Sequence[int], mode: str = "constant", value: float = 0.0):
        x = tensor_shape(input.type)
        shape = tuple(d + pads[i] + pads[i + len(x)] for i, d in enumerate(x))
        super().__init__(
            operands=[input],
            properties={"pads": i64_array(pads), "mode": StringAttr(mode), "value": FloatAttr(float(value), 64)},
            result_types=[TensorType(input.type.element_type, shape)],
        )

    def verify_(self) -> None:
        static_tensors(self)
        x = tensor_shape(self.input.type)
        pads = self.prop_value("pads")
        shapes.require_length(pads, 2 * len(x), "pads")
        check_choice("mode", self.prop_value("mode"), ("constant", "edge", "reflect", "wrap"))
        shape = tuple(d + pads[i] + pads[i + len(x)] for i, d in enumerate(x))
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


@irdl_op_definition
class ConcatOp(OpBase):
    name = "op.concat"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        first = tensor_shape(inputs[0].type)
        a = shapes.normalize_axis(axis, len(first))
        total = sum(tensor_shape(v.type)[a] for v in inputs)
        shape = first[:a] + (total,) + first[a + 1 :]
        super().__init__(operands=[list(inputs)], properties={"axis": i64_attr(axis)}, result_types=[TensorType(inputs[0].type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        if not self.inputs:
            raise VerifyException("expects at least one operand")
        first = tensor_shape(self.inputs[0].type)
        a = shapes.normalize_axis(self.prop_value("axis"), len(first))
        elements = list(dict.fromkeys(str(v.type.element_type) for v in (*self.inputs, self.output)))
        if len(elements) > 1:
            raise VerifyException(f"operands must share one element type, got {' and '.join(elements)}")
        for value in self.inputs:
            s = tensor_shape(value.type)
            if len(s) != len(first) or any(x != y for i, (x, y) in enumerate(zip(s, first)) if i != a):
                raise VerifyException(f"operand {value.type} does not match {self.inputs[0].type} outside axis {a}")
        total = sum(tensor_shape(v.type)[a] for v in self.inputs)
        expect_type("result", self.output.type, TensorType(self.inputs[0].type.element_type, first[:a] + (total,) + first[a + 1 :]))


@irdl_op_definition
class SliceOp(OpBase):
    """ONNX Slice with static starts, ends, axes and steps."""

    name = "op.slice"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    starts = prop_def(I64_ARRAY)
    ends = prop_def(I64_ARRAY)
    axes = prop_def(I64_ARRAY)
    steps = prop_def(I64_ARRAY)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    def __init__(self, input, starts, ends, axes, steps):
        shape = shapes.slice_shape(tensor_shape(input.type), starts, ends, axes, steps)
        props = {"starts": i64_array(starts), "ends": i64_array(ends), "axes": i64_array(axes), "steps": i64_array(steps)}
        super().__init__(operands=[input], properties=props, result_types=[TensorType(input.type.element_type, shape)])

    def verify_(self) -> None:
        static_tensors(self)
        shape = shapes.slice_shape(
            tensor_shape(self.input.type), self.prop_value("starts"), self.prop_value("ends"),
            self.prop_value("axes"), self.prop_value("steps"),
        )
        expect_type("result", self.output.type, TensorType(self.input.type.element_type, shape))


# ------------------------------------------------------------------- elementwise


def broadcast_result(values: Sequence[SSAValue], element_type: Attribute) -> TensorType:
    return TensorType(element_type, shapes.broadcast_shapes(*(tensor_shape(v.type) for v in values)))


class ElementwiseBase(OpBase):
    def check_broadcast(self, inputs: Sequence[SSAValue]) -> None:
        shape = shapes.broadcast_shapes(*(tensor_shape(v.type) for v in inputs))
        if tensor_shape(self.output.type) != shape:
            raise VerifyException(f"result shape {tensor_shape(self.output.type)} is not the broadcast shape {shape}")


@irdl_op_definition
class UnaryOp(ElementwiseBase):
    """`y = fn(x)` elementwise: an activation, a math function (`fn` and its `args`) or logical
    `not` (on i1)."""

    name = "op.unary"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    fn = prop_def(StringAttr)
    args = opt_prop_def(F64_ARRAY, default_value=f64_array([]))

    @classmethod
    def parse(cls, parser: Parser) -> UnaryOp:
        fn = parser.parse_identifier(context_msg=" (the function)")
        start = parser.pos
        operand = parser.parse_unresolved_operand()
        properties, attributes = split_attr_dict(cls, parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        (value,) = parser.resolve_operands([operand], [value_type], start)
        return cls.build(
            operands=[value], properties={"fn": StringAttr(fn), **properties}, attributes=attributes, result_types=[value_type]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.fn.data} ")
        printer.print_operand(self.input)
        shown = {"args": self.properties["args"]} if self.prop_value("args") else {}
        printer.print_op_attributes({**shown, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)

    def __init__(self, fn: str, input: SSAValue, args: Sequence[float] = ()):
        props = {"fn": StringAttr(fn), "args": f64_array(args)}
        super().__init__(operands=[input], properties=props, result_types=[input.type])

    def verify_(self) -> None:
        static_tensors(self)
        fn = self.fn.data
        check_choice("fn", fn, tuple(UNARY_ARITY))
        if len(self.prop_value("args")) != UNARY_ARITY[fn]:
            raise VerifyException(f"{fn} takes {UNARY_ARITY[fn]} arguments, got {len(self.prop_value('args'))}")
        if fn == "not":
            if self.input.type.element_type != i1:
                raise VerifyException("not needs an i1 tensor")
        elif fn not in ("relu", "neg", "identity", "clip") and not is_float(self.input.type.element_type):
            raise VerifyException(f"{fn} needs a floating-point tensor")


@irdl_op_definition
class BinaryOp(ElementwiseBase):
    """`z = fn(x, y)` elementwise with numpy broadcasting; the comparisons give i1, the
    logical functions (`and`, `or`, `xor`) take i1."""

    name = "op.binary"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)
    fn = prop_def(StringAttr)

    @classmethod
    def parse(cls, parser: Parser) -> BinaryOp:
        fn = parser.parse_identifier(context_msg=" (the function)")
        start = parser.pos
        operands = [parser.parse_unresolved_operand()]
        parser.parse_punctuation(",")
        operands.append(parser.parse_unresolved_operand())
        properties, attributes = split_attr_dict(cls, parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        values = parser.resolve_operands(operands, function_type.inputs.data, start)
        return cls.build(
            operands=list(values),
            properties={"fn": StringAttr(fn), **properties},
            attributes=attributes,
            result_types=list(function_type.outputs.data),
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.fn.data} ")
        printer.print_list([self.lhs, self.rhs], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    def __init__(self, fn: str, lhs: SSAValue, rhs: SSAValue):
        element = i1 if fn in COMPARISON_FUNCTIONS else lhs.type.element_type
        super().__init__(operands=[lhs, rhs], properties={"fn": StringAttr(fn)}, result_types=[broadcast_result([lhs, rhs], element)])

    def verify_(self) -> None:
        static_tensors(self)
        check_choice("fn", self.fn.data, BINARY_FUNCTIONS)
        if self.lhs.type.element_type != self.rhs.type.element_type:
            raise VerifyException("operands must share one element type")
        if self.fn.data in LOGICAL_FUNCTIONS and self.lhs.type.element_type != i1:
            raise VerifyException(f"{self.fn.data} needs i1 operands")
        expected = i1 if self.fn.data in COMPARISON_FUNCTIONS else self.lhs.type.element_type
        if self.output.type.element_type != expected:
            raise VerifyException(f"result element type must be {expected}")
        self.check_broadcast([self.lhs, self.rhs])


@irdl_op_definition
class SelectOp(ElementwiseBase):
    """`condition ? a : b` elementwise with broadcasting."""

    name = "op.select"
    condition = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$condition `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)"

    def __init__(self, condition, true_value, false_value):
        super().__init__(
            operands=[condition, true_value, false_value],
            result_types=[broadcast_result([condition, true_value, false_value], true_value.type.element_type)],
        )

    def verify_(self) -> None:
        static_tensors(self)
        if self.condition.type.element_type != i1:
            raise VerifyException("the condition must be i1")
        elements = [v.type.element_type for v in (self.true_value, self.false_value, self.output)]
        if len(set(elements)) > 1:
            raise VerifyException(
                f"the two values and the result must share one element type, got {elements[0]}, {elements[1]} and {elements[2]}"
            )
        self.check_broadcast([self.condition, self.true_value, self.false_value])


@irdl_op_definition
class CastOp(ElementwiseBase):
    """Element type conversion, with graph.cast's `saturate` and `round_mode`."""

    name = "op.cast"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    saturate = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    round_mode = opt_prop_def(StringAttr, default_value=StringAttr("up"))
    assembly_format = "$input attr-dict `:` type($input) `to` type($output)"

    def __init__(self, input, element_type: Attribute, *, saturate: bool = True, round_mode: str = "up"):
        super().__init__(
            operands=[input],
            properties={"saturate": BoolAttr.from_bool(saturate), "round_mode": StringAttr(round_mode)},
            result_types=[TensorType(element_type, tensor_shape(input.type))],
        )

    def verify_(self) -> None:
        static_tensors(self)
        if tensor_shape(self.input.type) != tensor_shape(self.output.type):
            raise VerifyException("cast keeps the shape")
        check_choice("round_mode", self.prop_value("round_mode"), GraphCastOp.ROUND_MODES)


@irdl_op_definition
class ElementwiseOp(ElementwiseBase):
    """A fused elementwise kernel: the inputs broadcast to the output shape, and the body
    computes one output element from one element of each input, in scalar `arith` and
    `math` ops ending in `op.yield`."""

    name = "op.elementwise"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure(), RecursiveMemoryEffect())

    def __init__(self, inputs: Sequence[SSAValue], body: Region, result_type: TensorType):
        super().__init__(operands=[list(inputs)], regions=[body], result_types=[result_type])

    def verify_(self) -> None:
        static_tensors(self)
        out = tensor_shape(self.output.type)
        for value in self.inputs:
            if not shapes.broadcasts_to(tensor_shape(value.type), out):
                raise VerifyException(f"input {value.type} does not broadcast to the result shape {out}")
        block = self.body.block
        if len(block.args) != len(self.inputs):
            raise VerifyException(f"the body takes {len(block.args)} arguments for {len(self.inputs)} inputs")
        for arg, value in zip(block.args, self.inputs, strict=True):
            if arg.type != value.type.element_type:
                raise VerifyException(f"body argument {arg.type} does not match the input's element type {value.type.element_type}")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or len(terminator.operands) != 1:
            raise VerifyException("the body must end in op.yield of one value")
        if terminator.operands[0].type != self.output.type.element_type:
            raise VerifyException("the yielded value must have the output's element type")

    @classmethod
    def parse(cls, parser: Parser) -> ElementwiseOp:
        start = parser.pos
        inputs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        attributes = parser.parse_optional_attr_dict() if parser.parse_optional_keyword("attributes") else {}
        body = parser.parse_region()
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        resolved = parser.resolve_operands(inputs, function_type.inputs.data, start)
        op = cls(resolved, body, function_type.outputs.data[0])
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends an `op.elementwise` body with the element it computed."""

    name = "op.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ElementwiseOp), Pure())
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


def elementwise_block(argument_types: Sequence[Attribute]) -> Block:
    return Block(arg_types=list(argument_types))


Op = Dialect(
    "op",
    [
        ConstantOp,
        GemmOp,
        Conv2dOp,
        ConvTranspose2dOp,
        B2bGemmOp,
        B2bConv2dOp,
        Pool2dOp,
        SoftmaxOp,
        LayerNormOp,
        ReduceOp,
        ResizeOp,
        GatherOp,
        LayoutTransformOp,
        ReshapeOp,
        PadOp,
        ConcatOp,
        SliceOp,
        UnaryOp,
        BinaryOp,
        SelectOp,
        CastOp,
        ElementwiseOp,
        YieldOp,
    ],
    [EpilogueAttr],
)
