"""The PyTorch importer proper: a decomposed `ExportedProgram` becomes a `graph` module.

Placeholders become inputs (user inputs) or weights (parameters, buffers, tensor
constants); each call_function node is folded by torch when its inputs are all known at
import, or converted by the converter of its ATen overload (`torch_converters.py`,
`torch_nn_converters.py`) otherwise.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from boltir.builder import ModelBuilder, _name_hint
from boltir.diagnostics import BoltError
from boltir.dtypes import numpy_dtype
from boltir.frontends import torch_converters, torch_nn_converters
from boltir.frontends.torch_context import (
    Converter,
    NodeContext,
    first_line,
    ignored_ops,
    is_fx_node,
    is_tensor,
    op_display_name,
    require_torch,
    resolve_overload,
    shape_only_ops,
    source_location,
    static_shape,
    tensor_to_numpy,
    torch_to_numpy_dtype,
)

_CONVERTERS: dict | None = None


def converters() -> dict[Any, Converter]:
    """The converter table, keyed by ATen OpOverload (`torch.ops.aten.add.Tensor`)."""
    global _CONVERTERS
    if _CONVERTERS is None:
        table = {}
        for named in (torch_converters.NAMED_CONVERTERS, torch_nn_converters.NAMED_CONVERTERS):
            for name, function in named.items():
                overload = resolve_overload(name)
                if overload is not None:
                    table[overload] = function
        _CONVERTERS = table
    return _CONVERTERS


def supported_ops() -> list[str]:
    """The names of the ATen overloads the importer converts."""
    return sorted(op_display_name(op) for op in converters())


def supported_ops_text() -> str:
    return ", ".join(supported_ops()) + "; and any op whose inputs are all known at import (evaluated by torch)"


class TorchImporter:
    """Converts one decomposed ExportedProgram into a graph module."""

    def __init__(self, program):
        self.torch = require_torch()
        self.program = program
        self.graph = program.graph
        self.builder = ModelBuilder()
        self.values: dict[str, Any] = {}
        self.constant_hints: dict[str, str] = {}
        self.materialized: dict[str, SSAValue] = {}
        self.scalars: dict[tuple[str, str], SSAValue] = {}
        self.converters = converters()

    # ---------------------------------------------------------------- values

    def resolve(self, value: Any) -> Any:
        """Replaces FX nodes (also inside lists) by their values."""
        if is_fx_node(value):
            if value.name not in self.values:
                raise BoltError(f"node '{value.name}' is used before it is computed")
            return self.values[value.name]
        if isinstance(value, list | tuple):
            return type(value)(self.resolve(v) for v in value)
        return value

    def materialize(self, node, value) -> SSAValue:
        """A constant tensor value of an FX node as a graph.constant, made once."""
        if node.name not in self.materialized:
            hint = self.constant_hints.get(node.name, node.name)
            array = tensor_to_numpy(value, f"constant '{hint}'")
            self.materialized[node.name] = self.builder.constant(hint, array)
        return self.materialized[node.name]

    def scalar_constant(self, value, dtype: np.dtype) -> SSAValue:
        key = (repr(value), str(dtype))
        if key not in self.scalars:
            array = np.array(value).astype(dtype)
            self.scalars[key] = self.builder.constant("scalar", array)
        return self.scalars[key]

    def as_value(self, raw, dtype: np.dtype, *, cast: bool, ctx: NodeContext) -> SSAValue:
        """An argument as an SSA value: a tensor (cast to `dtype` when `cast`), or a Python
        scalar as a constant of `dtype`."""
        if is_fx_node(raw):
            value = self.values.get(raw.name)
            if isinstance(value, SSAValue):
                ssa = value
            elif is_tensor(value):
                if cast and torch_to_numpy_dtype(value.dtype, f"'{raw.name}'") != dtype:
                    target = self.torch_dtype(dtype)
                    array = tensor_to_numpy(value.to(target), f"'{raw.name}'")
                    return self.builder.constant(self.constant_hints.get(raw.name, raw.name), array)
                ssa = self.materialize(raw, value)
            elif isinstance(value, bool | int | float):  # a Python number computed at import
                return self.scalar_constant(value, dtype)
            else:
                raise ctx.error(f"argument '{raw.name}' is {type(value).__name__}, not a tensor")
            return ctx.cast(ssa, dtype) if cast else ssa
        if isinstance(raw, bool | int | float):
            return self.scalar_constant(raw, dtype)
        raise ctx.error(f"expected a tensor argument, got {raw!r}")

    def meta_dtype(self, raw, what: str) -> np.dtype | None:
        """The dtype of a tensor argument from its FX metadata, None for anything else."""
        if not is_fx_node(raw) or not is_tensor(raw.meta.get("val")):
            return None
        return torch_to_numpy_dtype(raw.meta["val"].dtype, what)

    def torch_dtype(self, dtype: np.dtype):
        result = getattr(self.torch, np.dtype(dtype).name, None)
        if not isinstance(result, self.torch.dtype):
            raise BoltError(f"numpy dtype {dtype} has no torch dtype")
        return result

    # ---------------------------------------------------------------- import

    def run(self) -> ModuleOp:
        from torch.export.graph_signature import InputKind, OutputKind, TensorArgument

        signature = self.program.graph_signature
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(signature.input_specs):
            raise BoltError("the exported program's signature does not match its graph's placeholders")
        for node, spec in zip(placeholders, signature.input_specs, strict=True):
            self.import_placeholder(node, spec, InputKind, TensorArgument)
        specs = signature.output_specs
        mutated = [s for s in specs if s.kind != OutputKind.USER_OUTPUT]
        if mutated:
            targets = ", ".join(f"'{s.target}'" for s in mutated)
            raise BoltError(
                f"the module updates {targets} in place ({mutated[0].kind.name.lower()}); boltir compiles "
                "inference only: call module.eval() and keep forward free of buffer and input updates"
            )
        self.check_supported()
        for node in self.graph.nodes:
            if node.op == "call_function":
                self.convert_node(node)
            elif node.op == "get_attr":
                self.values[node.name] = getattr(self.program.graph_module, str(node.target), None)
        output_node = next(n for n in self.graph.nodes if n.op == "output")
        returned = list(output_node.args[0]) if isinstance(output_node.args[0], list | tuple) else [output_node.args[0]]
        names = self.output_names(len(specs))
        outputs = []
        for index, (value, name) in enumerate(zip(returned, names, strict=True)):
            if is_fx_node(value) and isinstance(self.values.get(value.name), SSAValue):
                outputs.append(self.values[value.name])
            elif is_fx_node(value) and is_tensor(self.values.get(value.name)):
                self.constant_hints.setdefault(value.name, name)
                outputs.append(self.materialize(value, self.values[value.name]))
            else:
                shown = self.values.get(value.name) if is_fx_node(value) else value
                raise BoltError(f"output {index} ('{name}') is {shown!r}, not a tensor; boltir models return tensors")
        return self.builder.finish(outputs, names)

    def import_placeholder(self, node, spec, InputKind, TensorArgument) -> None:
        kind = spec.kind
        if kind == InputKind.USER_INPUT:
            if not isinstance(spec.arg, TensorArgument):
                self.values[node.name] = getattr(spec.arg, "value", None)
                return
            meta = node.meta.get("val")
            name = spec.arg.name
            shape = static_shape(meta, f"input '{name}'")
            dtype = torch_to_numpy_dtype(meta.dtype, f"input '{name}'")
            self.values[node.name] = self.builder.input(name, shape, dtype)
            return
        if kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            target = spec.target
            if target in self.program.state_dict:
                value = self.program.state_dict[target]
            elif target in self.program.constants:
                value = self.program.constants[target]
            else:
                raise BoltError(f"{kind.name.lower()} '{target}' is missing from the exported program")
            if not is_tensor(value):
                raise BoltError(f"{kind.name.lower()} '{target}' is a {type(value).__name__}, not a tensor")
            self.values[node.name] = value.detach()
            self.constant_hints[node.name] = target
            return
        raise BoltError(
            f"input '{node.name}' is a {kind.name.lower()} ({spec.target}); boltir imports tensor inputs, "
            "parameters, buffers and tensor constants only"
        )

    def output_names(self, count: int) -> list[str]:
        """Keys of a returned dict or dataclass, else `output_0`, `output_1`..."""
        default = [f"output_{i}" for i in range(count)]
        try:
            import torch.utils._pytree as pytree

            out_spec = self.program.call_spec.out_spec
            if out_spec is None:
                return default
            leaves = pytree.tree_flatten_with_path(pytree.tree_unflatten(list(range(count)), out_spec))[0]
        except Exception:  # an unusual output structure: fall back to positions
            return default
        names = []
        for index, (path, _) in enumerate(leaves):
            parts, named = [], False
            for key in path:
                if isinstance(key, pytree.MappingKey):
                    parts.append(str(key.key))
                    named = True
                elif isinstance(key, pytree.GetAttrKey):
                    parts.append(key.name)
                    named = True
                elif isinstance(key, pytree.SequenceKey):
                    parts.append(str(key.idx))
                else:
                    parts.append(str(key))
            names.append(".".join(parts) if named else default[index])
        if len(names) != count:
            return default
        seen: dict[str, int] = {}
        unique = []
        for name in names:
            seen[name] = seen.get(name, 0) + 1
            unique.append(name if seen[name] == 1 else f"{name}_{seen[name] - 1}")
        return unique

    # ------------------------------------------------------------ conversion

    def is_foldable_op(self, target) -> bool:
        torch = self.torch
        if not isinstance(target, torch._ops.OpOverload) or target in ignored_ops():
            return False
        return torch.Tag.nondeterministic_seeded not in target.tags

    def check_supported(self) -> None:
        """One error that lists every op that can be neither converted nor folded."""
        constant: dict[str, bool] = {}
        missing: list[tuple[str, Any]] = []
        for node in self.graph.nodes:
            if node.op == "placeholder":
                constant[node.name] = not isinstance(self.values.get(node.name), SSAValue)
                continue
            if node.op != "call_function":
                constant[node.name] = False
                continue
            target = node.target
            inputs_constant = all(constant.get(n.name, False) for n in node.all_input_nodes)
            if target is operator.getitem or target in ignored_ops():
                constant[node.name] = inputs_constant
            elif self.is_foldable_op(target) and inputs_constant:
                constant[node.name] = True
            else:
                constant[node.name] = target in shape_only_ops()
                if target not in self.converters:
                    missing.append((op_display_name(target), node))
        if not missing:
            return
        first = missing[0][1]
        shown = ", ".join(f"{name} (node '{node.name}')" for name, node in missing[:5])
        if len(missing) > 5:
            shown += f" and {len(missing) - 5} more"
        noun = "op" if len({name for name, _ in missing}) == 1 else "ops"
        raise BoltError(
            f"unsupported ATen {noun} {shown}; supported: {supported_ops_text()}", source_location(first)
        )

    def convert_node(self, node) -> None:
        target = node.target
        if target is operator.getitem:
            self.values[node.name] = self.getitem(node)
            return
        if target in ignored_ops():
            self.values[node.name] = None
            return
        inputs = [self.values.get(n.name) for n in node.all_input_nodes]
        ctx = NodeContext(self, node)
        try:
            if self.is_foldable_op(target) and not any(isinstance(v, SSAValue) for v in inputs):
                result = self.fold(ctx)
            else:
                converter = self.converters.get(target)
                if converter is None:  # check_supported lets through only nodes it can fold
                    raise ctx.error(f"unsupported ATen op; supported: {supported_ops_text()}")
                result = converter(ctx)
            self.check_result(ctx, result)
        except BoltError:
            raise
        except (VerifyException, DiagnosticException) as error:
            message = str(error.args[0]) if error.args else type(error).__name__
            raise ctx.error(message) from error
        except Exception as error:  # a converter bug: still one line, with the node named
            raise ctx.error(f"internal error in the PyTorch frontend: {type(error).__name__}: {error}") from error
        if isinstance(result, SSAValue) and not result.name_hint:
            result.name_hint = _name_hint(node.name)
        self.values[node.name] = result

    def getitem(self, node):
        source, index = node.args
        values = self.values.get(source.name)
        if not isinstance(values, list | tuple):
            raise BoltError(f"node '{node.name}' indexes '{source.name}', which is not a tuple", source_location(node))
        item = values[index]
        if isinstance(item, SSAValue) and not item.name_hint:
            item.name_hint = _name_hint(source.name)
        if item is None:
            raise BoltError(
                f"{op_display_name(source.target)} (node '{source.name}'): output {index} is used, but boltir "
                "supports only its first output (inference results, no training statistics or indices)",
                source_location(node),
            )
        return item

    def fold(self, ctx: NodeContext):
        """Runs a node whose inputs are all known at import with torch itself."""
        torch = self.torch
        args = self.resolve(tuple(ctx.node.args))
        kwargs = {k: self.resolve(v) for k, v in ctx.node.kwargs.items()}
        try:
            with torch.no_grad():
                result = ctx.target(*args, **kwargs)
        except Exception as error:
            raise ctx.error(f"evaluating it at import failed: {first_line(error)}") from error
        if isinstance(result, list | tuple):
            return type(result)(r.detach() if is_tensor(r) else r for r in result)
        return result.detach() if is_tensor(result) else result

    def check_result(self, ctx: NodeContext, result) -> None:
        """A converter's results must have the shapes and dtypes torch recorded."""
        metas = ctx.out if isinstance(ctx.out, list | tuple) else [ctx.out]
        results = result if isinstance(result, list | tuple) else [result]
        if isinstance(ctx.out, list | tuple) != isinstance(result, list | tuple) or len(metas) != len(results):
            raise ctx.error("internal error: the converter returned a different number of results than torch")
        for index, (meta, value) in enumerate(zip(metas, results, strict=True)):
            if value is None or not is_tensor(meta):
                continue
            expected_shape = static_shape(meta, f"result {index} of {ctx.describe()}")
            expected_dtype = torch_to_numpy_dtype(meta.dtype, f"result {index} of {ctx.describe()}")
            if isinstance(value, SSAValue):
                shape = tuple(value.type.get_shape())
                dtype = numpy_dtype(value.type.element_type)
            elif is_tensor(value):
                shape = tuple(value.shape)
                dtype = torch_to_numpy_dtype(value.dtype, f"result {index} of {ctx.describe()}")
            else:
                continue
            if shape != expected_shape or dtype != expected_dtype:
                raise ctx.error(
                    f"internal error: converted to {'x'.join(map(str, shape))} {dtype}, "
                    f"but torch says {'x'.join(map(str, expected_shape))} {expected_dtype}"
                )
