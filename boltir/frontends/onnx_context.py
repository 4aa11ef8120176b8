"""What the ONNX importer and its op converters share: the `NodeContext` a converter
reads one node through, the `Value` it works on, and ONNX element types as numpy dtypes.

The importer (`onnx.py`) builds a context per node and runs the node's converter
(`onnx_converters.py`); both import this module, and it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import onnx
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
        return f"{self.node.op_type} node '{self.node.name or self.node.output[0]}'"

    def error(self, message: str) -> BoltError:
        return BoltError(f"{self.describe()}: {message}")

    def attr(self, name: str, default: Any = None) -> Any:
        self.used_attrs.add(name)
        return self.attrs.get(name, default)

    def unsupported(self, name: str, value: Any, supported: str) -> BoltError:
        return self.error(f"attribute {name}={value!r} is not supported; supported: {supported}")

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
