"""What the PyTorch importer and its op converters share: loading torch (an optional
dependency), torch's dtypes and shapes as boltir's, FX nodes and their ATen schemas, the
`NodeContext` a converter reads one node through, and the ATen ops that the importer
treats apart (runtime assertions, ops that read only a shape).

torch is imported on first use only (`require_torch`), so importing this module never
needs it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from xdsl.ir import Operation, SSAValue

from boltir.builder import ModelBuilder
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dtypes import element_type_for, is_numpy_native, numpy_dtype_named

if TYPE_CHECKING:  # pragma: no cover
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


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error's message (torch's run to pages)."""
    for line in str(error).splitlines():
        if line.strip():
            return line.strip()
    return type(error).__name__


# ------------------------------------------------------------------------ context


def source_location(node) -> str | None:
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
    torch = require_torch()
    return os.path.dirname(torch.__file__) + os.sep if getattr(torch, "__file__", None) else None


class ConvertingImporter(Protocol):
    """What a NodeContext and the converters use of the importer (`TorchImporter`)."""

    torch: Any
    """The torch module."""
    builder: ModelBuilder
    values: dict[str, Any]
    """The value of each FX node converted so far: an SSA value, or one known at import."""

    def resolve(self, value: Any) -> Any:
        """Replaces FX nodes (also inside lists) by their values."""
        ...

    def as_value(self, raw: Any, dtype: np.dtype, *, cast: bool, ctx: NodeContext) -> SSAValue:
        """An argument as an SSA value."""
        ...

    def scalar_constant(self, value: float | int | bool, dtype: np.dtype) -> SSAValue:
        """A 0-d constant, made once per value and dtype."""
        ...

    def meta_dtype(self, raw: Any, what: str) -> np.dtype | None:
        """The dtype of a tensor argument from its FX metadata."""
        ...


class NodeContext:
    """What a converter sees of one FX node: its arguments by schema name, its result
    metadata, and the importer that emits graph ops."""

    def __init__(self, importer: ConvertingImporter, node: torch.fx.Node):
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
        return BoltError(f"{self.describe()}: {message}", source_location(self.node))

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

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`x` in `shape`: itself where it has that shape already."""
        if tuple(x.type.get_shape()) == tuple(shape):
            return x
        return self.out1(graph.ReshapeOp(x, shape))

    def scale(self, value: SSAValue, alpha) -> SSAValue:
        """`value * alpha` in the result's dtype; `value` itself where alpha is None or 1."""
        if alpha is None or alpha == 1:
            return value
        return self.out1(graph.MulOp(value, self.scalar(alpha, self.out_dtype)))

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


# ----------------------------------------------------------------------- op sets


def resolve_overload(name: str):
    """The ATen OpOverload named `packet.overload` (`add.Tensor`), or None where this
    torch version lacks it."""
    torch = require_torch()
    packet_name, overload_name = name.rsplit(".", 1)
    try:
        return getattr(getattr(torch.ops.aten, packet_name), overload_name)
    except (AttributeError, RuntimeError):
        return None


IGNORED_NAMES = (
    "_assert_tensor_metadata.default", "_assert_async.default", "_assert_async.msg", "_assert_scalar.default",
)  # fmt: skip
SHAPE_ONLY_NAMES = ("full_like.default", "zeros_like.default", "ones_like.default", "empty_like.default")
_OP_SETS: dict[str, frozenset] = {}


def _op_set(key: str, names: Sequence[str]) -> frozenset:
    if key not in _OP_SETS:
        _OP_SETS[key] = frozenset(op for op in map(resolve_overload, names) if op is not None)
    return _OP_SETS[key]


def ignored_ops() -> frozenset:
    """Runtime assertions about metadata that static shapes already guarantee."""
    return _op_set("ignored", IGNORED_NAMES)


def shape_only_ops() -> frozenset:
    """Ops whose result depends only on their input's shape: constants at import."""
    return _op_set("shape_only", SHAPE_ONLY_NAMES)


def normalized_axis(axis: int, rank: int) -> int:
    """A possibly negative axis as one in [0, rank); 0 for a 0-d tensor."""
    return axis % rank if rank else 0


Converter = Callable[[NodeContext], Any]
"""A converter of one ATen op: the node's result from its context."""
