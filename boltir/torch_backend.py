"""PyTorch without ONNX: `torch.compile(model, backend="boltir")` and `boltir.compile_module`.

    fast = torch.compile(model, backend="boltir")                  # registered by entry point
    fast = torch.compile(model, backend="boltir", options={"dtype": "f16", "tune": True})
    y = fast(x)                                                    # x on the GPU: y on the GPU

    module = boltir.compile_module(model, (x,), dtype="f16")       # the same, without dynamo
    y = module(x)

**What a backend gets.** dynamo hands over an FX graph whose parameters and buffers are
graph inputs. They are frozen at compile time: the graph is wrapped in a module that holds
them as buffers, exported with `torch.export` on the example inputs (which fix every
shape), and imported by boltir's PyTorch frontend, so the weights are constants and
BatchNorm folding, QKV merging and the other weight rewrites apply.

**Changed weights.** The weights are those of the compile. Calls do not look at them
(comparing every weight's version on each call costs about 0.3 µs per tensor, a tenth of a
small model's time), so after changing the weights call `torch._dynamo.reset()` (or
compile the module again). With `options={"weights": "check"}` every call compares the
weight tensors and their versions with the compile's, and compiles again when they differ.

**Precision.** The model's own (the dtype of its floating weights, else of its inputs):
an f32 model builds in f32 (TF32 tensor cores). `dtype="f16"` or `"bf16"` is opt-in; the
inputs and outputs keep the model's types.

**Cache.** A build is kept under the object cache's root, in `compiled/<key>`, the key a
hash of the graph's code, the inputs' shapes and dtypes, the weights' bytes, the options and
boltir's version; a later process with the same model loads it without compiling. Each new
set of input shapes is compiled once (boltir compiles static shapes).

**Dynamic sizes.** With `dynamic=True` (or once dynamo marks a dimension dynamic after a
second size), the graph's sizes are symbols. Given `options={"max_size": N}`, boltir builds
one bucketed model (`boltir.buckets`) for every such dimension in 1..N, with kernels per
power-of-two bucket: a call runs the smallest bucket that holds it, padded, its outputs
sliced back; a model that mixes rows along a dynamic dimension is refused. dynamo's ranges
are open-ended, so without `max_size` boltir says so in one warning line and compiles each
new size on its own. Inputs that share a dynamic axis index (a batch dimension, say) share
one size per call.

**Unsupported parts.** When the graph holds an op boltir cannot import, it runs in
PyTorch, with one warning line (logger `boltir`) naming the op.

**Options**: `arch` (sm80, sm90; default: this machine's GPU, else sm90), `dtype`, `tune`
(measure kernel candidates on this GPU first), `cutlass` (2 or 3), `keep_f32` (op names
that stay f32), `weights` ("frozen" or "check"), `max_size` (the largest size of a dynamic
dimension: one bucketed build).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from boltir.backends.cuda.toolchain.nvcc import cache_root
from boltir.diagnostics import BoltError
from boltir.target import ARCHS, DEFAULT_ARCH
from boltir.version import __version__

log = logging.getLogger("boltir")

DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}


@dataclass(frozen=True)
class Settings:
    arch: str | None = None
    dtype: str | None = None
    tune: bool = False
    cutlass: int = 3
    keep_f32: tuple[str, ...] = ()
    weights: str = "frozen"
    max_size: int | None = None

    @staticmethod
    def of(options: dict | None) -> Settings:
        options = dict(options or {})
        known = set(Settings.__dataclass_fields__)
        unknown = sorted(set(options) - known)
        if unknown:
            raise BoltError(f"unknown boltir option '{unknown[0]}'; the options are {', '.join(sorted(known))}")
        settings = Settings(**{**options, "keep_f32": tuple(options.get("keep_f32", ()))})
        if settings.arch is not None and settings.arch not in ARCHS:
            raise BoltError(f"option arch='{settings.arch}': expected one of {', '.join(ARCHS)}")
        if settings.dtype is not None and settings.dtype not in DTYPES.values():
            raise BoltError(f"option dtype='{settings.dtype}': expected one of {', '.join(DTYPES.values())}")
        if settings.weights not in ("frozen", "check"):
            raise BoltError(f"option weights='{settings.weights}': expected 'frozen' or 'check'")
        if settings.max_size is not None and (type(settings.max_size) is not int or settings.max_size < 1):
            raise BoltError(f"option max_size={settings.max_size!r}: expected a whole number of 1 or more")
        return settings


def local_arch() -> str:
    """The arch of this machine's GPU 0 (sm90 for Hopper, sm80 for Ampere and Ada), else
    the default."""
    from boltir.backends.cuda.tune.tuner import gpu_identity

    try:
        _, _, arch = gpu_identity()
    except BoltError:
        return DEFAULT_ARCH
    return "sm90" if arch.startswith("sm9") else "sm80"


def model_dtype(weights, inputs) -> str:
    """The model's own precision: its first floating weight's, else its first floating
    input's, else f32."""
    for tensor in (*weights, *inputs):
        if tensor.is_floating_point():
            return DTYPES.get(str(tensor.dtype).removeprefix("torch."), "f32")
    return "f32"


# ------------------------------------------------------------------- building


def digest(parts, tensors) -> str:
    """The cache key: text parts, then each tensor's shape, dtype and bytes."""
    hasher = hashlib.sha256()
    for part in (__version__, *parts):
        hasher.update(str(part).encode() + b"\0")
    for tensor in tensors:
        data = tensor.detach().contiguous().cpu()
        hasher.update(f"{tuple(data.shape)} {data.dtype}".encode())
        hasher.update(data.view(-1).view(_byte_dtype(data)).numpy().tobytes() if data.numel() else b"")
    return hasher.hexdigest()[:32]


def _byte_dtype(tensor):
    import torch

    return torch.uint8 if tensor.dtype == torch.bool else tensor.dtype if tensor.dtype != torch.bfloat16 else torch.int16


_loaded: dict[str, object] = {}
"""The models this process loaded, by key (dynamo compiles a graph again for a new grad
mode or a new guard; the model is the same)."""


def build(import_graph, key: str, settings: Settings, dtype: str):
    """The compiled model for `key`, loaded once per process."""
    if key not in _loaded:
        _loaded[key] = compile_or_load(import_graph, key, settings, dtype)
    return _loaded[key]


def _cached(key: str, build_into):
    """The model in the cache's `compiled/<key>`, built first by `build_into(directory)` into
    a staging directory moved there whole (a crash or a concurrent build leaves no half)."""
    from boltir.runtime import load

    directory = cache_root() / "compiled" / key
    if not (directory / "manifest.json").is_file():
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=directory.parent))
        try:
            build_into(staging)
            try:
                os.replace(staging, directory)
            except OSError:  # another process finished the same build first
                pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return load(directory)


def compile_or_load(import_graph, key: str, settings: Settings, dtype: str):
    """The model for `key` loaded from the cache, else imported (`import_graph()`, a
    graph-level module), compiled into the cache, and loaded."""
    from boltir import compiler

    return _cached(key, lambda staging: compiler.compile(
        import_graph(), staging, arch=settings.arch or local_arch(), dtype=dtype, tune=settings.tune,
        cutlass=settings.cutlass, keep_f32=settings.keep_f32))


def compile_buckets_or_load(importer, input_shapes: dict, key: str, settings: Settings, dtype: str):
    """`compile_or_load` for a bucketed build: `importer(shapes)` imports the graph at each
    bucket's input shapes (`boltir.buckets.compile_buckets`)."""
    from boltir.buckets import compile_buckets

    return _cached(key, lambda staging: compile_buckets(
        importer, staging, input_shapes=input_shapes, arch=settings.arch or local_arch(), dtype=dtype,
        tune=settings.tune, cutlass=settings.cutlass, keep_f32=settings.keep_f32))


# --------------------------------------------------------- torch.compile backend


def is_weight(node, example) -> bool:
    """A parameter or buffer of the model (or a global tensor): frozen at compile time."""
    import torch

    if isinstance(example, torch.nn.Parameter):
        return True
    source = getattr(node.meta.get("grapharg"), "source", None)
    if source is None:
        return False
    from torch._dynamo import source as sources

    return (sources.is_from_unspecialized_param_buffer_source(source) or sources.is_from_global_source(source)
            or (example.dim() == 0 and _module_attribute(source)))


MODULE_LOCALS = ("self", "fn")
"""The names dynamo gives the compiled module in its sources (`L['self']`, and `L['fn']`
where it traces an nn.Module's call through torch 2.11's wrapper)."""


def _module_attribute(source) -> bool:
    """An attribute of the compiled module (a BatchNorm's eps, which dynamic=True hands
    over as a one-element tensor): a constant of the model, not an input."""
    chain = []
    while source is not None:
        chain.append(source)
        source = getattr(source, "base", None)
    return len(chain) > 1 and getattr(chain[-1], "local_name", None) in MODULE_LOCALS


def weight_name(placeholder: str) -> str:
    """`L_self_modules_conv_parameters_weight_` -> `conv_weight`."""
    name = re.sub(r"^l_(self_|s_)?", "", placeholder.lower()).strip("_")
    return re.sub(r"_(modules|parameters|buffers)_", "_", name) or "weight"


@dataclass
class Signature:
    """Which of a dynamo graph's inputs are weights, tensors the caller gives, or numbers."""

    weights: list[int] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)

    @staticmethod
    def of(graph_module, example_inputs) -> Signature:
        import torch

        signature = Signature()
        placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        for position, (node, example) in enumerate(zip(placeholders, example_inputs, strict=True)):
            if not isinstance(example, torch.Tensor):
                signature.numbers.append(position)
            elif is_weight(node, example):
                signature.weights.append(position)
                signature.names[position] = weight_name(node.name)
            else:
                signature.inputs.append(position)
        return signature


def _symbol(value) -> str | None:
    """The name of the symbol a dynamo size is (`s0`); '' for a size that is an expression
    of symbols; None for a fixed size."""
    import torch

    if not isinstance(value, torch.SymInt):
        return None
    expression = value.node.expr
    if expression.is_number:
        return None
    return str(expression) if expression.is_Symbol else ""


def _upper_bound(size) -> int | None:
    """The largest value dynamo's shape environment allows a symbolic size, if finite."""
    try:
        upper = size.node.shape_env.var_to_range[size.node.expr].upper
        return int(upper) if getattr(upper, "is_finite", False) and upper.is_Integer else None
    except (AttributeError, KeyError, TypeError):
        return None


@dataclass
class Symbols:
    """A dynamo graph's symbolic sizes: which dimensions of its tensor inputs, and which of
    its number inputs (the sizes dynamo passes separately), are which symbol."""

    dims: dict[int, dict[int, str]] = field(default_factory=dict)
    """tensor input position -> {axis: symbol}"""
    numbers: dict[int, str] = field(default_factory=dict)
    """number input position -> symbol"""
    highs: dict[str, int] = field(default_factory=dict)
    """symbol -> the largest size dynamo allows, where it bounds it (`mark_dynamic(..., max=N)`)"""

    @staticmethod
    def of(graph_module, signature: Signature) -> Symbols:
        symbols = Symbols()
        placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        for position in signature.inputs:
            shape = getattr(placeholders[position].meta.get("example_value"), "shape", ())
            for axis, size in enumerate(shape):
                name = _symbol(size)
                if name is None:
                    continue
                symbols.dims.setdefault(position, {})[axis] = name
                if name and (high := _upper_bound(size)) is not None:
                    symbols.highs[name] = high
        for position in signature.numbers:
            name = _symbol(placeholders[position].meta.get("example_value"))
            if name is not None:
                symbols.numbers[position] = name
        return symbols

    def sizes(self, args: list) -> dict[str, int]:
        """Each symbol's size in a call: read from the tensors' shapes."""
        return {name: int(args[position].shape[axis])
                for position, axes in self.dims.items() for axis, name in axes.items() if name}

    def concrete(self, args: list) -> list:
        """`args` with each symbolic number replaced by its size in this call (dynamo gives
        the first compile symbolic numbers; a call gives ints)."""
        sizes = self.sizes(args)
        values = list(args)
        for position, name in self.numbers.items():
            hint = getattr(getattr(values[position], "node", None), "hint", values[position])
            values[position] = sizes.get(name, int(hint))
        return values


def traceable_copy(graph_module, weights: dict):
    """A copy of dynamo's graph that torch.export can trace again: without dynamo's node
    metadata (its fake tensors carry dynamo's symbolic sizes and guards, which reference
    the caller's frame), and with each `.item()` of a one-element weight replaced by its
    value (under dynamic=True dynamo hands a module's float attributes, a BatchNorm's eps,
    over as tensors, and torch.export cannot trace `.item()`; frozen, they are numbers).
    dynamo's own graph is left as it is: PyTorch runs it where boltir cannot."""
    import torch

    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    values = {node: weights[placeholders.index(node.args[0])].item() for node in graph_module.graph.nodes
              if node.op == "call_method" and node.target == "item" and node.args[0] in placeholders
              and placeholders.index(node.args[0]) in weights}
    graph = torch.fx.Graph()
    remap = {}
    for node in graph_module.graph.nodes:
        if node in values:
            remap[node] = values[node]
            continue
        remap[node] = graph.node_copy(node, lambda n: remap[n])
        remap[node].meta = {}
    return torch.fx.GraphModule(graph_module, graph)


def frozen_module(graph_module, signature: Signature, args):
    """An nn.Module whose forward takes the graph's tensor inputs, with the weights (and
    the numbers) of `args` fixed inside: what torch.export turns into a program whose
    weights are constants."""
    import torch

    graph_module = traceable_copy(graph_module, {p: args[p] for p in signature.weights})

    class Frozen(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.graph_module = graph_module
            self.template = [a if p in signature.numbers else None for p, a in enumerate(args)]
            self.buffer_names = {}
            for position in signature.weights:
                name = signature.names[position]
                while name in self.buffer_names.values() or hasattr(self, name):
                    name += "_"
                self.register_buffer(name, args[position].detach())
                self.buffer_names[position] = name

        def forward(self, *inputs):
            values = list(self.template)
            for position, value in zip(signature.inputs, inputs, strict=True):
                values[position] = value
            for position, name in self.buffer_names.items():
                values[position] = getattr(self, name)
            return self.graph_module(*values)

    return Frozen().eval()


class BoltirGraph:
    """What the backend returns for one dynamo graph: compiles per set of input shapes
    (cached), runs the compiled model on the caller's tensors, or runs the graph in
    PyTorch where boltir cannot import it."""

    def __init__(self, graph_module, example_inputs, settings: Settings):
        self.graph_module = graph_module
        self.settings = settings
        self.signature = Signature.of(graph_module, example_inputs)
        self.symbols = Symbols.of(graph_module, self.signature)
        self.code = graph_module.code
        self.compiled: dict[tuple, object] = {}
        self.bucketed = None
        """The bucketed model of a graph with dynamic sizes and a max_size."""
        self.fallback = False
        self.weights: list | None = None
        self.versions: list[int] | None = None
        self.bucket_shapes: list[tuple] = []
        args = self.symbols.concrete(list(example_inputs))
        if self.symbols.dims and not self.bucketed_sizes(args):
            log.warning("boltir: %s is dynamic; options={'max_size': N} builds one model for sizes up to N "
                        "(buckets); without it each new size compiles on its own", self.first_dynamic())
            self.compile(args)
        elif self.symbols.dims:
            self.compile_bucketed(args)
        else:
            self.compile(args)

    def first_dynamic(self) -> str:
        position, axes = next(iter(self.symbols.dims.items()))
        placeholder = [n for n in self.graph_module.graph.nodes if n.op == "placeholder"][position]
        name = re.sub(r"^l_", "", placeholder.name.lower()).strip("_")
        return f"input '{name}' dimension {next(iter(axes))}"

    def key_of(self, args: list) -> tuple:
        return (tuple((tuple(args[p].shape), args[p].dtype, args[p].device.type) for p in self.signature.inputs),
                tuple(args[p] for p in self.signature.numbers))

    def compile(self, args: list):
        signature, settings = self.signature, self.settings
        weights = [args[p] for p in signature.weights]
        inputs = [args[p] for p in signature.inputs]
        dtype = settings.dtype or model_dtype(weights, inputs)
        key = digest([self.code, self.key_of(args), settings, dtype], weights)

        def import_graph():
            return self.import_at(args)

        try:
            model = build(import_graph, key, settings, dtype)
        except BoltError as error:
            if not is_import_error(error):
                raise
            log.warning("boltir: %s; this graph (%d ops) runs in PyTorch", short_reason(error), self.op_count())
            self.fallback = True
            return None
        self.weights, self.versions = weights, [w._version for w in weights]
        self.compiled[self.key_of(args)] = model
        return model

    def import_at(self, values: list):
        """The graph imported with the weights and numbers of `values` frozen, at the shapes
        of its tensors. torch.export runs outside dynamo's tracing context, whose guards
        (on the caller's frame) would otherwise land in the exported program, and on
        copies of the inputs."""
        import torch

        from boltir.frontends.torch import export_module, import_exported_program

        with torch._guards.tracing(None):  # copies: a tensor of mark_dynamic's would make the export dynamic
            program = export_module(frozen_module(self.graph_module, self.signature, values),
                                    tuple(values[p].detach().clone() for p in self.signature.inputs))
        return import_exported_program(program)

    def bucketed_sizes(self, args: list) -> dict[str, int]:
        """The symbols that get buckets, each with its largest size. With max_size: those
        whose size now is within it (an image's 224-pixel side stays fixed under a max_size
        of 64 for its batch). Without: those dynamo bounds (`mark_dynamic(..., max=N)`)."""
        chosen = {}
        for name, size in self.symbols.sizes(args).items():
            if self.settings.max_size is not None:
                if size <= self.settings.max_size:
                    chosen[name] = self.settings.max_size
            elif name in self.symbols.highs:
                chosen[name] = self.symbols.highs[name]
        return chosen

    def compile_bucketed(self, args: list):
        """One bucketed build: each chosen symbol's dimensions in 1..its largest size, the
        other dimensions fixed at this call's (each bucket imported at its own shapes)."""
        from boltir.ir import find_entry, input_names
        from boltir.shape_ranges import DimRange

        signature, settings, symbols = self.signature, self.settings, self.symbols
        weights = [args[p] for p in signature.weights]
        inputs = [args[p] for p in signature.inputs]
        dtype = settings.dtype or model_dtype(weights, inputs)
        highs = self.bucketed_sizes(args)

        import_at = self.import_at
        try:
            names = input_names(find_entry(import_at(args)))
        except BoltError as error:
            if not is_import_error(error):
                raise
            log.warning("boltir: %s; this graph (%d ops) runs in PyTorch", short_reason(error), self.op_count())
            self.fallback = True
            return None
        self.bucket_shapes = [tuple(DimRange(1, highs[symbols.dims[position][axis]])
                                    if symbols.dims.get(position, {}).get(axis) in highs else int(size)
                                    for axis, size in enumerate(args[position].shape))
                              for position in signature.inputs]
        input_shapes = dict(zip(names, self.bucket_shapes, strict=True))

        def importer(shapes):
            import torch

            values = list(args)
            for name, position in zip(names, signature.inputs, strict=True):
                values[position] = torch.zeros(shapes[name], dtype=args[position].dtype, device=args[position].device)
            return import_at(symbols.concrete(values))

        key = digest([self.code, "buckets", {n: tuple(map(str, s)) for n, s in input_shapes.items()}, settings, dtype], weights)
        if key not in _loaded:
            try:
                _loaded[key] = compile_buckets_or_load(importer, input_shapes, key, settings, dtype)
            except BoltError as error:
                if "cannot be bucketed" not in error.message:
                    raise
                log.warning("boltir: %s; each new size compiles on its own", error.message.removeprefix("error: "))
                self.bucket_shapes = []
                return self.compile(args)
        self.bucketed = _loaded[key]
        self.weights, self.versions = weights, [w._version for w in weights]
        return self.bucketed

    def fits_buckets(self, args: list) -> bool:
        """Whether a call's sizes are inside the bucketed build's (else it compiles on its own)."""
        for position, dims in zip(self.signature.inputs, self.bucket_shapes, strict=True):
            shape = args[position].shape
            if len(shape) != len(dims) or any(size > dim.high if hasattr(dim, "high") else size != dim
                                              for size, dim in zip(shape, dims, strict=True)):
                return False
        return True

    def op_count(self) -> int:
        return sum(1 for n in self.graph_module.graph.nodes if n.op in ("call_function", "call_method", "call_module"))

    def weights_changed(self, args: list) -> bool:
        return any(args[p] is not w or w._version != v
                   for p, w, v in zip(self.signature.weights, self.weights, self.versions, strict=True))

    def __call__(self, *args):
        if self.fallback:
            return self.graph_module(*args)
        args = list(args)
        if self.settings.weights == "check" and self.weights_changed(args):
            log.warning("boltir: the weights changed since they were frozen; compiling again")
            self.compiled.clear()
            if self.bucketed is not None:
                self.compile_bucketed(args)  # new weights: a new key
        if self.bucketed is not None and self.fits_buckets(args):
            return tuple(self.bucketed(*(args[p] for p in self.signature.inputs)))
        model = self.compiled.get(self.key_of(args)) or self.compile(args)
        if model is None:
            return self.graph_module(*args)
        return tuple(model(*(args[p] for p in self.signature.inputs)))


IMPORT_STAGES = ("unsupported ATen", "torch.export", "PyTorch frontend", "decomposition", "boltir compiles", "not a tensor",
                 "dynamic", "in place")


def is_import_error(error: BoltError) -> bool:
    """Whether `error` says boltir cannot take the graph (as opposed to a failed build)."""
    return any(stage in error.message for stage in IMPORT_STAGES)


def short_reason(error: BoltError) -> str:
    """The error's first clause: the op it names, without the list of supported ones."""
    return error.message.removeprefix("error: ").split("; supported:")[0]


def boltir_backend(graph_module, example_inputs, options: dict | None = None, **_):
    """The `torch.compile` backend (entry point `torch_dynamo_backends: boltir`)."""
    return BoltirGraph(graph_module, example_inputs, Settings.of(options))


# ------------------------------------------------------------ without dynamo


class CompiledModule:
    """An nn.Module compiled by `compile_module`: called like the module, on tensors of
    the example inputs' shapes; returns what the module returns (outputs valid until the
    next call)."""

    def __init__(self, model, out_spec):
        self.model = model
        self.out_spec = out_spec

    def __call__(self, *inputs):
        import torch.utils._pytree as pytree

        outputs = self.model(*inputs)
        return pytree.tree_unflatten(list(outputs), self.out_spec) if self.out_spec is not None else outputs[0]


def compile_module(module, example_inputs, *, arch: str | None = None, dtype: str | None = None, tune: bool = False,
                   cutlass: int = 3, keep_f32=()) -> CompiledModule:
    """Compiles an `nn.Module` (in eval mode, weights frozen) for the shapes of
    `example_inputs`: `torch.compile(module, backend="boltir")` without dynamo. Unlike the
    backend, an op boltir cannot import is an error."""
    from boltir.frontends.torch import export_module, import_exported_program

    settings = Settings.of({"arch": arch, "dtype": dtype, "tune": tune, "cutlass": cutlass, "keep_f32": keep_f32})
    import torch

    inputs = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else tuple(example_inputs)
    program = export_module(module, inputs)
    weights = [*program.state_dict.values(), *[c for c in program.constants.values() if isinstance(c, torch.Tensor)]]
    dtype = settings.dtype or model_dtype(weights, inputs)
    shapes = [(tuple(x.shape), x.dtype) for x in inputs]
    key = digest([program.graph_module.code, shapes, settings, dtype], weights)
    model = build(lambda: import_exported_program(program), key, settings, dtype)
    return CompiledModule(model, program.call_spec.out_spec)
