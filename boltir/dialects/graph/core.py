"""The `graph` dialect's base op and the rules its op families share: layouts, element
types, result inference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from boltir.dialects.common import Props, TensorOp, describe, is_float, static_tensors

INPUT_NAME_ATTR = "graph.name"
"""Argument / result attribute of `@main` that holds the model's own tensor name."""

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


def is_channels_last(layout: str) -> bool:
    return layout == "NHWC"


class GraphOp(TensorOp):
    """Base of every graph op: static-shaped tensors and types that match `infer`. Every
    graph op is a pure function of its operands (Pure), so xDSL's `cse` merges repeated
    ones (torch.export writes one `view` of a tensor per user) and dead ones are dropped."""

    traits = traits_def(Pure())

    FLOAT_ONLY: ClassVar[bool] = False
    """Whether the data operands must have a floating-point element type."""

    @classmethod
    def infer(cls, operand_types: Sequence[TensorType], props: Props) -> list[TensorType]:
        raise NotImplementedError

    def init_inferred(self, operands: Sequence[SSAValue | list[SSAValue]], props: Props) -> None:
        """Builds the op with the result types `infer` gives for these operands (an
        optional or variadic operand is a list of values) and properties."""
        values = [v for operand in operands for v in (operand if isinstance(operand, list) else [operand])]
        result_types = self.infer([v.type for v in values], props)
        IRDLOperation.__init__(self, operands=list(operands), properties=props, result_types=result_types)

    def verify_(self) -> None:
        static_tensors(self)
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
