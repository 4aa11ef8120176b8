"""`op` dialect elementwise ops: `op.unary`, `op.binary`, `op.select` and `op.cast`,
and `op.elementwise`, the fused kernel that `fuse-elementwise` makes of chains of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType, i1
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from boltir.dialects import shapes
from boltir.dialects.common import (
    F64_ARRAY,
    CastBase,
    SelectBase,
    check_choice,
    f64_array,
    is_float,
    static_tensors,
    tensor_shape,
)
from boltir.dialects.op.core import OpBase, split_attr_dict
from boltir.dialects.op.epilogue import ACTIVATION_ARITY

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
class SelectOp(ElementwiseBase, SelectBase):
    """`condition ? a : b` elementwise with broadcasting."""

    name = "op.select"

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
class CastOp(ElementwiseBase, CastBase):
    """Element type conversion, with graph.cast's `saturate` and `round_mode`."""

    name = "op.cast"

    def verify_(self) -> None:
        static_tensors(self)
        if tensor_shape(self.input.type) != tensor_shape(self.output.type):
            raise VerifyException("cast keeps the shape")
        self.check_round_mode()


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
