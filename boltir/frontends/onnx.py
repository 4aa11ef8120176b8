"""ONNX importer: an ONNX model becomes a `graph` module whose `@main` takes the graph
inputs and returns the graph outputs, in order, with their names kept.

    module = import_model("resnet50.onnx", input_shapes={"data": (1, 3, 224, 224)})

- Opsets 11 and later are read as they are; older models are upgraded first with onnx's
  version converter.
- Initializers become weights (`dense_resource`), through `make_weight_attr`.
- A node whose inputs are all known at import (initializers, Constant, Shape of a
  static tensor, ...) is folded: its graph ops run in the interpreter right away, so shape
  arithmetic ends as constants. A few ops boltir has no graph op for (Mod, Abs, CumSum...,
  `onnx_constant_fold.py`) are folded by onnx's reference implementation when their
  inputs are constants.
- Every graph input needs a static shape; `input_shapes` fixes dynamic dimensions.

Each op's conversion lives in `onnx_converters.py`; what a converter sees of its node
(`NodeContext`) lives in `onnx_context.py`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError, Message
from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr, UnknownLoc
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from boltir.builder import ModelBuilder, _name_hint
from boltir.diagnostics import BoltError
from boltir.dtypes import is_bfloat16
from boltir.frontends.onnx_constant_fold import fold_node, reference_foldable
from boltir.frontends.onnx_context import (
    NodeContext,
    Value,
    node_label,
    onnx_dtype,
    supported_onnx_dtypes,
    tensor_array,
)
from boltir.frontends.onnx_converters import CONVERTERS
from boltir.interp import run as interpret
from boltir.ir import verify_module

MIN_NATIVE_OPSET = 11
UPGRADE_TARGET_OPSET = 13
DEFAULT_DOMAINS = ("", "ai.onnx")


def load_model_proto(model: str | os.PathLike | onnx.ModelProto) -> onnx.ModelProto:
    """The ModelProto of a path or a proto, with clear errors for bad files."""
    if isinstance(model, onnx.ModelProto):
        return model
    if not isinstance(model, str | os.PathLike):
        raise BoltError(f"import_model takes a path or an onnx.ModelProto, not {type(model).__name__}")
    path = Path(model)
    if not path.exists():
        raise BoltError(f"cannot read ONNX model '{path}': no such file")
    if path.is_dir():
        raise BoltError(f"cannot read ONNX model '{path}': it is a directory")
    try:
        proto = onnx.load(str(path))
    except (DecodeError, ValueError, RuntimeError) as error:
        raise BoltError(f"'{path}' is not a valid ONNX model: truncated or malformed protobuf ({error})") from error
    except OSError as error:
        raise BoltError(f"cannot read ONNX model '{path}': {error.strerror or error}") from error
    if not proto.HasField("graph") or not proto.graph.node and not proto.graph.output:
        raise BoltError(f"'{path}' is not a valid ONNX model: it holds no graph")
    return proto


def default_opset(proto: onnx.ModelProto) -> int:
    for entry in proto.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return entry.version
    raise BoltError("the ONNX model imports no version of the default (ai.onnx) opset")


def upgrade_old_opsets(proto: onnx.ModelProto) -> onnx.ModelProto:
    """Models before opset 11 are upgraded with onnx's version converter."""
    version = default_opset(proto)
    newest = onnx.defs.onnx_opset_version()
    if version > newest:
        raise BoltError(f"the model uses opset {version}, newer than the {newest} this onnx {onnx.__version__} knows")
    if version >= MIN_NATIVE_OPSET:
        return proto
    from onnx import version_converter

    try:
        return version_converter.convert_version(proto, UPGRADE_TARGET_OPSET)
    except Exception as error:  # the converter raises bare RuntimeErrors and worse
        raise BoltError(
            f"the model uses opset {version}; upgrading it to opset {UPGRADE_TARGET_OPSET} with onnx's "
            f"version converter failed: {error}"
        ) from error


def checked_shape(name: str, value: object) -> tuple[int, ...]:
    """An `input_shapes` entry as a tuple of sizes, or a clear error."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise BoltError(f"input_shapes gives input '{name}' {value!r}, not a sequence of sizes such as (1, 3, 224, 224)")
    sizes = []
    for size in value:
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 0:
            raise BoltError(f"input_shapes gives input '{name}' the size {size!r}; sizes are non-negative integers")
        sizes.append(int(size))
    return tuple(sizes)


def check_single_definitions(graph_proto: onnx.GraphProto) -> None:
    """An ONNX graph is in SSA form: a name that two nodes define (or a node and a graph
    input or initializer) would make every later reader ambiguous, so it is refused."""
    defined = {i.name: f"graph input '{i.name}'" for i in graph_proto.input}
    defined.update((init.name, f"initializer '{init.name}'") for init in graph_proto.initializer)
    for node in graph_proto.node:
        label = f"{node.op_type} node '{node_label(node)}'"
        for name in node.output:
            if not name:
                continue
            if name in defined:
                raise BoltError(f"{label} defines '{name}', which {defined[name]} already defines; "
                                "an ONNX graph defines each value once")
            defined[name] = label


def static_input_shape(value_info: onnx.ValueInfoProto, override: object | None) -> tuple[int, ...]:
    """A graph input's shape: the model's, with dynamic dimensions fixed by `override`."""
    name = value_info.name
    tensor_type = value_info.type.tensor_type
    if override is not None:
        override = checked_shape(name, override)
    if not tensor_type.HasField("shape"):
        if override is None:
            raise BoltError(
                f"input '{name}' has no shape in the model; give it with input_shapes={{'{name}': (...)}} "
                f"(boltc: --input-shape {name}=AxBxC)"
            )
        return override
    # Exporters write a dynamic dimension as a dim_param, an empty dim, or a negative
    # dim_value (Paddle writes -1); all of them are dynamic here. 0 is a real size (an
    # empty tensor, as ONNX's own tests use).
    dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None for d in tensor_type.shape.dim]
    labels = [d.dim_param or "N" for d in tensor_type.shape.dim]
    if override is not None:
        if len(override) != len(dims):
            raise BoltError(f"input_shapes gives input '{name}' rank {len(override)}, but the model says rank {len(dims)}")
        for axis, (model_dim, given) in enumerate(zip(dims, override, strict=True)):
            if model_dim is not None and model_dim != given:
                raise BoltError(
                    f"input_shapes gives input '{name}' size {given} in dimension {axis}, "
                    f"but the model fixes it to {model_dim}"
                )
        return override
    dynamic = [f"{axis} ('{labels[axis]}')" for axis, d in enumerate(dims) if d is None]
    if dynamic:
        shown = [str(d) if d is not None else f"<{labels[axis]}>" for axis, d in enumerate(dims)]
        as_tuple = f"({', '.join(shown)}{',' if len(shown) == 1 else ''})"
        raise BoltError(
            f"input '{name}' has dynamic dimension {', '.join(dynamic)}; fix it with "
            f"input_shapes={{'{name}': {as_tuple}}} (boltc: --input-shape {name}={'x'.join(shown)})"
        )
    return tuple(dims)


def attribute_values(node: onnx.NodeProto) -> dict[str, Any]:
    values = {}
    for attribute in node.attribute:
        value = onnx.helper.get_attribute_value(attribute)
        try:
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            elif isinstance(value, list) and value and isinstance(value[0], bytes):
                value = [v.decode("utf-8") for v in value]
        except UnicodeDecodeError as error:
            raise BoltError(
                f"{node.op_type} node '{node_label(node)}': attribute {attribute.name} is not UTF-8 text"
            ) from error
        values[attribute.name] = value
    return values


def undecodable_text(message: Message, path: str) -> str | None:
    """Where `message` holds a string field that is not UTF-8 text (protobuf hands such
    a field over as bytes, which no name may be), or None."""
    for field, value in message.ListFields():
        if field.type not in (field.TYPE_STRING, field.TYPE_MESSAGE):
            continue
        repeated = not isinstance(value, str | bytes | Message)
        for index, item in enumerate(value if repeated else [value]):
            where = f"{path}.{field.name}" + (f"[{index}]" if repeated else "")
            if isinstance(item, bytes):
                return where
            found = undecodable_text(item, where) if isinstance(item, Message) else None
            if found:
                return found
    return None


ATTRIBUTE_TYPE_NAMES = {value: name for name, value in onnx.AttributeProto.AttributeType.items()}


def count_of(low: int, high: int, what: str) -> str:
    """'1 input', '2 to 3 inputs', 'at least 1 input' (a variadic count)."""
    count = f"{low}" if low == high else f"at least {low}" if high > 1 << 16 else f"{low} to {high}"
    return f"{count} {what}" + ("" if count in ("1", "at least 1") else "s")


def schema_violation(node: onnx.NodeProto, opset: int) -> str | None:
    """What is wrong with a node by its op's ONNX schema: the number of inputs and
    outputs, an empty required input, an attribute of the wrong type or one missing.
    None where the node fits, or where the opset does not define the op (its converter
    judges then)."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
    except onnx.defs.SchemaError:
        return None
    if not schema.min_input <= len(node.input) <= schema.max_input:
        return f"{node.op_type} takes {count_of(schema.min_input, schema.max_input, 'input')}, this node has {len(node.input)}"
    for index, (name, formal) in enumerate(zip(node.input, schema.inputs)):
        if not name and formal.option == onnx.defs.OpSchema.FormalParameterOption.Single:
            return f"input {index} ({formal.name}) is required, but its name is empty"
    if not schema.min_output <= len(node.output) <= schema.max_output:
        expected = count_of(schema.min_output, schema.max_output, "output")
        return f"{node.op_type} has {expected}, this node has {len(node.output)}"
    given = {attribute.name: attribute for attribute in node.attribute}
    for name, attribute in given.items():
        expected = schema.attributes.get(name)
        if expected is not None and attribute.type != expected.type.value:
            found = ATTRIBUTE_TYPE_NAMES.get(attribute.type, str(attribute.type))
            return f"attribute {name} is {found}, but {node.op_type} takes {ATTRIBUTE_TYPE_NAMES[expected.type.value]}"
    missing = sorted(name for name, attribute in schema.attributes.items() if attribute.required and name not in given)
    return f"attribute {missing[0]} is required" if missing else None


class OnnxImporter:
    """Converts one ModelProto into a graph module."""

    def __init__(self, proto: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]] | None):
        if (where := undecodable_text(proto, "model")) is not None:
            raise BoltError(f"the ONNX model is malformed: {where} is not UTF-8 text")
        self.converters = CONVERTERS
        self.proto = upgrade_old_opsets(proto)
        self.opset = default_opset(self.proto)
        self.input_shapes = dict(input_shapes or {})
        self.builder = ModelBuilder()
        self.values: dict[str, Value] = {}
        self.materialized: dict[str, SSAValue] = {}
        self.consumed = self._consumed_names()
        self.fold_builder: ModelBuilder | None = None

    def _consumed_names(self) -> set[str]:
        graph_proto = self.proto.graph
        names = {o.name for o in graph_proto.output}
        for node in graph_proto.node:
            names.update(i for i in node.input if i)
        return names

    # ----------------------------------------------------------------- emitting

    def emit(self, op: Operation) -> Operation:
        """Inserts an op and verifies it at once, so that an error names its ONNX node."""
        (self.fold_builder or self.builder).insert(op)
        op.verify()
        return op

    def materialize(self, name: str, value: Value) -> SSAValue:
        if isinstance(value, SSAValue):
            return value
        if self.fold_builder is not None:
            return self.fold_builder.constant(name or "folded", value)
        if name not in self.materialized:
            if is_bfloat16(value.dtype) or value.dtype.kind in "fiub":
                self.materialized[name] = self.builder.constant(name or "constant", value)
            else:
                raise BoltError(f"constant '{name}' has dtype {value.dtype}, which boltir does not support")
        return self.materialized[name]

    # ------------------------------------------------------------------ import

    def run(self) -> ModuleOp:
        graph_proto = self.proto.graph
        initializer_names = {init.name for init in graph_proto.initializer}
        graph_inputs = [i for i in graph_proto.input if i.name not in initializer_names]
        unknown = set(self.input_shapes) - {i.name for i in graph_inputs}
        if unknown:
            raise BoltError(
                f"input_shapes names {', '.join(map(repr, sorted(unknown)))}, which the model does not take; "
                f"its inputs are {', '.join(repr(i.name) for i in graph_inputs)}"
            )
        for value_info in graph_inputs:
            if not value_info.type.HasField("tensor_type"):
                kind = (value_info.type.WhichOneof("value") or "unknown").removesuffix("_type")
                article = "an" if kind[0] in "aeiou" else "a"
                raise BoltError(f"input '{value_info.name}' is {article} {kind}, not a tensor; boltir imports tensors only")
            dtype = onnx_dtype(value_info.type.tensor_type.elem_type, f"input '{value_info.name}'")
            shape = static_input_shape(value_info, self.input_shapes.get(value_info.name))
            self.values[value_info.name] = self.builder.input(value_info.name, shape, dtype)
        for init in graph_proto.initializer:
            self.values[init.name] = tensor_array(init, f"initializer '{init.name}'")
        check_single_definitions(graph_proto)
        for node in graph_proto.node:
            self.convert_node(node)
        outputs = []
        for output in graph_proto.output:
            if output.name not in self.values:
                raise BoltError(f"graph output '{output.name}' is produced by no node")
            outputs.append(self.materialize(output.name, self.values[output.name]))
        return self.builder.finish(outputs, [o.name for o in graph_proto.output])

    def convert_node(self, node: onnx.NodeProto) -> None:
        node_name = node_label(node)
        if node.domain not in DEFAULT_DOMAINS:
            raise BoltError(
                f"unsupported ONNX op {node.domain}.{node.op_type} (node '{node_name}'): "
                "boltir reads only the default ai.onnx domain"
            )
        converter = self.converters.get(node.op_type)
        if converter is None and not reference_foldable(node, [self.values.get(name) for name in node.input]):
            raise BoltError(
                f"unsupported ONNX op {node.op_type} (node '{node_name}'); supported: " + ", ".join(sorted(self.converters))
            )
        inputs: list[Value | None] = []
        for name in node.input:
            if not name:
                inputs.append(None)
            elif name not in self.values:
                raise BoltError(
                    f"{node.op_type} node '{node_name}': input '{name}' is not produced by any earlier node or graph input"
                )
            else:
                inputs.append(self.values[name])
        schema_error = schema_violation(node, self.opset)
        if schema_error:
            raise BoltError(f"{node.op_type} node '{node_name}': {schema_error}")
        if converter is None:  # shape arithmetic on constants, by onnx's reference (onnx_constant_fold.py)
            self.values.update((n, v) for n, v in zip(node.output, fold_node(node, inputs, self.opset)) if n)
            return
        context = NodeContext(node, inputs, attribute_values(node), self.opset, self)
        last_op = self.builder.block.last_op
        foldable = all(v is None or isinstance(v, np.ndarray) for v in inputs) and any(v is not None for v in inputs)
        try:
            results = self.fold(context, converter) if foldable else converter(context)
        except (VerifyException, DiagnosticException) as error:
            message = str(error.args[0]) if error.args else str(error)
            raise context.error(message.removeprefix("Operation does not verify: ")) from error
        self.name_new_ops(last_op, node_name)
        ignored = sorted(set(context.attrs) - context.used_attrs)
        if ignored:
            raise context.error(f"attribute {ignored[0]} is not supported")
        if len(results) < len([o for o in node.output if o]):
            produced = len(results)
            for index, name in enumerate(node.output):
                if name and index >= produced and name in self.consumed:
                    raise context.error(f"output {index} ('{name}') is not supported")
        for name, value in zip(node.output, results):
            if name:
                self.values[name] = value
                if isinstance(value, SSAValue) and not value.name_hint:
                    value.name_hint = _name_hint(name)

    def name_new_ops(self, last_op: Operation | None, name: str) -> None:
        """Names the ops made from a node after it (a `NameLoc`, which the passes carry
        along and `--keep-f32` matches); weights are nobody's."""
        op = last_op.next_op if last_op is not None else self.builder.block.first_op
        while op is not None:
            if isinstance(op.location, UnknownLoc) and op.name != "graph.constant":
                op.location = NameLoc(StringAttr(name), NoneAttr())
            op = op.next_op

    def fold(self, context: NodeContext, converter) -> list[Value]:
        """Runs a node whose inputs are all constants in the interpreter, at import."""
        self.fold_builder = ModelBuilder()
        try:
            results = converter(context)
            ssa_results = [r for r in results if isinstance(r, SSAValue)]
            if not ssa_results:
                return results
            module = self.fold_builder.finish(ssa_results)
        finally:
            self.fold_builder = None
        try:
            folded = iter(interpret(module, {}))
        except BoltError:
            raise
        except Exception as error:  # e.g. a constant Gather index out of range
            raise context.error(f"folding it at import failed: {type(error).__name__}: {error}") from error
        return [next(folded) if isinstance(r, SSAValue) else r for r in results]


def import_model(
    model: str | os.PathLike | onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]] | None = None
) -> ModuleOp:
    """Imports an ONNX model (a path or a ModelProto) into a verified graph module."""
    module = OnnxImporter(load_model_proto(model), input_shapes).run()
    verify_module(module)
    return module


__all__ = ["import_model", "load_model_proto", "supported_onnx_dtypes"]
