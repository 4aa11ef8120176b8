"""PyTorch importer: an `nn.Module` becomes a `graph` module through `torch.export`.

    module = import_module(model, (torch.randn(1, 3, 224, 224),))

- The module is exported with `torch.export.export(module.eval(), example_inputs)` and
  decomposed to the core ATen opset (`run_decompositions()` with torch's default table).
  The example inputs fix every shape: the result is fully static.
- `@main` takes the user inputs, named as in the exported graph signature (`x`,
  `input_ids`...), and returns the user outputs (`output_0`, `output_1`... or the keys
  of a returned dict or dataclass).
- Parameters, buffers and lifted tensor constants become weights named by their state
  dict key (`conv1.weight`), through `ModelBuilder.constant`.
- A node whose inputs are all known at import (weights, `arange`, `full`...) is
  evaluated by torch right away and becomes a constant; a weight is only written into
  the IR where a graph op reads it.
- Every other node is converted by the converter registered for its ATen overload in
  the table below (`@converter("add.Tensor")`), one small function per op. An op that is
  neither convertible nor foldable gets one error that names it and lists the supported
  ones.
- `import_exported_program` takes an `ExportedProgram` that the caller exported (with
  options of their own); it is decomposed the same way before import.

torch is an optional dependency (`pip install boltir[torch]`): it is imported on first
use, so `import boltir` never needs it.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from boltir.builder import ModelBuilder, _name_hint
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import element_type_for, is_numpy_native, numpy_dtype, numpy_dtype_named

if TYPE_CHECKING:  # pragma: no cover
    import torch
    import torch.fx

INSTALL_HINT = "pip install boltir[torch]"


def require_torch():
    """The torch module, or a BoltError that says how to install it."""
    try:
        import torch
        import torch.export
    except ImportError as error:
        raise BoltError(
            f"the PyTorch frontend needs torch, which cannot be imported here ({error}); "
            f"install it with: {INSTALL_HINT}"
        ) from error
    return torch


# ------------------------------------------------------------------------- dtypes


def torch_to_numpy_dtype(dtype, what: str) -> np.dtype:
    """The numpy (or ml_dtypes) dtype of a torch dtype that boltir's tensors support."""
    name = str(dtype).removeprefix("torch.")
    try:
        result = numpy_dtype_named(name)
        element_type_for(result)
    except (BoltError, AttributeError, TypeError) as error:
        raise BoltError(
            f"{what} has dtype {dtype}, which boltir does not support; supported: float32, float16, "
            "bfloat16, float64, the float8 types, bool, int8, int16, int32, int64, uint8...uint64"
        ) from error
    return result


def tensor_to_numpy(tensor, what: str) -> np.ndarray:
    torch = require_torch()
    tensor = tensor.detach().cpu().contiguous()
    dtype = torch_to_numpy_dtype(tensor.dtype, what)
    if not is_numpy_native(dtype):  # bfloat16, float8: reinterpret the bits
        bits = {1: torch.uint8, 2: torch.int16}[dtype.itemsize]
        return tensor.view(bits).numpy().view(dtype).copy()
    return tensor.numpy().copy()


def is_tensor(value) -> bool:
    torch = require_torch()
    return isinstance(value, torch.Tensor)


def static_shape(value, what: str) -> tuple[int, ...]:
    """The shape of a (fake) tensor, or a BoltError when a dimension is symbolic."""
    dims = tuple(value.shape)
    if all(type(d) is int for d in dims):
        return dims
    shown = ", ".join(str(d) for d in dims)
    dynamic = ", ".join(str(axis) for axis, d in enumerate(dims) if type(d) is not int)
    raise BoltError(
        f"{what} has a dynamic shape ({shown}; dimension {dynamic} symbolic); boltir needs static shapes: "
        "export without dynamic_shapes, so that the example inputs fix every size"
    )


# ------------------------------------------------------------------------ context


def _location(node) -> str | None:
    """`file:line` of the user code that made an FX node: the innermost frame of its
    stack trace outside torch itself."""
    trace = node.meta.get("stack_trace") if node is not None else None
    if not trace:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    torch_dir = _torch_dir()
    user_frames = [f for f in frames if not (torch_dir and f[0].startswith(torch_dir))]
    frame = (user_frames or frames or [None])[-1]
    return f"{frame[0]}:{frame[1]}" if frame else None


def _torch_dir() -> str | None:
    import os

    torch = require_torch()
    return os.path.dirname(torch.__file__) + os.sep if getattr(torch, "__file__", None) else None


class NodeContext:
    """What a converter sees of one FX node: its arguments by schema name, its result
    metadata, and the importer that emits graph ops."""

    def __init__(self, importer: TorchImporter, node: torch.fx.Node):
        self.importer = importer
        self.node = node
        self.target = node.target
        self.args = normalize_arguments(node)
        self.out = node.meta.get("val")
        self.primary = self.out[0] if isinstance(self.out, list | tuple) and self.out else self.out
        """The metadata of the (first) result."""

    # ---------------------------------------------------------- description

    @property
    def op_name(self) -> str:
        return op_display_name(self.target)

    def describe(self) -> str:
        return f"{self.op_name} (node '{self.node.name}')"

    def error(self, message: str) -> BoltError:
        return BoltError(f"{self.describe()}: {message}", _location(self.node))

    def unsupported(self, what: str, supported: str) -> BoltError:
        return self.error(f"{what} is not supported; supported: {supported}")

    # ------------------------------------------------------------ arguments

    def raw(self, name: str) -> Any:
        return self.args.get(name)

    def has(self, name: str) -> bool:
        return self.args.get(name) is not None

    def arg(self, name: str, default: Any = None) -> Any:
        """A Python argument (int, float, list...); FX nodes resolve to their values."""
        value = self.args.get(name)
        return default if value is None else self.importer.resolve(value)

    def value(self, name: str, dtype: np.dtype | None = None) -> SSAValue:
        """A tensor argument as an SSA value, cast to `dtype` when given; a Python
        scalar becomes a small constant of `dtype` (the result's dtype by default)."""
        target = dtype if dtype is not None else self.out_dtype
        return self.importer.as_value(self.args.get(name), target, cast=dtype is not None, ctx=self)

    def meta(self, name: str):
        raw = self.args.get(name)
        if not is_fx_node(raw):
            raise self.error(f"argument '{name}' must be a tensor")
        return raw.meta.get("val")

    def shape(self, name: str) -> tuple[int, ...]:
        return static_shape(self.meta(name), f"argument '{name}' of {self.describe()}")

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def dtype(self, name: str) -> np.dtype:
        return torch_to_numpy_dtype(self.meta(name).dtype, f"argument '{name}' of {self.describe()}")

    # --------------------------------------------------------------- result

    @property
    def out_shape(self) -> tuple[int, ...]:
        return static_shape(self.primary, f"the result of {self.describe()}")

    @property
    def out_dtype(self) -> np.dtype:
        return torch_to_numpy_dtype(self.primary.dtype, f"the result of {self.describe()}")

    # ------------------------------------------------------------- emitting

    def emit(self, op: Operation) -> Operation:
        return self.importer.builder.insert(op)

    def out1(self, op: Operation) -> SSAValue:
        return self.emit(op).results[0]

    def constant(self, array: np.ndarray, hint: str | None = None) -> SSAValue:
        return self.importer.builder.constant(hint or self.node.name, array)

    def scalar(self, value: float | int | bool, dtype: np.dtype) -> SSAValue:
        return self.importer.scalar_constant(value, dtype)

    def cast(self, value: SSAValue, dtype: np.dtype) -> SSAValue:
        element_type = element_type_for(dtype)
        if value.type.element_type == element_type:
            return value
        return self.out1(graph.CastOp(value, element_type))

    def node_arg(self, name: str):
        raw = self.args.get(name)
        return raw if is_fx_node(raw) else None


def is_fx_node(value) -> bool:
    import torch.fx

    return isinstance(value, torch.fx.Node)


def op_display_name(target) -> str:
    """`aten.convolution.default` for an OpOverload, the qualified name otherwise."""
    name = getattr(target, "__name__", None) if not hasattr(target, "_schema") else None
    if name is None:
        return str(target)
    module = getattr(target, "__module__", "") or ""
    return f"{module}.{name}" if module and module != "builtins" else name


def normalize_arguments(node) -> dict[str, Any]:
    """An OpOverload node's arguments by schema name, defaults filled in."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return {f"arg{i}": a for i, a in enumerate(node.args)} | dict(node.kwargs)
    args: dict[str, Any] = {}
    for index, argument in enumerate(schema.arguments):
        if index < len(node.args) and not argument.kwarg_only:
            args[argument.name] = node.args[index]
        elif argument.name in node.kwargs:
            args[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            args[argument.name] = argument.default_value
        else:
            args[argument.name] = None
    return args


# ----------------------------------------------------------------------- importer


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
            f"unsupported ATen {noun} {shown}; supported: {supported_ops_text()}", _location(first)
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
            raise BoltError(f"node '{node.name}' indexes '{source.name}', which is not a tuple", _location(node))
        item = values[index]
        if isinstance(item, SSAValue) and not item.name_hint:
            item.name_hint = _name_hint(source.name)
        if item is None:
            raise BoltError(
                f"{op_display_name(source.target)} (node '{source.name}'): output {index} is used, but boltir "
                "supports only its first output (inference results, no training statistics or indices)",
                _location(node),
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
            raise ctx.error(f"evaluating it at import failed: {_first_line(error)}") from error
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


# ---------------------------------------------------------------------------- API


def _first_line(error: BaseException) -> str:
    for line in str(error).splitlines():
        if line.strip():
            return line.strip()
    return type(error).__name__


def export_module(module, example_inputs):
    """`torch.export.export(module.eval(), example_inputs)`, with torch's failures as
    one-line BoltErrors."""
    torch = require_torch()
    if not isinstance(module, torch.nn.Module):
        raise BoltError(f"import_module expects a torch.nn.Module, got {type(module).__name__}")
    if is_tensor(example_inputs):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, tuple | list):
        raise BoltError(f"example_inputs must be a tuple of tensors, got {type(example_inputs).__name__}")
    try:
        return torch.export.export(module.eval(), tuple(example_inputs))
    except Exception as error:
        raise BoltError(
            f"torch.export failed on {type(module).__name__}: {type(error).__name__}: {_first_line(error)}"
        ) from error


def decompose(program):
    """The program decomposed to core ATen with torch's default decomposition table."""
    try:
        return program.run_decompositions()
    except Exception as error:
        raise BoltError(
            f"torch.export's decomposition to core ATen failed: {type(error).__name__}: {_first_line(error)}"
        ) from error


def import_exported_program(program, *, decompose_first: bool = True) -> ModuleOp:
    """Imports a `torch.export.ExportedProgram` into a verified graph module. It is
    decomposed to core ATen first, unless `decompose_first` is False (then it is read as
    it is, and must use only ops that the converter table knows)."""
    from boltir.ir import verify_module

    torch = require_torch()
    if not isinstance(program, torch.export.ExportedProgram):
        raise BoltError(f"import_exported_program expects a torch.export.ExportedProgram, got {type(program).__name__}")
    if decompose_first:
        program = decompose(program)
    try:
        module = TorchImporter(program).run()
    except BoltError:
        raise
    except Exception as error:
        message = f"internal error in the PyTorch frontend: {type(error).__name__}: {_first_line(error)}"
        raise BoltError(message) from error
    verify_module(module)
    return module


def import_module(module, example_inputs: tuple = ()) -> ModuleOp:
    """Exports `module` in eval mode on `example_inputs` (which fix every shape),
    decomposes it to core ATen, and imports it into a verified graph module."""
    return import_exported_program(export_module(module, example_inputs))


__all__ = ["import_module", "import_exported_program", "export_module", "decompose", "supported_ops"]


# ===================================================================== converters

Converter = Callable[[NodeContext], Any]
_CONVERTERS_BY_NAME: dict[str, Converter] = {}
_CONVERTERS: dict | None = None


def converter(*names: str):
    """Registers a converter for ATen overloads named `packet.overload` (`add.Tensor`)."""

    def register(function: Converter) -> Converter:
        for name in names:
            _CONVERTERS_BY_NAME[name] = function
        return function

    return register


def _resolve_overload(name: str):
    torch = require_torch()
    packet_name, overload_name = name.rsplit(".", 1)
    try:
        return getattr(getattr(torch.ops.aten, packet_name), overload_name)
    except (AttributeError, RuntimeError):
        return None  # an overload this torch version lacks


def converters() -> dict:
    """The converter table, keyed by ATen OpOverload (`torch.ops.aten.add.Tensor`)."""
    global _CONVERTERS
    if _CONVERTERS is None:
        table = {}
        for name, function in _CONVERTERS_BY_NAME.items():
            overload = _resolve_overload(name)
            if overload is not None:
                table[overload] = function
        _CONVERTERS = table
    return _CONVERTERS


def supported_ops() -> list[str]:
    """The names of the ATen overloads the importer converts."""
    return sorted(op_display_name(op) for op in converters())


def supported_ops_text() -> str:
    return ", ".join(supported_ops()) + "; and any op whose inputs are all known at import (evaluated by torch)"


_IGNORED_NAMES = (
    "_assert_tensor_metadata.default", "_assert_async.default", "_assert_async.msg", "_assert_scalar.default",
)  # fmt: skip
_SHAPE_ONLY_NAMES = ("full_like.default", "zeros_like.default", "ones_like.default", "empty_like.default")
_OP_SETS: dict[str, frozenset] = {}


def _op_set(key: str, names: Sequence[str]) -> frozenset:
    if key not in _OP_SETS:
        _OP_SETS[key] = frozenset(op for op in map(_resolve_overload, names) if op is not None)
    return _OP_SETS[key]


def ignored_ops() -> frozenset:
    """Runtime assertions about metadata that static shapes already guarantee."""
    return _op_set("ignored", _IGNORED_NAMES)


def shape_only_ops() -> frozenset:
    """Ops whose result depends only on their input's shape: constants at import."""
    return _op_set("shape_only", _SHAPE_ONLY_NAMES)


# ------------------------------------------------------------------- small helpers


def _axis(axis: int, rank: int) -> int:
    return axis % rank if rank else 0


def _pair(values, name: str, ctx: NodeContext) -> tuple[int, int]:
    values = [values] if isinstance(values, int) else list(values)
    if len(values) == 1:
        values = values * 2
    if len(values) != 2:
        raise ctx.error(f"{name} must have 1 or 2 values, got {values}")
    return int(values[0]), int(values[1])


def _identity(ctx: NodeContext, name: str = "self"):
    return ctx.importer.values[ctx.raw(name).name] if is_fx_node(ctx.raw(name)) else ctx.value(name)


def _float_input(ctx: NodeContext, name: str = "self") -> SSAValue:
    """A tensor argument cast to the result's dtype (torch promotes ints for float ops)."""
    return ctx.value(name, ctx.out_dtype)


def _reshape(ctx: NodeContext, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    if tuple(x.type.get_shape()) == tuple(shape):
        return x
    return ctx.out1(graph.ReshapeOp(x, shape))


# -------------------------------------------------------------------- elementwise

UNARY_OPS = {
    "relu.default": graph.ReluOp,
    "sigmoid.default": graph.SigmoidOp,
    "tanh.default": graph.TanhOp,
    "silu.default": graph.SiluOp,
    "hardswish.default": graph.HardSwishOp,
    "erf.default": graph.ErfOp,
    "sqrt.default": graph.SqrtOp,
    "exp.default": graph.ExpOp,
    "neg.default": graph.NegOp,
    "reciprocal.default": graph.ReciprocalOp,
}


def _unary_name(ctx: NodeContext) -> str:
    return f"{ctx.target._schema.name.split('::')[1]}.{ctx.target._overloadname}"


@converter(*UNARY_OPS)
def convert_unary(ctx: NodeContext):
    op_class = UNARY_OPS[_unary_name(ctx)]
    return ctx.out1(op_class(_float_input(ctx)))


@converter("rsqrt.default")
def convert_rsqrt(ctx: NodeContext):
    return ctx.out1(graph.ReciprocalOp(ctx.out1(graph.SqrtOp(_float_input(ctx)))))


@converter("abs.default")
def convert_abs(ctx: NodeContext):
    x = _float_input(ctx)
    if ctx.out_dtype == np.bool_:
        return x
    positive = ctx.out1(graph.ReluOp(x))
    negative = ctx.out1(graph.ReluOp(ctx.out1(graph.NegOp(x))))
    return ctx.out1(graph.AddOp(positive, negative))


@converter("gelu.default")
def convert_gelu(ctx: NodeContext):
    approximate = ctx.arg("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.unsupported(f"approximate='{approximate}'", "'none', 'tanh'")
    return ctx.out1(graph.GeluOp(_float_input(ctx), approximate))


@converter("hardsigmoid.default")
def convert_hardsigmoid(ctx: NodeContext):
    return ctx.out1(graph.HardSigmoidOp(_float_input(ctx), alpha=1.0 / 6.0, beta=0.5))


@converter("leaky_relu.default")
def convert_leaky_relu(ctx: NodeContext):
    return ctx.out1(graph.LeakyReluOp(_float_input(ctx), float(ctx.arg("negative_slope", 0.01))))


def _clip(ctx: NodeContext, low, high):
    x = _float_input(ctx)
    low = None if low is None else float(low)
    high = None if high is None else float(high)
    if low is not None and high is not None and low > high:
        raise ctx.error(f"min {low} is greater than max {high}")
    return ctx.out1(graph.ClipOp(x, low, high))


@converter("hardtanh.default")
def convert_hardtanh(ctx: NodeContext):
    return _clip(ctx, ctx.arg("min_val", -1.0), ctx.arg("max_val", 1.0))


@converter("clamp.default")
def convert_clamp(ctx: NodeContext):
    return _clip(ctx, ctx.arg("min"), ctx.arg("max"))


@converter("relu6.default")
def convert_relu6(ctx: NodeContext):
    return _clip(ctx, 0.0, 6.0)


@converter("clamp_min.default")
def convert_clamp_min(ctx: NodeContext):
    return _clip(ctx, ctx.arg("min"), None)


@converter("clamp_max.default")
def convert_clamp_max(ctx: NodeContext):
    return _clip(ctx, None, ctx.arg("max"))


def _scaled(ctx: NodeContext, value: SSAValue, alpha) -> SSAValue:
    if alpha is None or alpha == 1:
        return value
    return ctx.out1(graph.MulOp(value, ctx.scalar(alpha, ctx.out_dtype)))


@converter("add.Tensor", "add.Scalar")
def convert_add(ctx: NodeContext):
    other = _scaled(ctx, ctx.value("other", ctx.out_dtype), ctx.arg("alpha", 1))
    return ctx.out1(graph.AddOp(ctx.value("self", ctx.out_dtype), other))


@converter("sub.Tensor", "sub.Scalar")
def convert_sub(ctx: NodeContext):
    other = _scaled(ctx, ctx.value("other", ctx.out_dtype), ctx.arg("alpha", 1))
    return ctx.out1(graph.SubOp(ctx.value("self", ctx.out_dtype), other))


@converter("rsub.Tensor", "rsub.Scalar")
def convert_rsub(ctx: NodeContext):
    this = _scaled(ctx, ctx.value("self", ctx.out_dtype), ctx.arg("alpha", 1))
    return ctx.out1(graph.SubOp(ctx.value("other", ctx.out_dtype), this))


@converter("mul.Tensor", "mul.Scalar")
def convert_mul(ctx: NodeContext):
    return ctx.out1(graph.MulOp(ctx.value("self", ctx.out_dtype), ctx.value("other", ctx.out_dtype)))


@converter("div.Tensor", "div.Scalar", "div.Tensor_mode", "div.Scalar_mode")
def convert_div(ctx: NodeContext):
    mode = ctx.arg("rounding_mode")
    if mode is not None:
        if mode != "trunc" or ctx.out_dtype.kind not in "iu":
            raise ctx.unsupported(
                f"rounding_mode='{mode}' on {ctx.out_dtype}", "true division, and 'trunc' on integer tensors"
            )
    return ctx.out1(graph.DivOp(ctx.value("self", ctx.out_dtype), ctx.value("other", ctx.out_dtype)))


@converter("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def convert_pow(ctx: NodeContext):
    exponent = ctx.raw("exponent")
    if isinstance(exponent, int | float) and not isinstance(exponent, bool):
        base = ctx.value("self", ctx.out_dtype)
        if exponent == 1:
            return base
        if exponent == 2:
            return ctx.out1(graph.MulOp(base, base))
        if exponent == 0.5 and ctx.out_dtype.kind == "f":
            return ctx.out1(graph.SqrtOp(base))
        if exponent == -1 and ctx.out_dtype.kind == "f":
            return ctx.out1(graph.ReciprocalOp(base))
    if ctx.out_dtype.kind != "f":
        raise ctx.unsupported(f"pow on {ctx.out_dtype}", "floating-point tensors, and integer squares")
    return ctx.out1(graph.PowOp(ctx.value("self", ctx.out_dtype), ctx.value("exponent", ctx.out_dtype)))


def _comparison_dtype(ctx: NodeContext) -> np.dtype:
    torch = ctx.importer.torch
    operands = []
    for name in ("self", "other"):
        raw = ctx.raw(name)
        operands.append(raw.meta["val"] if is_fx_node(raw) else raw)
    return torch_to_numpy_dtype(torch.result_type(*operands), f"the operands of {ctx.describe()}")


COMPARISONS = {"eq": graph.EqualOp, "gt": graph.GreaterOp, "ge": graph.GreaterOrEqualOp, "lt": graph.LessOp, "le": graph.LessOrEqualOp}


@converter(*(f"{name}.{overload}" for name in COMPARISONS for overload in ("Tensor", "Scalar")))
def convert_comparison(ctx: NodeContext):
    dtype = _comparison_dtype(ctx)
    op_class = COMPARISONS[_unary_name(ctx).split(".")[0]]
    return ctx.out1(op_class(ctx.value("self", dtype), ctx.value("other", dtype)))


def _logical_not(ctx: NodeContext, condition: SSAValue) -> SSAValue:
    return ctx.out1(graph.NotOp(condition))


@converter("ne.Tensor", "ne.Scalar")
def convert_ne(ctx: NodeContext):
    dtype = _comparison_dtype(ctx)
    return _logical_not(ctx, ctx.out1(graph.EqualOp(ctx.value("self", dtype), ctx.value("other", dtype))))


@converter("logical_not.default")
def convert_logical_not(ctx: NodeContext):
    condition = ctx.value("self", np.dtype(np.bool_))
    return ctx.cast(_logical_not(ctx, condition), ctx.out_dtype)


LOGICAL = {"and": graph.AndOp, "or": graph.OrOp, "xor": graph.XorOp}


@converter(*(f"logical_{name}.default" for name in LOGICAL), *(f"bitwise_{name}.Tensor" for name in LOGICAL))
def convert_logical(ctx: NodeContext):
    """logical_and/or/xor, and `&`, `|`, `^` on booleans (masks)."""
    boolean = np.dtype(np.bool_)
    kind, _, name = _unary_name(ctx).split(".")[0].partition("_")
    if kind == "bitwise" and ctx.out_dtype != boolean:
        raise ctx.unsupported(f"bitwise_{name} on {ctx.out_dtype}", "boolean tensors")
    value = ctx.out1(LOGICAL[name](ctx.value("self", boolean), ctx.value("other", boolean)))
    return ctx.cast(value, ctx.out_dtype)


@converter("bitwise_not.default")
def convert_bitwise_not(ctx: NodeContext):
    if ctx.out_dtype != np.bool_:
        raise ctx.unsupported(f"bitwise_not on {ctx.out_dtype}", "boolean tensors")
    return _logical_not(ctx, ctx.value("self"))


@converter("where.self")
def convert_where(ctx: NodeContext):
    condition = ctx.value("condition", np.dtype(np.bool_))
    return ctx.out1(graph.WhereOp(condition, ctx.value("self", ctx.out_dtype), ctx.value("other", ctx.out_dtype)))


@converter("_to_copy.default", "to.dtype", "to.dtype_layout", "to.device", "to.other", "_to_dim_order_copy.default")
def convert_to_copy(ctx: NodeContext):
    return ctx.value("self", ctx.out_dtype)


# ------------------------------------------------------------------------- shapes


@converter(
    "clone.default", "alias.default", "detach.default", "lift_fresh_copy.default", "contiguous.default",
    "alias_copy.default", "detach_copy.default", "_conj.default", "resolve_conj.default", "resolve_neg.default",
)  # fmt: skip
def convert_identity(ctx: NodeContext):
    return _identity(ctx)


@converter("dropout.default", "native_dropout.default", "feature_dropout.default")
def convert_dropout(ctx: NodeContext):
    if ctx.arg("train", False):
        raise ctx.error("dropout in training mode; boltir compiles inference only: call module.eval()")
    x = _identity(ctx, "input")
    return (x, None) if isinstance(ctx.out, list | tuple) else x


@converter(
    "view.default", "_unsafe_view.default", "reshape.default", "view_copy.default", "flatten.using_ints",
    "unflatten.int", "_reshape_alias.default",
)  # fmt: skip
def convert_reshape(ctx: NodeContext):
    return _reshape(ctx, ctx.value("self"), ctx.out_shape)


@converter("permute.default", "permute_copy.default")
def convert_permute(ctx: NodeContext):
    rank = ctx.rank("self")
    perm = [_axis(d, rank) for d in ctx.arg("dims")]
    if perm == list(range(rank)):
        return _identity(ctx)
    return ctx.out1(graph.TransposeOp(ctx.value("self"), perm))


@converter("transpose.int", "transpose_copy.int")
def convert_transpose(ctx: NodeContext):
    rank = ctx.rank("self")
    if rank < 2:
        return _identity(ctx)
    a, b = _axis(ctx.arg("dim0"), rank), _axis(ctx.arg("dim1"), rank)
    if a == b:
        return _identity(ctx)
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.out1(graph.TransposeOp(ctx.value("self"), perm))


@converter("t.default", "numpy_T.default")
def convert_t(ctx: NodeContext):
    rank = ctx.rank("self")
    if rank < 2:
        return _identity(ctx)
    return ctx.out1(graph.TransposeOp(ctx.value("self"), list(range(rank))[::-1]))


@converter("expand.default", "expand_copy.default", "broadcast_to.default", "expand_as.default")
def convert_expand(ctx: NodeContext):
    x = ctx.value("self")
    if tuple(x.type.get_shape()) == ctx.out_shape:
        return x
    return ctx.out1(graph.ExpandOp(x, ctx.out_shape))


@converter("unsqueeze.default", "unsqueeze_copy.default")
def convert_unsqueeze(ctx: NodeContext):
    axis = _axis(ctx.arg("dim"), ctx.rank("self") + 1)
    return ctx.out1(graph.UnsqueezeOp(ctx.value("self"), [axis]))


@converter("squeeze.default", "squeeze.dim", "squeeze.dims", "squeeze_copy.default", "squeeze_copy.dim",
           "squeeze_copy.dims")  # fmt: skip
def convert_squeeze(ctx: NodeContext):
    shape = ctx.shape("self")
    dims = ctx.arg("dim")
    if dims is None:
        candidates = range(len(shape))
    else:
        candidates = [_axis(d, len(shape)) for d in ([dims] if isinstance(dims, int) else dims)]
    axes = sorted({a for a in candidates if shape and shape[a] == 1})
    if not axes:
        return _identity(ctx)
    return ctx.out1(graph.SqueezeOp(ctx.value("self"), axes))


def _slice(ctx: NodeContext, x: SSAValue, dim: int, start: int, end: int, step: int = 1) -> SSAValue:
    size = x.type.get_shape()[dim]
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(0, min(size, end + size if end < 0 else end))
    if start == 0 and end == size and step == 1:
        return x
    return ctx.out1(graph.SliceOp(x, [start], [end], [dim], [step]))


@converter("slice.Tensor", "slice_copy.Tensor")
def convert_slice(ctx: NodeContext):
    rank = ctx.rank("self")
    dim = _axis(ctx.arg("dim", 0), rank)
    size = ctx.shape("self")[dim]
    start = ctx.arg("start")
    end = ctx.arg("end")
    step = ctx.arg("step", 1)
    if step < 1:
        raise ctx.unsupported(f"step {step}", "positive steps")
    return _slice(ctx, ctx.value("self"), dim, 0 if start is None else start, size if end is None else end, step)


@converter("narrow.default")
def convert_narrow(ctx: NodeContext):
    dim = _axis(ctx.arg("dim"), ctx.rank("self"))
    start = ctx.arg("start")
    start = start + ctx.shape("self")[dim] if start < 0 else start
    return _slice(ctx, ctx.value("self"), dim, start, start + ctx.arg("length"))


@converter("select.int", "select_copy.int")
def convert_select(ctx: NodeContext):
    rank = ctx.rank("self")
    dim = _axis(ctx.arg("dim"), rank)
    size = ctx.shape("self")[dim]
    index = ctx.arg("index")
    index = index + size if index < 0 else index
    if not 0 <= index < size:
        raise ctx.error(f"index {ctx.arg('index')} is out of range for dimension {dim} of size {size}")
    sliced = ctx.out1(graph.SliceOp(ctx.value("self"), [index], [index + 1], [dim], [1]))
    return ctx.out1(graph.SqueezeOp(sliced, [dim]))


@converter("cat.default", "concat.default")
def convert_cat(ctx: NodeContext):
    raws = ctx.raw("tensors")
    keep = [r for r in raws if not (is_fx_node(r) and tuple(r.meta["val"].shape) == (0,))]
    if not keep:
        raise ctx.error("concatenates only empty tensors")
    values = [ctx.importer.as_value(r, ctx.out_dtype, cast=True, ctx=ctx) for r in keep]
    if len(values) == 1:
        return values[0]
    rank = len(values[0].type.get_shape())
    return ctx.out1(graph.ConcatOp(values, _axis(ctx.arg("dim", 0), rank)))


@converter("split.Tensor", "split_with_sizes.default", "unsafe_split.Tensor", "split_with_sizes_copy.default",
           "split_copy.Tensor", "unsafe_split_with_sizes.default")  # fmt: skip
def convert_split(ctx: NodeContext):
    dim = _axis(ctx.arg("dim", 0), ctx.rank("self"))
    sizes = [static_shape(v, f"a result of {ctx.describe()}")[dim] for v in ctx.out]
    x = ctx.value("self")
    if len(sizes) == 1:
        return [x]
    return list(ctx.emit(graph.SplitOp(x, sizes, dim)).results)


@converter("unbind.int", "unbind_copy.int")
def convert_unbind(ctx: NodeContext):
    dim = _axis(ctx.arg("dim", 0), ctx.rank("self"))
    count = ctx.shape("self")[dim]
    x = ctx.value("self")
    pieces = [x] if count == 1 else list(ctx.emit(graph.SplitOp(x, [1] * count, dim)).results)
    return [ctx.out1(graph.SqueezeOp(p, [dim])) for p in pieces]


def _pads_from_torch(pad: Sequence[int], rank: int, ctx: NodeContext) -> list[int]:
    """torch's pad list (last axis first, begin/end pairs) as ONNX pads."""
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise ctx.error(f"pad {list(pad)} must hold begin/end pairs for at most {rank} axes")
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = int(pad[2 * i])
        ends[rank - 1 - i] = int(pad[2 * i + 1])
    return begins + ends


@converter("constant_pad_nd.default")
def convert_constant_pad(ctx: NodeContext):
    pads = _pads_from_torch(ctx.arg("pad"), ctx.rank("self"), ctx)
    if not any(pads):
        return _identity(ctx)
    return ctx.out1(graph.PadOp(ctx.value("self"), pads, "constant", float(ctx.arg("value", 0))))


# -------------------------------------------------------------- values from shapes


@converter(*_SHAPE_ONLY_NAMES)
def convert_like(ctx: NodeContext):
    """A constant of the result's shape: full_like and friends read only the shape."""
    torch = ctx.importer.torch
    name = _unary_name(ctx)
    fill = {"zeros_like.default": 0, "empty_like.default": 0, "ones_like.default": 1}.get(name)
    if fill is None:
        fill = ctx.arg("fill_value")
    return torch.full(ctx.out_shape, fill, dtype=ctx.primary.dtype)


# ------------------------------------------------------------------ linear algebra


def _transposed_source(ctx: NodeContext, name: str):
    """The FX node that a 2-D transpose argument transposes, or None."""
    node = ctx.node_arg(name)
    if node is None or node.op != "call_function":
        return None
    args = normalize_arguments(node)
    source = args.get("self")
    if not is_fx_node(source) or len(source.meta["val"].shape) != 2:
        return None
    name_of = op_display_name(node.target)
    if name_of in ("aten.t.default", "aten.numpy_T.default"):
        return source
    if name_of in ("aten.permute.default", "aten.permute_copy.default") and [d % 2 for d in args["dims"]] == [1, 0]:
        return source
    if name_of in ("aten.transpose.int", "aten.transpose_copy.int") and args["dim0"] % 2 != args["dim1"] % 2:
        return source
    return None


def _gemm_operands(ctx: NodeContext, a_name: str, b_name: str):
    """The two matrices, with a transpose that only feeds them folded into the gemm."""
    operands = []
    for name in (a_name, b_name):
        source = _transposed_source(ctx, name)
        if source is not None:
            operands.append((ctx.importer.as_value(source, ctx.out_dtype, cast=False, ctx=ctx), True))
        else:
            operands.append((ctx.value(name), False))
    return operands


@converter("addmm.default")
def convert_addmm(ctx: NodeContext):
    beta, alpha = ctx.arg("beta", 1), ctx.arg("alpha", 1)
    if ctx.out_dtype.kind != "f":
        if beta != 1 or alpha != 1:
            raise ctx.unsupported("alpha/beta on integer addmm", "alpha = beta = 1")
        product = ctx.out1(graph.MatMulOp(ctx.value("mat1"), ctx.value("mat2")))
        return ctx.out1(graph.AddOp(product, ctx.value("self")))
    (a, trans_a), (b, trans_b) = _gemm_operands(ctx, "mat1", "mat2")
    c = ctx.value("self") if beta != 0 else None
    return ctx.out1(graph.GemmOp(a, b, c, alpha=float(alpha), beta=float(beta), trans_a=trans_a, trans_b=trans_b))


@converter("mm.default")
def convert_mm(ctx: NodeContext):
    if ctx.out_dtype.kind == "f":
        (a, trans_a), (b, trans_b) = _gemm_operands(ctx, "self", "mat2")
        if trans_a or trans_b:
            return ctx.out1(graph.GemmOp(a, b, trans_a=trans_a, trans_b=trans_b))
    return ctx.out1(graph.MatMulOp(ctx.value("self"), ctx.value("mat2")))


@converter("bmm.default", "matmul.default")
def convert_matmul(ctx: NodeContext):
    other = "mat2" if "mat2" in ctx.args else "other"
    return ctx.out1(graph.MatMulOp(ctx.value("self"), ctx.value(other)))


@converter("baddbmm.default")
def convert_baddbmm(ctx: NodeContext):
    product = ctx.out1(graph.MatMulOp(ctx.value("batch1", ctx.out_dtype), ctx.value("batch2", ctx.out_dtype)))
    product = _scaled(ctx, product, ctx.arg("alpha", 1))
    beta = ctx.arg("beta", 1)
    if beta == 0:
        return product
    return ctx.out1(graph.AddOp(product, _scaled(ctx, ctx.value("self", ctx.out_dtype), beta)))


@converter("linear.default")
def convert_linear(ctx: NodeContext):
    x, weight = ctx.value("input"), ctx.value("weight")
    bias = ctx.value("bias") if ctx.has("bias") else None
    if len(x.type.get_shape()) == 2 and ctx.out_dtype.kind == "f":
        return ctx.out1(graph.GemmOp(x, weight, bias, trans_b=True))
    out = ctx.out1(graph.MatMulOp(x, ctx.out1(graph.TransposeOp(weight, [1, 0]))))
    return ctx.out1(graph.AddOp(out, bias)) if bias is not None else out


@converter("embedding.default")
def convert_embedding(ctx: NodeContext):
    return ctx.out1(graph.GatherOp(ctx.value("weight"), ctx.value("indices"), 0))


@converter("index.Tensor")
def convert_index(ctx: NodeContext):
    """Advanced indexing with one index tensor: a gather along its axis."""
    indices = list(ctx.raw("indices"))
    used = [axis for axis, index in enumerate(indices) if index is not None]
    if len(used) != 1:
        raise ctx.unsupported(f"indexing with {len(used)} index tensors", "exactly one index tensor (a gather)")
    (axis,) = used
    index = indices[axis]
    dtype = ctx.importer.meta_dtype(index, f"the index of {ctx.describe()}")
    if dtype is None or dtype.kind != "i":  # uint8 and bool indices are masks in torch
        what = f"a {dtype or 'non-tensor'} index"
        raise ctx.unsupported(what, "integer index tensors (masks give data-dependent shapes)")
    cast = dtype not in (np.int32, np.int64)
    indices_value = ctx.importer.as_value(index, np.dtype(np.int64), cast=cast, ctx=ctx)
    return ctx.out1(graph.GatherOp(ctx.value("self"), indices_value, axis))


@converter("index_select.default")
def convert_index_select(ctx: NodeContext):
    axis = _axis(ctx.arg("dim"), ctx.rank("self"))
    return ctx.out1(graph.GatherOp(ctx.value("self"), ctx.value("index"), axis))


# -------------------------------------------------------------------- conv, pools


@converter("convolution.default", "_convolution.default")
def convert_convolution(ctx: NodeContext):
    rank = ctx.rank("input")
    if rank not in (3, 4):
        raise ctx.unsupported(f"a {rank - 2}-D convolution", "1-D and 2-D convolutions (3-D and 4-D inputs)")
    spatial = rank - 2
    x, weight = ctx.value("input"), ctx.value("weight")
    bias = ctx.value("bias") if ctx.has("bias") else None
    stride, padding, dilation = (list(ctx.arg(n)) for n in ("stride", "padding", "dilation"))
    output_padding = list(ctx.arg("output_padding") or [0] * spatial)
    if spatial == 1:  # N×C×L runs as N×C×1×L
        x = ctx.out1(graph.UnsqueezeOp(x, [2]))
        weight = ctx.out1(graph.UnsqueezeOp(weight, [2]))
        stride, padding, dilation, output_padding = [1, *stride], [0, *padding], [1, *dilation], [0, *output_padding]
    stride = _pair(stride, "stride", ctx)
    padding = _pair(padding, "padding", ctx)
    dilation = _pair(dilation, "dilation", ctx)
    output_padding = _pair(output_padding, "output_padding", ctx)
    pads = (padding[0], padding[1], padding[0], padding[1])
    groups = int(ctx.arg("groups", 1))
    if ctx.arg("transposed"):
        conv = graph.ConvTranspose2dOp(
            x, weight, bias, strides=stride, pads=pads, dilations=dilation, group=groups, output_padding=output_padding
        )
        out = ctx.out1(conv)
    else:
        if any(output_padding):
            raise ctx.unsupported("output_padding on a convolution that is not transposed", "output_padding 0")
        out = ctx.out1(graph.Conv2dOp(x, weight, bias, strides=stride, pads=pads, dilations=dilation, group=groups))
    if spatial == 1:
        out = ctx.out1(graph.SqueezeOp(out, [2]))
    return out


def _batch_norm(ctx: NodeContext, training: bool):
    if training:
        raise ctx.error("batch norm in training mode; boltir compiles inference only: call module.eval()")
    x = ctx.value("input")
    channels = ctx.shape("input")[1]
    dtype = ctx.dtype("input")
    scale = ctx.value("weight") if ctx.has("weight") else ctx.constant(np.ones(channels, dtype), "batch_norm.ones")
    bias = ctx.value("bias") if ctx.has("bias") else ctx.constant(np.zeros(channels, dtype), "batch_norm.zeros")
    if not ctx.has("running_mean") or not ctx.has("running_var"):
        raise ctx.error("batch norm without running statistics (track_running_stats=False) is not supported")
    mean, variance = ctx.value("running_mean"), ctx.value("running_var")
    out = ctx.out1(graph.BatchNormOp(x, scale, bias, mean, variance, epsilon=float(ctx.arg("eps"))))
    return (out, None, None)


def _normalize_trailing(ctx: NodeContext, x: SSAValue, rows_shape: Sequence[int], epsilon: float) -> SSAValue:
    """Normalizes `x` (mean 0, variance 1) over each row of `x` viewed as `rows_shape`
    plus one trailing axis, and returns it in `x`'s shape: a layer norm without affine."""
    shape = tuple(x.type.get_shape())
    rows = _reshape(ctx, x, (*rows_shape, math.prod(shape) // math.prod(rows_shape)))
    ones = ctx.constant(np.ones(1, numpy_dtype(x.type.element_type)), "ones")
    normalized = ctx.out1(graph.LayerNormOp(rows, ones, None, axis=-1, epsilon=epsilon))
    return _reshape(ctx, normalized, shape)


def _channel_affine(ctx: NodeContext, x: SSAValue, rank: int) -> SSAValue:
    """`x * weight + bias` with per-channel (axis 1) weight and bias, where given."""
    for name, op_class in (("weight", graph.MulOp), ("bias", graph.AddOp)):
        if ctx.has(name):
            value = ctx.value(name)
            per_channel = _reshape(ctx, value, (value.type.get_shape()[0],) + (1,) * (rank - 2))
            x = ctx.out1(op_class(x, per_channel))
    return x


def _batch_statistics_norm(ctx: NodeContext):
    """Batch norm with the batch's own statistics (InstanceNorm runs as one on N·C
    channels): each channel normalized over the batch and spatial axes."""
    shape = ctx.shape("input")
    x = ctx.value("input")
    perm = [1, 0, *range(2, len(shape))]
    channels_first = x if shape[0] == 1 else ctx.out1(graph.TransposeOp(x, perm))
    channels_first = _reshape(ctx, channels_first, [shape[1], shape[0], *shape[2:]])
    normalized = _normalize_trailing(ctx, channels_first, [shape[1]], float(ctx.arg("eps")))
    normalized = _reshape(ctx, normalized, [shape[1], shape[0], *shape[2:]])
    out = _reshape(ctx, normalized, shape) if shape[0] == 1 else ctx.out1(graph.TransposeOp(normalized, perm))
    return (_channel_affine(ctx, out, len(shape)), None, None)


@converter("_native_batch_norm_legit.no_stats")
def convert_batch_norm_no_stats(ctx: NodeContext):
    if not ctx.arg("training"):
        raise ctx.error("batch norm in eval mode without running statistics has nothing to normalize with")
    return _batch_statistics_norm(ctx)


@converter("native_group_norm.default")
def convert_group_norm(ctx: NodeContext):
    shape = ctx.shape("input")
    groups = int(ctx.arg("group"))
    normalized = _normalize_trailing(ctx, ctx.value("input"), [shape[0], groups], float(ctx.arg("eps")))
    return (_channel_affine(ctx, normalized, len(shape)), None, None)


@converter("_native_batch_norm_legit_no_training.default")
def convert_batch_norm_no_training(ctx: NodeContext):
    return _batch_norm(ctx, False)


@converter("_native_batch_norm_legit.default", "native_batch_norm.default")
def convert_batch_norm(ctx: NodeContext):
    return _batch_norm(ctx, bool(ctx.arg("training")))


@converter("native_layer_norm.default")
def convert_layer_norm(ctx: NodeContext):
    normalized = list(ctx.arg("normalized_shape"))
    x = ctx.value("input")
    dtype = ctx.dtype("input")
    scale = ctx.value("weight") if ctx.has("weight") else ctx.constant(np.ones(normalized, dtype), "layer_norm.ones")
    bias = ctx.value("bias") if ctx.has("bias") else None
    out = ctx.out1(graph.LayerNormOp(x, scale, bias, axis=-len(normalized), epsilon=float(ctx.arg("eps"))))
    return (out, None, None)


def _pool_params(ctx: NodeContext):
    kernel = _pair(ctx.arg("kernel_size"), "kernel_size", ctx)
    stride_arg = ctx.arg("stride")
    stride = kernel if not stride_arg else _pair(stride_arg, "stride", ctx)
    padding = _pair(ctx.arg("padding", 0), "padding", ctx)
    return kernel, stride, (padding[0], padding[1], padding[0], padding[1])


@converter("max_pool2d_with_indices.default", "max_pool2d.default")
def convert_max_pool2d(ctx: NodeContext):
    if ctx.rank("self") != 4:
        raise ctx.unsupported(f"a {ctx.rank('self')}-D input", "4-D NCHW inputs")
    kernel, stride, pads = _pool_params(ctx)
    dilation = _pair(ctx.arg("dilation", 1), "dilation", ctx)
    ceil_mode = bool(ctx.arg("ceil_mode"))
    out = ctx.out1(
        graph.MaxPool2dOp(ctx.value("self"), kernel, strides=stride, pads=pads, dilations=dilation, ceil_mode=ceil_mode)
    )
    return (out, None) if isinstance(ctx.out, list | tuple) else out


@converter("avg_pool2d.default")
def convert_avg_pool2d(ctx: NodeContext):
    if ctx.rank("self") != 4:
        raise ctx.unsupported(f"a {ctx.rank('self')}-D input", "4-D NCHW inputs")
    if ctx.arg("divisor_override") is not None:
        raise ctx.unsupported(f"divisor_override={ctx.arg('divisor_override')}", "None")
    kernel, stride, pads = _pool_params(ctx)
    return ctx.out1(
        graph.AvgPool2dOp(
            ctx.value("self"),
            kernel,
            strides=stride,
            pads=pads,
            ceil_mode=bool(ctx.arg("ceil_mode")),
            count_include_pad=bool(ctx.arg("count_include_pad", True)),
        )
    )


@converter("_adaptive_avg_pool2d.default", "adaptive_avg_pool2d.default")
def convert_adaptive_avg_pool2d(ctx: NodeContext):
    shape = ctx.shape("self")
    if len(shape) != 4:
        raise ctx.unsupported(f"a {len(shape)}-D input", "4-D NCHW inputs")
    (h, w), (oh, ow) = shape[2:], ctx.out_shape[2:]
    x = ctx.value("self")
    if (oh, ow) == (1, 1):
        return ctx.out1(graph.GlobalAvgPoolOp(x))
    if (oh, ow) == (h, w):
        return x
    if h % oh == 0 and w % ow == 0:
        kernel = (h // oh, w // ow)
        return ctx.out1(graph.AvgPool2dOp(x, kernel, strides=kernel))
    raise ctx.unsupported(
        f"adaptive average pooling from {h}x{w} to {oh}x{ow} (uneven windows)",
        "output 1x1, or output sizes that divide the input sizes",
    )


def _reduce_axes(ctx: NodeContext, name: str = "dim") -> list[int]:
    rank = ctx.rank("self")
    dims = ctx.arg(name)
    if dims is None or (isinstance(dims, list | tuple) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted({_axis(d, rank) for d in dims})


def _reduce(ctx: NodeContext, op_class, axes: list[int], keepdim: bool, dtype: np.dtype):
    x = ctx.value("self", dtype)
    if not axes:  # a 0-d tensor
        return x
    return ctx.out1(op_class(x, axes, keepdims=keepdim))


@converter("mean.dim", "mean.default")
def convert_mean(ctx: NodeContext):
    axes = _reduce_axes(ctx)
    keepdim = bool(ctx.arg("keepdim", False))
    if ctx.rank("self") == 4 and axes == [2, 3] and keepdim and ctx.out_dtype.kind == "f":
        return ctx.out1(graph.GlobalAvgPoolOp(ctx.value("self", ctx.out_dtype)))
    return _reduce(ctx, graph.ReduceMeanOp, axes, keepdim, ctx.out_dtype)


@converter("sum.dim_IntList", "sum.default")
def convert_sum(ctx: NodeContext):
    return _reduce(ctx, graph.ReduceSumOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), ctx.out_dtype)


@converter("amax.default")
def convert_amax(ctx: NodeContext):
    return _reduce(ctx, graph.ReduceMaxOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), ctx.out_dtype)


@converter("max.dim")
def convert_max_dim(ctx: NodeContext):
    out = _reduce(ctx, graph.ReduceMaxOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), ctx.dtype("self"))
    return (out, None)


@converter("any.dim", "any.dims", "any.default")
def convert_any(ctx: NodeContext):
    return _reduce(ctx, graph.ReduceMaxOp, _reduce_axes(ctx), bool(ctx.arg("keepdim", False)), np.dtype(np.bool_))


@converter("var.correction", "var.dim")
def convert_var(ctx: NodeContext):
    axes = _reduce_axes(ctx)
    keepdim = bool(ctx.arg("keepdim", False))
    x = ctx.value("self", ctx.out_dtype)
    if "correction" in ctx.args:
        correction = ctx.arg("correction", 1)
    else:
        correction = 1 if ctx.arg("unbiased", True) else 0
    shape = ctx.shape("self")
    count = math.prod(shape[a] for a in axes)
    mean = ctx.out1(graph.ReduceMeanOp(x, axes, keepdims=True))
    centered = ctx.out1(graph.SubOp(x, mean))
    total = ctx.out1(graph.ReduceSumOp(ctx.out1(graph.MulOp(centered, centered)), axes, keepdims=keepdim))
    return ctx.out1(graph.DivOp(total, ctx.scalar(max(count - correction, 0), ctx.out_dtype)))


@converter("_softmax.default", "softmax.int")
def convert_softmax(ctx: NodeContext):
    axis = _axis(ctx.arg("dim"), max(ctx.rank("self"), 1))
    x = ctx.value("self", ctx.out_dtype)
    if not x.type.get_shape():
        return ctx.out1(graph.ReshapeOp(ctx.out1(graph.SoftmaxOp(ctx.out1(graph.ReshapeOp(x, [1])), 0)), []))
    return ctx.out1(graph.SoftmaxOp(x, axis))


# ----------------------------------------------------------------------- resizing


def _resize_scales(ctx: NodeContext) -> list[float]:
    shape, out = ctx.shape("input"), ctx.out_shape
    factors = ctx.arg("scale_factors")
    spatial = [float(f) for f in factors] if factors else [o / i for i, o in zip(shape[2:], out[2:], strict=True)]
    return [1.0, 1.0, *spatial]


@converter("upsample_nearest2d.vec", "upsample_nearest1d.vec")
def convert_upsample_nearest(ctx: NodeContext):
    return ctx.out1(
        graph.ResizeOp(
            ctx.value("input"),
            _resize_scales(ctx),
            mode="nearest",
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
            sizes=ctx.out_shape,
        )
    )


@converter("upsample_bilinear2d.vec", "upsample_linear1d.vec")
def convert_upsample_linear(ctx: NodeContext):
    align = bool(ctx.arg("align_corners"))
    return ctx.out1(
        graph.ResizeOp(
            ctx.value("input"),
            _resize_scales(ctx),
            mode="linear",
            coordinate_transformation_mode="align_corners" if align else "pytorch_half_pixel",
            sizes=ctx.out_shape,
        )
    )
