"""Hypothesis strategies for fuzzing the ONNX importer: valid ONNX graphs (random DAGs of
the ops boltir converts, with random shapes, attributes, element types and initializers),
the same graphs corrupted in the ways real files and careless exporters are wrong, and
their serialized bytes damaged.

A valid graph is grown one node at a time; onnx's strict shape inference (with data
propagation) gives each new output its shape, and a node it rejects is dropped, so that
every graph drawn passes `onnx.checker` and infers completely. Weights come from a numpy
generator seeded by one drawn integer, so that hypothesis shrinks the structure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

F32, F16, F64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE
I32, I64, I8, U8, BOOL = TensorProto.INT32, TensorProto.INT64, TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL
FLOATS = (F32, F16, F64)
NUMERIC = (F32, F16, F64, I32, I64)
SIGNED = (F32, F16, F64, I32, I64)
OPSETS = (11, 12, 13, 15, 17, 18, 20, 21)
"""The default-domain opsets a valid graph imports: the importer reads 11 and later as
they are (older ones are upgraded, which the corrupted graphs reach)."""


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]
    elem_type: int

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass
class GraphBuilder:
    """A graph grown node by node; `add` keeps a node only if onnx infers its outputs."""

    opset: int
    rng: np.random.Generator
    inputs: list[onnx.ValueInfoProto] = field(default_factory=list)
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)
    exact: bool = True
    """False once a node's result is implementation-defined (a float cast to an integer),
    so that comparing with onnxruntime would test nothing."""
    count: int = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}_{self.count}"

    def input(self, shape: tuple[int, ...], elem_type: int) -> Tensor:
        tensor = Tensor(self.fresh("x"), shape, elem_type)
        self.inputs.append(helper.make_tensor_value_info(tensor.name, elem_type, list(shape)))
        self.tensors.append(tensor)
        return tensor

    def constant(self, array: np.ndarray, prefix: str = "w") -> str:
        name = self.fresh(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weights(self, shape, elem_type: int = F32, low: float = -2.0, high: float = 2.0) -> str:
        return self.constant(random_array(self.rng, shape, elem_type, low, high))

    def model(self, outputs: list[Tensor], nodes: list[onnx.NodeProto] | None = None) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes if nodes is None else nodes,
            "fuzz",
            self.inputs,
            [helper.make_tensor_value_info(t.name, t.elem_type, list(t.shape)) for t in outputs],
            self.initializers,
        )
        opsets = [helper.make_opsetid("", self.opset)]
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = helper.find_min_ir_version_for(opsets)
        return model

    def add(self, op_type: str, inputs: list[str], outputs: int = 1, **attributes) -> list[Tensor] | None:
        """Adds a node if onnx's checker and strict shape inference accept it and give
        every output a static shape; returns the outputs, or None (and adds nothing)."""
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        node = helper.make_node(op_type, inputs, names, name=names[0], **attributes)
        model = self.model([], [*self.nodes, node])
        try:
            onnx.checker.check_model(model)
            inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
        except Exception:  # onnx raises several kinds: any of them means "not a valid node"
            return None
        infos = {info.name: info for info in inferred.graph.value_info}
        tensors = []
        for name in names:
            info = infos.get(name)
            if info is None or not info.type.HasField("tensor_type") or not info.type.tensor_type.HasField("shape"):
                return None
            dims = info.type.tensor_type.shape.dim
            if not all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims):
                return None
            tensors.append(Tensor(name, tuple(d.dim_value for d in dims), info.type.tensor_type.elem_type))
        if any(t.size > 4096 for t in tensors):
            return None  # keeps the interpreter and onnxruntime quick
        self.nodes.append(node)
        self.tensors.extend(tensors)
        return tensors


def random_array(rng: np.random.Generator, shape, elem_type: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    if elem_type == BOOL:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(int(low), info.min), min(int(high), info.max) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# -------------------------------------------------------------------- the node recipes
#
# Each recipe draws the node's inputs among the graph's tensors, its attributes and its
# initializers, and adds it; it returns False where no tensor suits it.


def pick(draw, b: GraphBuilder, accept=lambda t: True) -> Tensor | None:
    candidates = [t for t in b.tensors if accept(t)]
    return draw(st.sampled_from(candidates)) if candidates else None


def broadcastable_shape(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against `shape`: a suffix of it with some sizes 1."""
    suffix = shape[len(shape) - draw(st.integers(0, len(shape))) :]
    return tuple(draw(st.sampled_from((d, 1))) for d in suffix)


def axis_of(draw, rank: int, extra: int = 0) -> int:
    """An axis in [-rank, rank + extra - 1]."""
    return draw(st.integers(-rank - extra, rank + extra - 1)) if rank + extra else 0


def unary(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in FLOATS)
    if x is None:
        return False
    op = draw(st.sampled_from(("Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Sqrt", "Reciprocal",
                               "LeakyRelu", "HardSigmoid", "HardSwish", "Gelu")))
    attributes = {}
    if op == "LeakyRelu" and draw(st.booleans()):
        attributes["alpha"] = draw(st.floats(-1, 1, width=32))
    if op == "HardSigmoid" and draw(st.booleans()):
        attributes.update(alpha=draw(st.floats(0, 1, width=32)), beta=draw(st.floats(0, 1, width=32)))
    if op == "Gelu" and draw(st.booleans()):
        attributes["approximate"] = draw(st.sampled_from(("none", "tanh")))
    return b.add(op, [x.name], **attributes)


def integer_unary(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (I32, I64, BOOL))
    if x is None:
        return False
    return b.add("Not" if x.elem_type == BOOL else "Neg", [x.name])


def second_operand(draw, b: GraphBuilder, x: Tensor, low: float = -2.0, high: float = 2.0) -> str:
    """Another tensor of x's type that broadcasts with x, or a new initializer that does."""
    others = [t for t in b.tensors if t.elem_type == x.elem_type and broadcasts(t.shape, x.shape)]
    if others and draw(st.booleans()):
        return draw(st.sampled_from(others)).name
    return b.weights(broadcastable_shape(draw, x.shape), x.elem_type, low, high)


def broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(p == q or p == 1 or q == 1 for p, q in zip(reversed(a), reversed(b)))


def binary(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in NUMERIC)
    if x is None:
        return False
    ops = ["Add", "Sub", "Mul"] + (["Div"] if x.elem_type in FLOATS else [])
    op = draw(st.sampled_from(ops))
    y = second_operand(draw, b, x)
    inputs = [x.name, y] if draw(st.booleans()) else [y, x.name]
    return b.add(op, inputs)


def compare(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (*NUMERIC, BOOL))
    if x is None:
        return False
    ops = ["Equal"] if x.elem_type == BOOL else ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"]
    return b.add(draw(st.sampled_from(ops)), [x.name, second_operand(draw, b, x)])


def logical(draw, b):
    x = pick(draw, b, lambda t: t.elem_type == BOOL)
    if x is None:
        return False
    return b.add(draw(st.sampled_from(("And", "Or", "Xor"))), [x.name, second_operand(draw, b, x)])


def power(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64))
    if x is None:
        return False
    exponent_type = draw(st.sampled_from((x.elem_type, I64)))
    exponent = b.constant(np.array(draw(st.sampled_from((2, 3, 1, 0))), helper.tensor_dtype_to_np_dtype(exponent_type)))
    return b.add("Pow", [x.name, exponent])


def total(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in FLOATS)
    if x is None:
        return False
    return b.add("Sum", [x.name] + [second_operand(draw, b, x) for _ in range(draw(st.integers(0, 2)))])


def where(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in NUMERIC)
    if x is None:
        return False
    conditions = [t for t in b.tensors if t.elem_type == BOOL and broadcasts(t.shape, x.shape)]
    if conditions and draw(st.booleans()):
        condition = draw(st.sampled_from(conditions)).name
    else:
        condition = b.weights(broadcastable_shape(draw, x.shape), BOOL)
    return b.add("Where", [condition, x.name, second_operand(draw, b, x)])


def clip(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64))
    if x is None:
        return False
    dtype = helper.tensor_dtype_to_np_dtype(x.elem_type)
    low = draw(st.sampled_from((None, -1.0, 0.0)))
    high = draw(st.sampled_from((None, 1.0, 6.0)))
    inputs = [x.name, "" if low is None else b.constant(np.array(low, dtype))]
    if high is not None:
        inputs.append(b.constant(np.array(high, dtype)))
    return b.add("Clip", inputs)


def cast(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (*NUMERIC, BOOL))
    if x is None:
        return False
    target = draw(st.sampled_from((F32, F16, F64, I32, I64, I8, U8, BOOL)))
    added = b.add("Cast", [x.name], to=target)
    if added and x.elem_type in FLOATS and target not in FLOATS + (BOOL,):
        b.exact = False  # out-of-range floats have no defined integer
    return added


def conv(draw, b, transpose: bool = False):
    x = pick(draw, b, lambda t: t.elem_type == F32 and t.rank in (3, 4) and all(d >= 1 for d in t.shape))
    if x is None:
        return False
    channels, spatial = x.shape[1], x.shape[2:]
    group = draw(st.sampled_from([g for g in range(1, channels + 1) if channels % g == 0]))
    per_group = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, min(3, s + 2))) for s in spatial]
    attributes = {}
    if draw(st.booleans()):
        attributes["kernel_shape"] = kernel
    if draw(st.booleans()):
        attributes["strides"] = [draw(st.integers(1, 2)) for _ in spatial]
    if draw(st.booleans()):
        attributes["dilations"] = [draw(st.integers(1, 2)) for _ in spatial]
    if group > 1 or draw(st.booleans()):
        attributes["group"] = group
    padding = draw(st.sampled_from(("pads", "none", "VALID", "SAME_UPPER", "SAME_LOWER")))
    if padding == "pads":
        attributes["pads"] = [draw(st.integers(0, k - 1)) for k in kernel + kernel]
    elif padding != "none":
        attributes["auto_pad"] = padding
    if transpose:
        w_shape = (channels, per_group, *kernel)
        out_channels = per_group * group
        if draw(st.booleans()):
            attributes["output_padding"] = [draw(st.integers(0, s - 1)) for s in attributes.get("strides", [1] * len(spatial))]
    else:
        out_channels = per_group * group
        w_shape = (out_channels, channels // group, *kernel)
    inputs = [x.name, b.weights(w_shape, F32, -1, 1)]
    if draw(st.booleans()):
        inputs.append(b.weights((out_channels,), F32))
    added = b.add("ConvTranspose" if transpose else "Conv", inputs, **attributes)
    if added and transpose and attributes.get("auto_pad", "").startswith("SAME"):
        strides = attributes.get("strides", [1] * len(spatial))
        dilations = attributes.get("dilations", [1] * len(spatial))
        output_padding = attributes.get("output_padding", [0] * len(spatial))
        if any(p + (k - 1) * d + 1 < s for p, k, d, s in zip(output_padding, kernel, dilations, strides)):
            b.exact = False  # SAME asks for more than the window reaches: onnxruntime keeps the smaller size, onnx's reference (and boltir) the one SAME asks
    return added


def conv_transpose(draw, b):
    return conv(draw, b, transpose=True)


def pool(draw, b):
    x = pick(draw, b, lambda t: t.elem_type == F32 and t.rank in (3, 4) and all(d >= 1 for d in t.shape))
    if x is None:
        return False
    op = draw(st.sampled_from(("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")))
    if op.startswith("Global"):
        return b.add(op, [x.name])
    spatial = x.shape[2:]
    kernel = [draw(st.integers(1, min(3, s))) for s in spatial]
    attributes = {"kernel_shape": kernel}
    if draw(st.booleans()):
        attributes["strides"] = [draw(st.integers(1, 2)) for _ in spatial]
    padding = draw(st.sampled_from(("pads", "none", "VALID", "SAME_UPPER")))
    if padding == "pads":
        attributes["pads"] = [draw(st.integers(0, k - 1)) for k in kernel + kernel]
    elif padding != "none":
        attributes["auto_pad"] = padding
    if padding != "SAME_UPPER" and draw(st.booleans()):
        attributes["ceil_mode"] = 1
    if op == "AveragePool" and draw(st.booleans()):
        attributes["count_include_pad"] = 1
    if op == "MaxPool" and b.opset >= 12 and draw(st.booleans()):
        attributes["dilations"] = [draw(st.integers(1, 2)) for _ in spatial]
    return b.add(op, [x.name], **attributes)


def matmul(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64) and t.rank >= 1 and t.shape[-1] >= 1)
    if x is None:
        return False
    k = x.shape[-1]
    n = draw(st.integers(1, 5))
    shape = draw(st.sampled_from(((k,), (k, n), (2, k, n) if x.rank <= 3 else (k, n))))
    return b.add("MatMul", [x.name, b.weights(shape, x.elem_type, -1, 1)])


def gemm(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64) and t.rank == 2)
    if x is None:
        return False
    attributes = {}
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    m, k = reversed(x.shape) if trans_a else x.shape
    n = draw(st.integers(1, 5))
    if trans_a:
        attributes["transA"] = 1
    if trans_b:
        attributes["transB"] = 1
    if draw(st.booleans()):
        attributes["alpha"] = draw(st.floats(-2, 2, width=32))
    if draw(st.booleans()):
        attributes["beta"] = draw(st.floats(-2, 2, width=32))
    inputs = [x.name, b.weights((n, k) if trans_b else (k, n), x.elem_type, -1, 1)]
    if draw(st.booleans()):
        inputs.append(b.weights(draw(st.sampled_from(((n,), (1, n), (m, n), (m, 1), ()))), x.elem_type))
    return b.add("Gemm", inputs, **attributes)


def batch_norm(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64) and t.rank >= 2)
    if x is None:
        return False
    channels = x.shape[1]
    inputs = [x.name, b.weights((channels,), x.elem_type), b.weights((channels,), x.elem_type),
              b.weights((channels,), x.elem_type), b.weights((channels,), x.elem_type, 0.5, 2)]
    attributes = {"epsilon": draw(st.sampled_from((1e-5, 1e-3, 0.1)))} if draw(st.booleans()) else {}
    return b.add("BatchNormalization", inputs, **attributes)


def softmax(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64) and t.rank >= 1)
    if x is None:
        return False
    attributes = {"axis": axis_of(draw, x.rank)} if draw(st.booleans()) else {}
    return b.add("Softmax", [x.name], **attributes)


def layer_norm(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64) and t.rank >= 1)
    if x is None or b.opset < 17:
        return False
    axis = axis_of(draw, x.rank)
    inputs = [x.name, b.weights(x.shape[axis:], x.elem_type)]
    if draw(st.booleans()):
        inputs.append(b.weights(x.shape[axis:], x.elem_type))
    attributes = {"axis": axis} if axis != -1 or draw(st.booleans()) else {}
    if draw(st.booleans()):
        attributes["epsilon"] = draw(st.sampled_from((1e-5, 1e-3, 0.1)))
    return b.add("LayerNormalization", inputs, **attributes)


def reduce(draw, b):
    x = pick(draw, b, lambda t: t.elem_type in (F32, F64, I64) and t.rank >= 1)
    if x is None:
        return False
    op = draw(st.sampled_from(("ReduceMean", "ReduceSum", "ReduceMax")))
    axes = draw(st.lists(st.integers(-x.rank, x.rank - 1), max_size=x.rank, unique_by=lambda a: a % x.rank))
    attributes, inputs = {}, [x.name]
    if draw(st.booleans()):
        attributes["keepdims"] = draw(st.integers(0, 1))
    if op == "ReduceSum" and b.opset >= 13 or b.opset >= 18:
        if axes or draw(st.booleans()):
            inputs.append(b.constant(np.array(axes, np.int64)))
        if draw(st.booleans()):
            attributes["noop_with_empty_axes"] = draw(st.integers(0, 1))
    elif axes:
        attributes["axes"] = axes
    return b.add(op, inputs, **attributes)


def reshape(draw, b):
    x = pick(draw, b, lambda t: t.size >= 1)
    if x is None:
        return False
    sizes, rest = [], x.size
    for _ in range(draw(st.integers(0, 3))):
        size = draw(st.sampled_from([d for d in range(1, rest + 1) if rest % d == 0]))
        sizes.append(size)
        rest //= size
    sizes.append(rest)
    sizes = draw(st.permutations(sizes))
    if draw(st.booleans()):
        sizes[draw(st.integers(0, len(sizes) - 1))] = -1
    for axis in range(min(len(sizes), x.rank)):  # 0 copies the input's size
        if sizes[axis] == x.shape[axis] and draw(st.booleans()):
            sizes[axis] = 0
    return b.add("Reshape", [x.name, b.constant(np.array(sizes, np.int64))])


def flatten(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1)
    if x is None:
        return False
    return b.add("Flatten", [x.name], axis=draw(st.integers(-x.rank, x.rank)))


def transpose(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1)
    if x is None:
        return False
    attributes = {"perm": draw(st.permutations(range(x.rank)))} if draw(st.booleans()) else {}
    return b.add("Transpose", [x.name], **attributes)


def concat(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1)
    if x is None:
        return False
    axis = axis_of(draw, x.rank)
    inputs = [x.name]
    for _ in range(draw(st.integers(0, 2))):
        shape = list(x.shape)
        shape[axis] = draw(st.integers(0, 3))
        same = [t for t in b.tensors if t.elem_type == x.elem_type and t.rank == x.rank
                and all(p == q for i, (p, q) in enumerate(zip(t.shape, x.shape)) if i != axis % x.rank)]
        inputs.append(draw(st.sampled_from(same)).name if draw(st.booleans()) else b.weights(tuple(shape), x.elem_type))
    return b.add("Concat", inputs, axis=axis)


def split(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1 and all(d >= 1 for d in t.shape))
    if x is None:
        return False
    axis = axis_of(draw, x.rank)
    size = x.shape[axis]
    count = draw(st.integers(1, min(size, 3)))
    attributes, inputs = {"axis": axis}, [x.name]
    how = draw(st.sampled_from(("equal", "sizes", "num_outputs")))
    if how == "sizes":
        cuts = sorted(draw(st.lists(st.integers(0, size), min_size=count - 1, max_size=count - 1)))
        sizes = [q - p for p, q in zip([0, *cuts], [*cuts, size])]
        if b.opset >= 13:
            inputs.append(b.constant(np.array(sizes, np.int64)))
        else:
            attributes["split"] = sizes
    elif how == "num_outputs" and b.opset >= 18:
        attributes["num_outputs"] = count
        count = len([i for i in range(count) if i * -(-size // count) < size])
    elif size % count:
        return False
    return b.add("Split", inputs, outputs=count, **attributes)


def slice_(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1)
    if x is None:
        return False
    axes = draw(st.lists(st.integers(-x.rank, x.rank - 1), min_size=1, max_size=x.rank, unique_by=lambda a: a % x.rank))
    bound = st.one_of(st.integers(-6, 6), st.sampled_from((2**63 - 1, -(2**63), 2**31)))
    starts = [draw(bound) for _ in axes]
    ends = [draw(bound) for _ in axes]
    steps = [draw(st.sampled_from((1, 1, 2, -1, -2))) for _ in axes]
    inputs = [x.name, b.constant(np.array(starts, np.int64)), b.constant(np.array(ends, np.int64))]
    if draw(st.booleans()) or any(s != 1 for s in steps) or sorted(a % x.rank for a in axes) != list(range(len(axes))):
        inputs += [b.constant(np.array(axes, np.int64)), b.constant(np.array(steps, np.int64))]
    added = b.add("Slice", inputs)
    extreme = (2**63 - 1, -(2**63))
    if added and any((start in extreme or end in extreme) and step < 0 for start, end, step in zip(starts, ends, steps)):
        b.exact = False  # onnxruntime keeps one element there; onnx's reference (and boltir) none
    return added


def squeeze(draw, b):
    x = pick(draw, b)
    if x is None:
        return False
    if draw(st.booleans()):
        ones = [a for a, d in enumerate(x.shape) if d == 1]
        if not ones:
            return False
        axes = draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        axes = [a - x.rank if draw(st.booleans()) else a for a in axes]
        op = "Squeeze"
    else:
        axes = draw(st.lists(st.integers(0, x.rank), min_size=1, max_size=2, unique=True))
        op = "Unsqueeze"
    if b.opset >= 13:
        return b.add(op, [x.name, b.constant(np.array(axes, np.int64))])
    return b.add(op, [x.name], axes=axes)


def pad(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1 and t.elem_type in (F32, F64, I64))
    if x is None:
        return False
    modes = ["constant", "reflect", "edge"] + (["wrap"] if b.opset >= 19 else [])
    mode = draw(st.sampled_from(modes))
    pads = []
    for _ in range(2):
        for d in x.shape:
            low = -d if mode == "constant" else 0
            high = d - 1 if mode == "reflect" else 2
            pads.append(draw(st.integers(max(low, -1), max(min(high, 2), 0))) if d or mode == "constant" else 0)
    if mode == "reflect" and any(d < 2 for d in x.shape):
        return False
    inputs = [x.name, b.constant(np.array(pads, np.int64))]
    if mode == "constant" and draw(st.booleans()):
        inputs.append(b.constant(np.array(draw(st.integers(-3, 3)), helper.tensor_dtype_to_np_dtype(x.elem_type))))
    return b.add("Pad", inputs, mode=mode)


def resize(draw, b):
    x = pick(draw, b, lambda t: t.elem_type == F32 and t.rank == 4 and all(d >= 1 for d in t.shape))
    if x is None:
        return False
    mode = draw(st.sampled_from(("nearest", "linear", "cubic")))
    attributes = {"mode": mode}
    modes = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]
    if draw(st.booleans()):
        attributes["coordinate_transformation_mode"] = draw(st.sampled_from(modes))
    if mode == "nearest" and draw(st.booleans()):
        attributes["nearest_mode"] = draw(st.sampled_from(("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")))
    if mode == "cubic" and draw(st.booleans()):
        attributes["cubic_coeff_a"] = draw(st.sampled_from((-0.5, -0.75)))
    if draw(st.booleans()):
        scales = [1.0, 1.0] + [draw(st.sampled_from((0.5, 1.0, 1.5, 2.0, 3.0))) for _ in range(2)]
        inputs = [x.name, "", b.constant(np.array(scales, np.float32))]
    else:
        sizes = list(x.shape[:2]) + [draw(st.integers(1, 9)) for _ in range(2)]
        inputs = [x.name, "", "", b.constant(np.array(sizes, np.int64))]
    if b.opset < 13:
        inputs[1] = b.constant(np.array([], np.float32))
        if len(inputs) == 4:
            inputs[2] = b.constant(np.array([], np.float32))
    return b.add("Resize", inputs, **attributes)


def gather(draw, b):
    x = pick(draw, b, lambda t: t.rank >= 1 and all(d >= 1 for d in t.shape))
    if x is None:
        return False
    axis = axis_of(draw, x.rank)
    size = x.shape[axis]
    shape = draw(st.sampled_from(((), (2,), (2, 3))))
    indices = b.rng.integers(-size, size, size=shape).astype(draw(st.sampled_from((np.int64, np.int32))))
    return b.add("Gather", [x.name, b.constant(indices)], axis=axis)


def expand(draw, b):
    x = pick(draw, b)
    if x is None:
        return False
    shape = [draw(st.sampled_from((d, 2))) if d == 1 else draw(st.sampled_from((d, 1))) for d in x.shape]
    shape = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))] + shape
    return b.add("Expand", [x.name, b.constant(np.array(shape, np.int64))])


def identity(draw, b):
    x = pick(draw, b)
    if x is None:
        return False
    op = draw(st.sampled_from(("Identity", "Dropout")))
    return b.add(op, [x.name])


def shape_of(draw, b):
    x = pick(draw, b)
    if x is None:
        return False
    op = draw(st.sampled_from(("Shape", "Size")))
    attributes = {}
    if op == "Shape" and b.opset >= 15 and draw(st.booleans()):
        attributes["start"] = draw(st.integers(-x.rank - 1, x.rank + 1))
    return b.add(op, [x.name], **attributes)


def constant(draw, b):
    kind = draw(st.sampled_from(("value", "value_float", "value_ints", "ConstantOfShape", "Range")))
    if kind == "value":
        shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
        elem_type = draw(st.sampled_from((F32, I64, BOOL, F64, I32)))
        value = numpy_helper.from_array(random_array(b.rng, shape, elem_type), "value")
        return b.add("Constant", [], value=value)
    if kind == "value_float" and b.opset >= 12:
        return b.add("Constant", [], value_float=draw(st.floats(-4, 4, width=32)))
    if kind == "value_ints" and b.opset >= 12:
        return b.add("Constant", [], value_ints=draw(st.lists(st.integers(-4, 4), min_size=1, max_size=4)))
    if kind == "ConstantOfShape":
        shape = b.constant(np.array(draw(st.lists(st.integers(0, 4), max_size=3)), np.int64))
        attributes = {}
        if draw(st.booleans()):
            attributes["value"] = numpy_helper.from_array(np.array([draw(st.integers(-3, 3))], np.float32), "value")
        return b.add("ConstantOfShape", [shape], **attributes)
    start, limit, delta = draw(st.integers(-5, 5)), draw(st.integers(-5, 5)), draw(st.sampled_from((1, 2, -1, -3)))
    return b.add("Range", [b.constant(np.array(v, np.int64)) for v in (start, limit, delta)])


RECIPES = (unary, integer_unary, binary, compare, logical, power, total, where, clip, cast, conv, conv_transpose,
           pool, matmul, gemm, batch_norm, softmax, layer_norm, reduce, reshape, flatten, transpose, concat, split,
           slice_, squeeze, pad, resize, gather, expand, identity, shape_of, constant)
"""Between them they reach every ONNX op boltir converts except Upsample (gone since
opset 10; the corrupted graphs reach it)."""


def model_text(proto: onnx.ModelProto) -> str:
    """onnx's text form of a model, or the protobuf's where the printer cannot."""
    try:
        return onnx.printer.to_text(proto)
    except Exception:  # the printer refuses some corrupted models
        return str(proto)


@dataclass
class FuzzModel:
    """A drawn model, and what a test needs to know about it."""

    proto: onnx.ModelProto
    exact: bool
    """Whether onnxruntime and boltir must agree on it (no implementation-defined casts)."""

    def __repr__(self) -> str:  # hypothesis prints the failing example: make it readable
        return f"FuzzModel(exact={self.exact}, proto=\n{model_text(self.proto)})"


@st.composite
def valid_models(draw, min_nodes: int = 2, max_nodes: int = 8) -> FuzzModel:
    opset = draw(st.sampled_from(OPSETS))
    b = GraphBuilder(opset, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
    for _ in range(draw(st.integers(1, 2))):
        rank = draw(st.sampled_from((4, 3, 2, 1, 0, 4, 3)))
        shape = tuple(draw(st.integers(1, 6)) for _ in range(rank))
        b.input(shape, draw(st.sampled_from((F32,) * 6 + (F16, F64, I64, I32, BOOL))))
    for _ in range(draw(st.integers(min_nodes, max_nodes))):
        for _attempt in range(4):
            if draw(st.sampled_from(RECIPES))(draw, b):
                break
    produced = b.tensors[len(b.inputs):]
    if not produced:
        produced = b.add("Identity", [b.tensors[0].name]) or []
    last = produced[-1]
    outputs = [last]
    extra = [t for t in produced if t is not last]
    if extra and draw(st.booleans()):
        outputs.insert(0, draw(st.sampled_from(extra)))
    model = b.model(outputs)
    onnx.checker.check_model(model, full_check=True)
    return FuzzModel(model, b.exact)


def model_inputs(proto: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Random values for a valid model's graph inputs."""
    rng = np.random.default_rng(seed)
    initializers = {i.name for i in proto.graph.initializer}
    inputs = {}
    for info in proto.graph.input:
        if info.name in initializers:
            continue
        tensor_type = info.type.tensor_type
        shape = tuple(d.dim_value for d in tensor_type.shape.dim)
        inputs[info.name] = random_array(rng, shape, tensor_type.elem_type)
    return inputs


# ---------------------------------------------------------------- corrupting a graph

UNSUPPORTED_TYPES = (TensorProto.STRING, TensorProto.COMPLEX64, TensorProto.UNDEFINED, 999, TensorProto.FLOAT8E4M3FN)
WEIRD_INTS = (0, -1, -7, 2**31, 2**40, -(2**62), 2**63 - 1)
WEIRD_NAMES = ("", " ", "nowhere", "x\ny", "ü/∂", "a" * 300)


def attribute_of_another_type(draw, name: str) -> onnx.AttributeProto:
    kind = draw(st.sampled_from(("int", "float", "string", "ints", "floats", "strings", "tensor", "graph", "empty")))
    if kind == "int":
        return helper.make_attribute(name, draw(st.sampled_from(WEIRD_INTS)))
    if kind == "float":
        return helper.make_attribute(name, draw(st.sampled_from((0.0, -1.5, float("nan"), float("inf"), 1e30))))
    if kind == "string":
        return helper.make_attribute(name, draw(st.sampled_from(("", "SAME", "bogus", "ü"))))
    if kind == "ints":
        return helper.make_attribute(name, draw(st.lists(st.sampled_from(WEIRD_INTS + (1, 2, 3)), min_size=1, max_size=9)))
    if kind == "floats":
        return helper.make_attribute(name, [0.5, -2.0, float("nan")][: draw(st.integers(1, 3))])
    if kind == "strings":
        return helper.make_attribute(name, ["a", "b"])
    if kind == "tensor":
        return helper.make_attribute(name, numpy_helper.from_array(np.array([1, 2], np.int64)))
    if kind == "graph":
        return helper.make_attribute(name, helper.make_graph([], "sub", [], []))
    attribute = onnx.AttributeProto(name=name, type=onnx.AttributeProto.INTS)  # a list with no values
    return attribute


def weird_value_of_the_same_type(draw, attribute: onnx.AttributeProto) -> onnx.AttributeProto:
    """The attribute with a value of its own type that no valid model has: a negative or
    huge size, a list of another length, a NaN, an unknown mode."""
    value = helper.get_attribute_value(attribute)
    if attribute.type == onnx.AttributeProto.INT:
        value = draw(st.sampled_from(WEIRD_INTS + (value + 1, -value)))
    elif attribute.type == onnx.AttributeProto.INTS:
        value = list(value)
        kind = draw(st.sampled_from(("entry", "longer", "shorter", "empty", "repeat")))
        if kind == "entry" and value:
            value[draw(st.integers(0, len(value) - 1))] = draw(st.sampled_from(WEIRD_INTS))
        elif kind == "longer":
            value.append(draw(st.sampled_from((0, 1, 2, -1))))
        elif kind == "shorter":
            value = value[:-1]
        elif kind == "empty":
            value = []
        elif value:
            value = [value[0]] * len(value)
    elif attribute.type == onnx.AttributeProto.FLOAT:
        value = draw(st.sampled_from((float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 1e38)))
    elif attribute.type == onnx.AttributeProto.STRING:
        value = draw(st.sampled_from(("", "bogus", value.decode().lower(), value.decode() + " ")))
    elif attribute.type == onnx.AttributeProto.TENSOR:
        value = numpy_helper.from_array(draw(st.sampled_from((np.zeros((0,), np.float32), np.ones((2, 2), np.int64),
                                                              np.array("text")))), "value")
    else:
        return attribute_of_another_type(draw, attribute.name)
    return helper.make_attribute(attribute.name, value)


def known_attribute_names(node: onnx.NodeProto, opset: int) -> list[str]:
    try:
        return sorted(onnx.defs.get_schema(node.op_type, max(opset, 1), node.domain).attributes)
    except Exception:  # no schema (an unknown op, a bad opset): only the node's own
        return [a.name for a in node.attribute]


def mutate_attribute(draw, model: onnx.ModelProto) -> str:
    node = draw(st.sampled_from(list(model.graph.node)))
    opset = model.opset_import[0].version if model.opset_import else 17
    names = sorted({*known_attribute_names(node, opset), *(a.name for a in node.attribute)})
    name = draw(st.sampled_from(names or ["bogus"]))
    present = {a.name: a for a in node.attribute}
    if name in present and draw(st.booleans()):
        replacement = weird_value_of_the_same_type(draw, present[name])
    else:
        replacement = attribute_of_another_type(draw, name)
    if draw(st.booleans()) and any(a.name == name for a in node.attribute):
        kept = [a for a in node.attribute if a.name != name]
        del node.attribute[:]
        node.attribute.extend(kept)
        return f"removed attribute {name} of {node.name}"
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend([*kept, replacement])
    return f"attribute {name} of {node.name} -> {helper.get_attribute_value(replacement)!r}"


def mutate_input_type(draw, model: onnx.ModelProto) -> str:
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    info = draw(st.sampled_from(inputs))
    tensor_type = info.type.tensor_type
    kind = draw(st.sampled_from(("dim", "dim", "dim", "rank", "no_shape", "elem_type", "not_a_tensor")))
    if kind == "dim" and tensor_type.shape.dim:
        dim = draw(st.sampled_from(list(tensor_type.shape.dim)))
        choice = draw(st.sampled_from(("zero", "negative", "huge", "param", "empty", "empty_param")))
        if choice == "param":
            dim.dim_param = draw(st.sampled_from(("N", "batch", "")))
        elif choice == "empty":
            dim.Clear()
        elif choice == "empty_param":
            dim.dim_param = ""
        else:
            dim.dim_value = {"zero": 0, "negative": draw(st.sampled_from((-1, -3))), "huge": draw(st.sampled_from((2**31, 2**40, 2**62)))}[choice]
        return f"input {info.name}: dim -> {choice}"
    if kind == "rank":
        tensor_type.shape.dim.add().dim_value = draw(st.integers(1, 3))
        return f"input {info.name}: one more dim"
    if kind == "no_shape":
        tensor_type.ClearField("shape")
        return f"input {info.name}: no shape"
    if kind == "not_a_tensor":
        info.type.Clear()
        if draw(st.booleans()):
            info.type.sequence_type.elem_type.tensor_type.elem_type = F32
        return f"input {info.name}: not a tensor"
    tensor_type.elem_type = draw(st.sampled_from(UNSUPPORTED_TYPES + (F32, F16, I64, BOOL, I8)))
    return f"input {info.name}: elem_type -> {tensor_type.elem_type}"


def mutate_initializer(draw, model: onnx.ModelProto) -> str:
    initializers = model.graph.initializer
    if not initializers:
        return mutate_wiring(draw, model)
    init = draw(st.sampled_from(list(initializers)))
    kind = draw(st.sampled_from(("dims", "data_type", "raw_data", "remove", "duplicate", "external", "empty")))
    if kind == "dims":
        init.dims.append(draw(st.sampled_from((0, 2, -1))))
    elif kind == "data_type":
        init.data_type = draw(st.sampled_from(UNSUPPORTED_TYPES + (F32, I64, F16, BOOL)))
    elif kind == "raw_data":
        array = numpy_helper.to_array(init)
        init.ClearField("float_data")
        init.ClearField("int64_data")
        init.raw_data = array.tobytes()[: draw(st.integers(0, max(array.nbytes - 1, 0)))]
    elif kind == "remove":
        kept = [i for i in initializers if i is not init]
        del initializers[:]
        initializers.extend(kept)
    elif kind == "duplicate":
        copy = initializers.add()
        copy.CopyFrom(init)
        copy.dims[:] = [1] * len(init.dims)
        copy.raw_data = np.zeros(1, helper.tensor_dtype_to_np_dtype(init.data_type)).tobytes() if init.data_type in (F32, I64) else b""
    elif kind == "external":
        init.data_location = TensorProto.EXTERNAL
        entry = init.external_data.add()
        entry.key, entry.value = "location", "nowhere.bin"
    else:
        init.ClearField("raw_data")
        for field_name in ("float_data", "int32_data", "int64_data", "double_data"):
            init.ClearField(field_name)
    return f"initializer {init.name}: {kind}"


def mutate_wiring(draw, model: onnx.ModelProto) -> str:
    nodes = model.graph.node
    node = draw(st.sampled_from(list(nodes)))
    kind = draw(st.sampled_from(("drop_input", "extra_input", "dangling", "empty_input", "later_output", "self_loop",
                                 "duplicate_output", "empty_output", "output_is_input", "no_outputs", "reverse")))
    if kind == "drop_input" and node.input:
        del node.input[draw(st.integers(0, len(node.input) - 1))]
    elif kind == "extra_input":
        node.input.append(draw(st.sampled_from([*(i.name for i in model.graph.input), *(t for n in nodes for t in n.output)])))
    elif kind == "dangling" and node.input:
        node.input[draw(st.integers(0, len(node.input) - 1))] = draw(st.sampled_from(WEIRD_NAMES[1:]))
    elif kind == "empty_input" and node.input:
        node.input[draw(st.integers(0, len(node.input) - 1))] = ""
    elif kind == "later_output" and node.input and any(n.output for n in nodes):
        later = [o for n in nodes for o in n.output]
        node.input[draw(st.integers(0, len(node.input) - 1))] = draw(st.sampled_from(later))
    elif kind == "self_loop" and node.input and node.output:
        node.input[0] = node.output[0]
    elif kind == "duplicate_output" and node.output:
        other = draw(st.sampled_from(list(nodes)))
        node.output[0] = other.output[-1] if other is not node and other.output else model.graph.input[0].name
    elif kind == "empty_output" and node.output:
        node.output[draw(st.integers(0, len(node.output) - 1))] = ""
    elif kind == "output_is_input" and node.output:
        node.output[0] = model.graph.input[0].name
    elif kind == "no_outputs":
        del node.output[:]
    else:
        reordered = list(reversed(nodes))
        del nodes[:]
        nodes.extend(reordered)
    return f"{kind} on {node.name}"


def mutate_graph_outputs(draw, model: onnx.ModelProto) -> str:
    outputs = model.graph.output
    kind = draw(st.sampled_from(("none", "duplicate", "dangling", "elem_type", "shape", "input")))
    if not outputs:
        kind = "input"
    if kind == "none":
        del outputs[:]
    elif kind == "duplicate":
        outputs.add().CopyFrom(outputs[0])
    elif kind == "dangling":
        outputs[0].name = draw(st.sampled_from(WEIRD_NAMES))
    elif kind == "elem_type":
        outputs[0].type.tensor_type.elem_type = draw(st.sampled_from(UNSUPPORTED_TYPES + (I64, BOOL)))
    elif kind == "shape":
        outputs[0].type.tensor_type.shape.dim.add().dim_value = 7
    else:
        outputs.add().CopyFrom(model.graph.input[0])
    return f"graph outputs: {kind}"


SUPPORTED_OPS_FOR_SWAP = ("Conv", "Gemm", "Reshape", "Resize", "Slice", "Split", "Pad", "Gather", "Concat",
                          "LayerNormalization", "BatchNormalization", "MaxPool", "Upsample", "Expand", "Squeeze",
                          "Unsqueeze", "Transpose", "Softmax", "ReduceSum", "Cast", "Clip", "Where", "Sum",
                          "ConstantOfShape", "Range", "Constant", "Dropout", "Flatten", "ConvTranspose",
                          "AveragePool", "MatMul", "Shape", "Pow", "Not", "Gelu", "LeakyRelu")


def mutate_op(draw, model: onnx.ModelProto) -> str:
    node = draw(st.sampled_from(list(model.graph.node)))
    kind = draw(st.sampled_from(("swap", "swap", "swap", "unknown", "domain", "name", "subgraph")))
    if kind == "swap":
        node.op_type = draw(st.sampled_from(SUPPORTED_OPS_FOR_SWAP))
    elif kind == "unknown":
        node.op_type = draw(st.sampled_from(("TopK", "Bogus", "", "relu")))
    elif kind == "domain":
        node.domain = draw(st.sampled_from(("com.microsoft", "ai.onnx.ml", "bogus")))
    elif kind == "name":
        node.name = draw(st.sampled_from(WEIRD_NAMES))
    else:
        node.attribute.append(helper.make_attribute("body", helper.make_graph([], "sub", [], [])))
    return f"{kind} -> {node.op_type} ({node.name})"


def mutate_opset(draw, model: onnx.ModelProto) -> str:
    kind = draw(st.sampled_from(("version", "version", "remove", "duplicate", "ir_version")))
    if kind == "version":
        model.opset_import[0].version = draw(st.sampled_from((0, 1, 6, 7, 9, 10, 11, 13, 23, 29, 1000, -1, 2**62)))
    elif kind == "remove":
        del model.opset_import[:]
    elif kind == "duplicate":
        model.opset_import.add().CopyFrom(helper.make_opsetid("", draw(st.sampled_from((7, 13, 99)))))
    else:
        model.ir_version = draw(st.sampled_from((0, 1, 3, 99)))
    return f"opset: {kind} -> {[(o.domain, o.version) for o in model.opset_import]}"


def mutate_sizes(draw, model: onnx.ModelProto) -> str:
    """Constant shapes with zero, negative and huge sizes: what Reshape, Expand,
    ConstantOfShape, Range, Resize, Slice and Pad read at import."""
    int_initializers = [i for i in model.graph.initializer if i.data_type == I64]
    if not int_initializers:
        return mutate_attribute(draw, model)
    init = draw(st.sampled_from(int_initializers))
    try:
        array = numpy_helper.to_array(init)
    except ValueError:  # an earlier mutation broke it already
        return mutate_attribute(draw, model)
    values = array.copy().reshape(-1)
    if values.size:
        values[draw(st.integers(0, values.size - 1))] = draw(st.sampled_from(WEIRD_INTS + (3, -2)))
    init.CopyFrom(numpy_helper.from_array(values.reshape(array.shape), init.name))
    return f"initializer {init.name} -> {values.tolist()}"


MUTATIONS = (mutate_attribute, mutate_attribute, mutate_input_type, mutate_initializer, mutate_wiring, mutate_wiring,
             mutate_graph_outputs, mutate_op, mutate_op, mutate_opset, mutate_sizes, mutate_sizes)


@dataclass
class CorruptedModel:
    proto: onnx.ModelProto
    mutations: list[str]

    def __repr__(self) -> str:
        return f"CorruptedModel(mutations={self.mutations}, proto=\n{model_text(self.proto)})"


@st.composite
def corrupted_models(draw) -> CorruptedModel:
    proto = draw(valid_models(min_nodes=1, max_nodes=4)).proto
    mutations = []
    for _ in range(draw(st.integers(1, 2))):
        try:
            mutations.append(draw(st.sampled_from(MUTATIONS))(draw, proto))
        except (IndexError, ValueError, onnx.checker.ValidationError):  # an earlier mutation removed or broke it
            mutations.append("(none: nothing left to change)")
    return CorruptedModel(proto, mutations)


# --------------------------------------------------------------- damaging the bytes


@dataclass
class DamagedBytes:
    data: bytes
    damage: list[str]

    def __repr__(self) -> str:
        return f"DamagedBytes(damage={self.damage}, {len(self.data)} bytes)"


@st.composite
def damaged_models(draw) -> DamagedBytes:
    data = bytearray(draw(valid_models(min_nodes=1, max_nodes=4)).proto.SerializeToString())
    damage = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("flip", "flip", "truncate", "insert", "delete", "duplicate")))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        else:
            data[at:at] = data[at : at + draw(st.integers(1, 32))]
        damage.append(f"{kind}@{at}")
    return DamagedBytes(bytes(data), damage)
