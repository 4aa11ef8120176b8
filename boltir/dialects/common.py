"""What the tensor dialects (`graph`, `op`, `cutlass`) share: property constructors and
their Python values, verification helpers, and the bases of the op families that `graph`
and `op` both have.

A family base declares the operands, result, common properties and assembly format of
ops such as `graph.concat` and `op.concat` once. Each dialect's op subclasses it next to
its own dialect base and adds its name, the properties whose defaults differ, and its
verifier, so each dialect keeps its own printed IR and messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    BoolAttr,
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
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.shapes import Shape

Props = dict[str, Attribute]

I64_ARRAY = DenseArrayBase.constr(i64)
"""Integer array properties (strides, pads, axes, perm, ...) hold i64 values."""

F64_ARRAY = DenseArrayBase.constr(Float64Type())
"""Float array properties (resize scales) hold f64 values."""


# ------------------------------------------------------------------ property values


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


def drop_none(props: dict[str, Attribute | None]) -> Props:
    """The properties that are set: absent flags and optional values are left out."""
    return {k: v for k, v in props.items() if v is not None}


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


# ---------------------------------------------------------------------- verification


def check_choice(what: str, value: str, options: Sequence[str]) -> str:
    """`value`, if it is one of `options`."""
    if value not in options:
        raise VerifyException(f"{what} must be one of {', '.join(options)}, got '{value}'")
    return value


def static_tensors(op: IRDLOperation) -> None:
    for value in (*op.operands, *op.results):
        if not isinstance(value.type, TensorType) or not value.type.has_static_shape():
            raise VerifyException(f"expects statically shaped tensors, got {value.type}")


def expect_type(what: str, actual: Attribute, expected: TensorType) -> None:
    if actual != expected:
        raise VerifyException(f"{what} type {actual} does not match {expected}, inferred from the operands and attributes")


def gather_result_type(data: TensorType, indices: TensorType, axis: int) -> TensorType:
    """ONNX Gather's result: `data` with its `axis` replaced by the shape of `indices`."""
    if not isinstance(indices.element_type, IntegerType) or indices.element_type.width.data not in (32, 64):
        raise VerifyException(f"indices must be i32 or i64, got {indices}")
    x = tensor_shape(data)
    axis = shapes.normalize_axis(axis, len(x))
    return TensorType(data.element_type, x[:axis] + tensor_shape(indices) + x[axis + 1 :])


def concat_result_type(operand_types: Sequence[TensorType], axis: int) -> TensorType:
    """The operands joined along `axis` (already normalized), which is the only axis
    where their shapes may differ."""
    first = tensor_shape(operand_types[0])
    for value_type in operand_types:
        s = tensor_shape(value_type)
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first)) if i != axis):
            raise VerifyException(f"operand {value_type} does not match {operand_types[0]} outside axis {axis}")
    total = sum(tensor_shape(t)[axis] for t in operand_types)
    return TensorType(operand_types[0].element_type, first[:axis] + (total,) + first[axis + 1 :])


# ----------------------------------------------------------------------------- bases


class TensorOp(IRDLOperation):
    """Base of the `graph`, `op` and `cutlass` ops: pure, on tensors, with properties
    parsed from the attribute dictionary."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    @classmethod
    def prop(cls, props: Props, name: str):
        """The Python value of a property, or its declared default when absent."""
        if name in props:
            return python_value(props[name])
        definition = cls.get_irdl_definition().properties[name]
        return python_value(getattr(definition, "default_value", None))

    def prop_value(self, name: str):
        """The Python value of one of this op's properties, or its declared default."""
        return type(self).prop(self.properties, name)


class TensorToTensorBase(TensorOp):
    """One tensor in and one out, written `$input {attributes} : type -> type`."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"


class SlidingWindowBase(TensorOp):
    """The window of a conv or pool over H and W (see `shapes.check_window`)."""

    strides = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))
    pads = opt_prop_def(I64_ARRAY, default_value=i64_array([0, 0, 0, 0]))
    """top, left, bottom, right (ONNX order)"""
    dilations = opt_prop_def(I64_ARRAY, default_value=i64_array([1, 1]))


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


class ConstantBase(TensorOp):
    """A tensor constant: a weight (`dense_resource<name>`) or a small inline `dense<...>`."""

    value = prop_def(base(DenseResourceAttr) | base(DenseIntOrFPElementsAttr))
    output = result_def(TensorType)

    def __init__(self, value: DenseResourceAttr | DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    @classmethod
    def parse(cls, parser: Parser):
        return parse_constant(cls, parser)

    def print(self, printer: Printer) -> None:
        print_constant(self, printer)


class CastBase(TensorOp):
    """Converts the element type; the shape stays (ONNX Cast).

    Floats become integers by truncation. For 8-bit float results, `saturate` clamps
    out-of-range values to the largest finite one (else they become NaN or infinity);
    `round_mode` (up, down, nearest) rounds to the exponent-only f8E8M0FNU."""

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

    def check_round_mode(self) -> None:
        check_choice("round_mode", self.prop_value("round_mode"), self.ROUND_MODES)


class SelectBase(TensorOp):
    """`condition ? true_value : false_value`, elementwise with broadcasting."""

    condition = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$condition `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)"


class ResizeBase(TensorToTensorBase):
    """ONNX Resize with one scale per axis: nearest, (n-)linear or cubic.

    `tf_crop_and_resize` samples the region `roi` (every axis' start, then every axis'
    end, as fractions of the input) and writes `extrapolation_value` outside it."""

    scales = prop_def(F64_ARRAY)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("nearest"))
    coordinate_transformation_mode = opt_prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    nearest_mode = opt_prop_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    cubic_coeff_a = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(-0.75))
    exclude_outside = opt_prop_def(UnitAttr)
    roi = opt_prop_def(F64_ARRAY)
    extrapolation_value = opt_prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.0))

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

    def check_modes(self) -> None:
        for name, allowed in (
            ("mode", self.MODES),
            ("coordinate_transformation_mode", self.COORDINATE_MODES),
            ("nearest_mode", self.NEAREST_MODES),
        ):
            check_choice(name, self.prop_value(name), allowed)


class GatherBase(TensorOp):
    """ONNX Gather: picks `indices` (i32 or i64, negative from the end) along `axis`."""

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"


class PermuteBase(TensorToTensorBase):
    """Permutes the axes: result axis i is input axis `perm[i]`."""

    perm = prop_def(I64_ARRAY)


class ShapeOnlyBase(TensorToTensorBase):
    """An op whose result shape is only given by its result type."""

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__(operands=[input], result_types=[TensorType(input.type.element_type, tuple(shape))])


class PadBase(TensorToTensorBase):
    """ONNX Pad: `pads` holds every axis' begin, then every axis' end; negative pads crop."""

    pads = prop_def(I64_ARRAY)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("constant"))
    value = opt_prop_def(FloatAttr[Float64Type], default_value=f64_attr(0.0))
    MODES: ClassVar = ("constant", "edge", "reflect", "wrap")


class ConcatBase(TensorOp):
    """Joins the operands along `axis`."""

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"


class SliceBase(TensorToTensorBase):
    """ONNX Slice with static starts, ends, axes and steps."""

    starts = prop_def(I64_ARRAY)
    ends = prop_def(I64_ARRAY)
    axes = prop_def(I64_ARRAY)
    steps = prop_def(I64_ARRAY)


class SoftmaxBase(TensorOp):
    """Softmax along one axis."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    assembly_format = "$input attr-dict `:` type($output)"


class LayerNormBase(TensorOp):
    """Normalizes the axes from `axis` on; scale and bias broadcast to them."""

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    assembly_format = "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)"


class ReduceBase(TensorToTensorBase):
    """Reduces over `axes`; `keepdims` keeps them as size 1."""

    axes = prop_def(I64_ARRAY)
    keepdims = opt_prop_def(UnitAttr)


class CumSumBase(TensorOp):
    """ONNX CumSum: running sums along `axis`; `exclusive` leaves each element out of
    its own sum (the first is 0), `reverse` sums from the end. Numbers only (no i1)."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(UnitAttr)
    reverse = opt_prop_def(UnitAttr)
    assembly_format = "$input attr-dict `:` type($output)"


def check_cumsum(input_type: TensorType, axis: int) -> None:
    """A cumulative sum's rules: `axis` within the rank, a float or integer tensor."""
    shapes.normalize_axis(axis, input_type.get_num_dims())
    element = input_type.element_type
    if not (is_float(element) or (isinstance(element, IntegerType) and element.width.data > 1)):
        raise VerifyException(f"expects a float or integer tensor, got {input_type}")


# ------------------------------------------------------------------------- attention

ATTENTION_LAYOUTS = ("BHSD", "BSHD", "BS3HD")
"""`op.attention`'s operand layouts: q/k/v as [B, H, S, D] or [B, S, H, D], or one packed
QKV projection [B, S, 3, H, D] (q, k, v at index 0, 1, 2 of dim 2)."""


def attention_dims(q: Shape, k: Shape, v: Shape) -> tuple[int, int, int, int, int]:
    """(B, H, Sq, Sk, Dv) of an attention whose q, k, v are [B, H, S, D] (D of q and k
    equal; v has k's B, H and S)."""
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise VerifyException(f"q, k and v must be 4-D, got ranks {len(q)}, {len(k)} and {len(v)}")
    b, h, sq, d = q
    if k[0] != b or k[1] != h or k[3] != d:
        raise VerifyException(f"k {'x'.join(map(str, k))} does not match q {'x'.join(map(str, q))} in batch, heads or head size")
    if v[:3] != k[:3]:
        raise VerifyException(f"v {'x'.join(map(str, v))} does not match k {'x'.join(map(str, k))} in batch, heads or keys")
    return b, h, sq, k[2], v[3]


def check_attention_mask(mask: TensorType, scores: Shape, what: str = "mask", allow_bool: bool = True) -> None:
    """An attention mask is additive (a float) or, with `allow_bool`, boolean (i1, true =
    attend) and broadcasts to the scores [B, H, Sq, Sk]."""
    element = mask.element_type
    is_bool = isinstance(element, IntegerType) and element.width.data == 1
    if not (is_float(element) or (allow_bool and is_bool)):
        kinds = "a float or i1" if allow_bool else "a float"
        raise VerifyException(f"{what} must be {kinds} tensor, got {mask}")
    if not shapes.broadcasts_to(tensor_shape(mask), scores):
        raise VerifyException(f"{what} {mask} does not broadcast to the scores {'x'.join(map(str, scores))}")
