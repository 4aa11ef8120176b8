"""The `op` dialect's base op, its custom syntax for keyword-named optional operands,
and the layouts its ops name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import AttrSizedOperandSegments, IRDLOperation, ParsePropInAttrDict, opt_prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from boltir.dialects.common import TensorOp

ACTIVATION_LAYOUTS = ("NHWC", "NCHW")
FILTER_LAYOUTS = {"NHWC": "OHWI", "NCHW": "OIHW"}
TRANSPOSED_FILTER_LAYOUTS = {"NHWC": "IHWO", "NCHW": "IOHW"}
MATRIX_LAYOUTS = ("row", "col")


def layout_string(options: Sequence[str]):
    return opt_prop_def(StringAttr, default_value=StringAttr(options[0]))


def split_attr_dict(cls: type[IRDLOperation], entries: dict[str, Attribute]) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """A custom form's attribute dictionary as (properties, discardable attributes): the
    op's declared properties are read from it, as `ParsePropInAttrDict` does."""
    declared = cls.get_irdl_definition().properties
    properties = {name: value for name, value in entries.items() if name in declared}
    attributes = {name: value for name, value in entries.items() if name not in declared}
    return properties, attributes


def same_element_type(values: Sequence[SSAValue], what: str) -> None:
    elements = list(dict.fromkeys(str(v.type.element_type) for v in values))
    if len(elements) > 1:
        raise VerifyException(f"{what} must share one element type, got {' and '.join(elements)}")


class OpBase(TensorOp):
    """Base of every op-dialect op (and of the `cutlass` templates)."""


class KeywordOperandsFormat(IRDLOperation):
    """Custom syntax for ops with optional operands named by a keyword:

        op.gemm %a, %b bias %c residual %r {attributes} : (types of the operands) -> type

    `REQUIRED` lists the positional operands, `OPTIONAL` the optional ones in order; the
    operand types follow the operands as printed."""

    REQUIRED: ClassVar[tuple[str, ...]] = ()
    OPTIONAL: ClassVar[tuple[str, ...]] = ()
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

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


