"""What the ONNX importer and its op converters share: the `NodeContext` a converter
reads one node through, the `Value` it works on, and ONNX element types as numpy dtypes.

The importer (`onnx.py`) builds a context per node and runs the node's converter
(`onnx_converters.py`); both import this module, and it imports neither.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.ir import Operation, SSAValue

from boltir.diagnostics import BoltError
from boltir.dtypes import ELEMENT_KINDS, element_type_for, numpy_dtype, numpy_dtype_named

Value = SSAValue | np.ndarray
"""An ONNX value during import: an SSA value, or a constant known at import."""


def onnx_dtype(elem_type: int, what: str) -> np.dtype:
    """The numpy dtype of an ONNX element type that boltir's tensors support."""
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
        element_type_for(dtype)
    except (KeyError, ValueError, TypeError, BoltError) as error:
        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type in onnx.TensorProto.DataType.values() else elem_type
        raise BoltError(
            f"{what} has element type {name}, which boltir does not support; supported: {', '.join(supported_onnx_dtypes())}"
        ) from error
    return dtype


def tensor_array(tensor: onnx.TensorProto, what: str) -> np.ndarray:
    """The values of a TensorProto (an initializer, a Constant's value), with one clear
    error where its data do not fit its type and dims or sit in a file that is not there."""
    onnx_dtype(tensor.data_type, what)
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, OSError, onnx.checker.ValidationError) as error:
        raise BoltError(f"{what} cannot be read: {error}") from error


MAX_IMPORT_CONSTANT_ELEMENTS = 1 << 28
"""The most elements a constant computed at import (ConstantOfShape, Range, a folded node)
may hold: beyond it, a corrupt shape would take the machine's memory."""


def check_constant_size(shape: tuple[int, ...], what: str) -> None:
    """Refuses a constant of `shape` computed at import that has a negative size or is
    too large to compute."""
    if any(d < 0 for d in shape):
        raise BoltError(f"{what}: shape {list(shape)} has a negative size")
    elements = math.prod(shape)
    if elements > MAX_IMPORT_CONSTANT_ELEMENTS:
        raise BoltError(
            f"{what}: computing it at import would make a constant of {elements} elements "
            f"(shape {list(shape)}); the limit is {MAX_IMPORT_CONSTANT_ELEMENTS}"
        )


def supported_onnx_dtypes() -> list[str]:
    """ONNX's names of the element types boltir's tensors hold."""
    names = []
    for kind in ELEMENT_KINDS:
        try:
            code = onnx.helper.np_dtype_to_tensor_dtype(numpy_dtype_named(kind.numpy_name))
        except (KeyError, ValueError, TypeError):
            continue
        names.append(onnx.TensorProto.DataType.Name(code))
    return names


def node_label(node: onnx.NodeProto) -> str:
    """How messages name a node: its name, else its first output's."""
    return node.name or (node.output[0] if node.output else "")


class NodeImporter(Protocol):
    """What a NodeContext asks of the importer that converts the node."""

    consumed: set[str]
    """The names of the values that some node or graph output reads."""

    def materialize(self, name: str, value: Value) -> SSAValue:
        """A value as an SSA value (a constant becomes a graph.constant)."""
        ...

    def emit(self, op: Operation) -> Operation:
        """Inserts and verifies an op."""
        ...


@dataclass
class NodeContext:
    """What a converter sees of one node: its inputs, attributes and the importer."""

    node: onnx.NodeProto
    inputs: list[Value | None]
    attrs: dict[str, Any]
    opset: int
    importer: NodeImporter
    used_attrs: set[str] = field(default_factory=set)

    @property
    def op_type(self) -> str:
        return self.node.op_type

    def describe(self) -> str:
        return f"{self.node.op_type} node '{node_label(self.node)}'"

    def error(self, message: str) -> BoltError:
        return BoltError(f"{self.describe()}: {message}")

    def attr(self, name: str, default: Any = None) -> Any:
        self.used_attrs.add(name)
        return self.attrs.get(name, default)

    def unsupported(self, name: str, value: Any, supported: str) -> BoltError:
        return self.error(f"attribute {name}={value!r} is not supported; supported: {supported}")

    def axis(self, axis: int, rank: int, what: str = "axis") -> int:
        """An axis attribute or input, made non-negative; out of [-rank, rank) is an error."""
        if not -rank <= axis < rank:
            raise self.error(f"{what} {axis} is out of range for a rank-{rank} input")
        return axis % rank

    def has_input(self, index: int) -> bool:
        return index < len(self.inputs) and self.inputs[index] is not None

    def constant(self, index: int, what: str) -> np.ndarray | None:
        """An input that must be known at import (a shape, pads, axes...)."""
        if not self.has_input(index):
            return None
        value = self.inputs[index]
        if not isinstance(value, np.ndarray):
            raise self.error(
                f"input {index} ({what}) must be known at import, but it is computed at run time; "
                "boltir needs static shapes"
            )
        return value

    def value(self, index: int) -> SSAValue:
        """An input as an SSA value (a constant becomes a graph.constant)."""
        if not self.has_input(index):
            raise self.error(f"input {index} is required")
        return self.importer.materialize(self.node.input[index], self.inputs[index])

    def shape(self, index: int) -> tuple[int, ...]:
        value = self.inputs[index]
        if isinstance(value, np.ndarray):
            return tuple(value.shape)
        return tuple(value.type.get_shape())

    def dtype(self, index: int) -> np.dtype:
        value = self.inputs[index]
        if isinstance(value, np.ndarray):
            return value.dtype
        return numpy_dtype(value.type.element_type)

    def emit(self, op: Operation) -> Operation:
        return self.importer.emit(op)

    def output_used(self, index: int) -> bool:
        return index < len(self.node.output) and self.node.output[index] in self.importer.consumed
