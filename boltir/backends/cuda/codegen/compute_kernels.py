"""Templated CUDA kernels for the op-level ops that are not CUTLASS instances: the
reduction-style families (pooling, softmax, layer norm, reductions) and plain fallback
kernels for GEMMs and convs that have no CUTLASS instance.

    source = emit_translation_unit(ops)    # one standalone CUDA unit, instances deduplicated
    name = kernel_name(op)                 # boltir_softmax_1a2b3c4d5e6f: the op's launcher
    operands = launch_operands(op)         # the launcher's pointer operands, output last

One jinja2 template per family lives in `templates/compute/` (`unit.cu.j2` is the unit
around them: includes, the shared device helpers, `boltir_error_string`). A unit needs the
CUDA toolkit's headers only (no CUTLASS) and compiles with nvcc as the CUTLASS units do
(`CompileJob(name, source, "sm80")`).

**Instances.** Every shape and attribute is baked into its instance: `instance_key(op)` is
the family, every operand's and the result's type, and every property (defaults filled
in, axes normalized); ops with one key share one kernel. The launcher is
`boltir_<family>_<12 hex digits of the key's SHA-256>`, and its kernels live in
`namespace boltir_instances { namespace NAME { ... } }`, so any number of instances and
units link into one library (the same instance in two units of one library would define
its launcher twice: emit each instance once).

**Launcher ABI.**

    extern "C" int NAME(const void *in0, ..., const void *inN, void *out, cudaStream_t stream);

The op's operands in operand order (an absent optional operand, such as a GEMM without a
bias, is not a parameter), then the result. Every pointer is a device pointer to a
contiguous row-major tensor of the op's static shape and element type (f16, bf16 or f32;
cumsum also i32 and i64),
aligned to 16 bytes (what cudaMalloc and torch give). The launch is asynchronous on
`stream`; nothing is allocated or synchronized. It returns 0, or 1000 + the `cudaError_t`
that cudaGetLastError() reports after the launch (`boltir_error_string` describes it).
An op with an empty result launches nothing and returns 0.

**Numerics.** Everything computes in f32 and rounds once to the result type, as
`boltir.interp` does: the GEMM/conv epilogue is `interp.op.apply_epilogue` (activations from
`epilogues.activation_expression`), the back-to-back ops round their intermediate to the
result type, softmax is `exp(x - max) / sum`, layer norm uses the mean and the biased
variance of the normalized axes, max propagates NaN as numpy's does.

**Families.**
- `pool2d`: max and average windows, one thread per output pixel and channel vector (NHWC)
  or output element (NCHW); the global pools are reductions (see `reduce`).
- `softmax`, `layer_norm`: rows held in registers, `G` lanes (2..32, several rows per warp)
  or a block per row, one read and one write; rows too long for that stream through the
  block twice (online max/sum, Welford). Softmax along a strided axis: one thread per
  vector of the inner extent.
- `reduce` (mean, sum, max over any axes): the axes are merged; where the innermost
  merged axis is reduced, lanes or a block per output stride along it with vector loads;
  where it is kept, threads own vectors of it and split the reduction in shared memory.
- `cumsum` (also i32 and i64; `INTEGER_FAMILIES`): a warp per row scans tiles of 32
  vectors with shuffles and carries each tile's total; along a strided axis a thread per
  vector of the inner extent walks the axis. Integers sum as unsigned (they wrap).
- Fallbacks (`is_fallback`): `gemm_fallback`, `conv2d_fallback`,
  `conv_transpose2d_fallback` are one thread per output element, with vector loads along
  the reduction where an operand is contiguous in it; `b2b_gemm_fallback` and
  `b2b_conv2d_fallback` are one block per output row / pixel, the intermediate in shared
  memory. Correct, not fast: the compiler should warn when it uses them.

16-byte accesses are used wherever the contiguous extent allows (for f16: extent a
multiple of 8); otherwise the widest power of two that divides it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from boltir.backends.cuda.codegen.epilogues import activation_expression, f32_literal
from boltir.backends.cuda.codegen.generator import Instance, LaunchArguments, render
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape

FAMILIES: dict[type, str] = {
    ops.Pool2dOp: "pool2d",
    ops.SoftmaxOp: "softmax",
    ops.LayerNormOp: "layer_norm",
    ops.ReduceOp: "reduce",
    ops.CumSumOp: "cumsum",
    ops.GemmOp: "gemm_fallback",
    ops.Conv2dOp: "conv2d_fallback",
    ops.Conv2dMaxPoolOp: "conv2d_fallback",
    ops.SpaceToDepthConv2dOp: "conv2d_fallback",
    ops.ConvTranspose2dOp: "conv_transpose2d_fallback",
    ops.B2bGemmOp: "b2b_gemm_fallback",
    ops.B2bConv2dOp: "b2b_conv2d_fallback",
    ops.DepthwisePointwiseConv2dOp: "b2b_conv2d_fallback",
}
FALLBACK_FAMILIES = frozenset(f for f in FAMILIES.values() if f.endswith("_fallback"))

ELEMENTS = {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float"}
INTEGER_ELEMENTS = {"i32": "int", "i64": "long long"}
"""Integer element types, which only the `INTEGER_FAMILIES` take."""
INTEGER_FAMILIES = frozenset({"cumsum"})
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i64": 8}

VECTOR_BYTES = 16
REGISTER_FLOATS = 32
"""Floats of a row one thread keeps in registers (more would spill at 512 threads)."""
GROUP_BLOCK = 128
"""Threads of a block whose groups of G lanes each own one row."""
MAX_ROW_BLOCK = 512
SHARED_LIMIT = 48 * 1024
"""Static shared memory a kernel may declare."""
INT_LIMIT = 2**31 - 2**16
"""Offsets below this are computed in int; larger tensors use 64-bit offsets."""


# ------------------------------------------------------------------------ helpers


def family(op: Operation) -> str:
    try:
        return FAMILIES[type(op)]
    except KeyError:
        raise BoltError(f"'{op.name}' has no compute kernel family", format_location(op.location)) from None


def is_fallback(op: Operation) -> bool:
    """True for the plain GEMM/conv kernels (slow: the compiler should say so)."""
    return FAMILIES.get(type(op)) in FALLBACK_FAMILIES


def _element(value: SSAValue) -> str:
    return str(value.type.element_type)


def element_types(op: Operation) -> dict[str, str]:
    """The element types the op's family takes: boltir's name -> the CUDA type."""
    return ELEMENTS | INTEGER_ELEMENTS if FAMILIES.get(type(op)) in INTEGER_FAMILIES else ELEMENTS


def _operands(op: Operation) -> list[tuple[str, SSAValue]]:
    """The op's present operands with their names, in operand order."""
    named = []
    for name, _ in type(op).get_irdl_definition().operands:
        value = getattr(op, name)
        if value is not None:
            named.append((name, value))
    return named


def launch_operands(op: Operation) -> list[SSAValue]:
    """The launcher's pointer operands in ABI order: the present operands, then the result."""
    family(op)
    return [value for _, value in _operands(op)] + [op.results[0]]


def vector_width(extent: int, element_bytes: int) -> int:
    """The most elements (a power of two, at most 16 bytes) that divide `extent`: the width
    of the vector accesses along a contiguous extent."""
    width = VECTOR_BYTES // element_bytes
    while width > 1 and extent % width:
        width //= 2
    return width


def _next_pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _row_major_strides(shape: Sequence[int]) -> list[int]:
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(running)
        running *= extent
    return strides[::-1]


def _merge(dims: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(extent, stride) dims, outer to inner, without extent-1 dims and with neighbours
    that are one contiguous run merged."""
    merged: list[tuple[int, int]] = []
    for extent, stride in dims:
        if extent == 1:
            continue
        if merged and merged[-1][1] == extent * stride:
            merged[-1] = (merged[-1][0] * extent, stride)
        else:
            merged.append((extent, stride))
    return merged


def offset_function(name: str, dims: Sequence[tuple[int, int]]) -> str:
    """`index_t name(index_t i)`: the memory offset of the i-th point of a row-major index
    space whose dims are (extent, stride), outer to inner (stride 0 broadcasts)."""
    dims = _merge(dims)
    lines = [f"__device__ __forceinline__ index_t {name}(index_t i) {{", "  index_t offset = 0;"]
    for position, (extent, stride) in enumerate(reversed(dims)):
        last = position == len(dims) - 1
        if stride:
            lines.append(f"  offset += {'i' if last else f'(i % {extent})'} * {stride};")
        if not last:
            lines.append(f"  i /= {extent};")
    lines += ["  return offset;", "}"]
    return "\n".join(lines)


def _broadcast_dims(out_lead: Sequence[int], lead: Sequence[int], block: int) -> list[tuple[int, int]]:
    """(extent, stride) over the output's batch dims for an operand with leading dims
    `lead` (right-aligned, numpy broadcasting) and `block` elements per batch item."""
    padded = (1,) * (len(out_lead) - len(lead)) + tuple(lead)
    strides = [s * block for s in _row_major_strides(padded)]
    return [(extent, 0 if own == 1 else stride) for extent, own, stride in zip(out_lead, padded, strides)]


def _index_type(op: Operation) -> str:
    largest = max(math.prod(tensor_shape(v.type)) for v in (*op.operands, *op.results))
    return "int" if largest < INT_LIMIT else "long long"


# ---------------------------------------------------------------- instance keys


def _format_value(value) -> str:
    if isinstance(value, ops.EpilogueAttr):
        return f"#op.epilogue<{', '.join(value.describe())}>"
    if isinstance(value, tuple):
        return "[" + ",".join(map(str, value)) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def instance_key(op: Operation) -> str:
    """The op's kernel as canonical text: family, operand and result types (shapes
    included) and every property; ops with equal keys share one kernel."""
    kind = family(op)
    items = [kind]
    items += [f"{name}={value.type}" for name, value in _operands(op)]
    items.append(f"output={op.results[0].type}")
    rank = len(tensor_shape(op.operands[0].type))
    for name in sorted(type(op).get_irdl_definition().properties):
        if name == "operandSegmentSizes":
            continue
        value = op.prop_value(name)
        if name == "axis":
            value = value % rank
        elif name == "axes":
            value = tuple(sorted(a % rank for a in value))
        items.append(f"{name}={_format_value(value)}")
    return " ".join(items)


def kernel_name(op: Operation) -> str:
    """The op's `extern "C"` launcher."""
    digest = hashlib.sha256(instance_key(op).encode()).hexdigest()[:12]
    return f"boltir_{family(op)}_{digest}"


# ------------------------------------------------------------- what is supported


def unsupported_reason(op: Operation) -> str | None:
    """Why the op has no compute kernel, or None."""
    if type(op) not in FAMILIES:
        return f"'{op.name}' has no compute kernel family (supported: {', '.join(sorted(c.name for c in FAMILIES))})"
    elements = element_types(op)
    for name, value in [*_operands(op), ("result", op.results[0])]:
        element = _element(value)
        if element not in elements:
            return f"the {name} has element type {element}; compute kernels take {', '.join(elements)}"
    if math.prod(tensor_shape(op.results[0].type)) == 0:
        return None  # an empty result: a launcher that launches nothing
    for name, value in _operands(op):
        if math.prod(tensor_shape(value.type)) == 0:
            return f"the {name} is empty ({value.type}) but the result is not"
    if isinstance(op, ops.B2bGemmOp | ops.B2bConv2dOp):
        if isinstance(op, ops.B2bGemmOp):
            b0 = tensor_shape(op.b0.type)
            channels = b0[-1] if op.prop_value("layout_b0") == "row" else b0[-2]
        else:
            channels = tensor_shape(op.filter0.type)[0]
        size = channels * ELEMENT_BYTES[_element(op.output)]
        if size > SHARED_LIMIT:
            return f"the intermediate row of {channels} elements ({size} bytes) does not fit the {SHARED_LIMIT} bytes of shared memory"
    return None


def launch_arguments(op: Operation) -> LaunchArguments:
    """The launcher's name and pointer operands (these launchers take no problem sizes)."""
    return LaunchArguments(kernel_name(op), tuple(launch_operands(op)))


def supports(op: Operation) -> bool:
    return unsupported_reason(op) is None


# ---------------------------------------------------------------------- epilogues


def _activation(activation: ops.Activation, x: str) -> str:
    # epilogues.py writes boltir_epilogue.h's functions; the units define the same ones
    # (same names and bodies) in boltir_compute, without CUTLASS.
    return activation_expression(activation, x).replace("boltir::epilogue::", "boltir_compute::")


def epilogue_function(name: str, epilogue: ops.EpilogueAttr) -> str:
    """`float name(float acc, float bias, float residual)`: interp.op.apply_epilogue."""
    lines = [
        f"__device__ __forceinline__ float {name}(float acc, float bias, float residual) {{",
        f"  float x = {f32_literal(epilogue.alpha.value.data)} * acc;",
    ]
    if epilogue.has_bias:
        lines.append(f"  x += {f32_literal(epilogue.beta.value.data)} * bias;")
    if epilogue.first_activation.kind != "none":
        lines.append(f"  x = {_activation(epilogue.first_activation, 'x')};")
    if epilogue.residual_kind != "none":
        lines.append(f"  x = x {'+' if epilogue.residual_kind == 'add' else '*'} residual;")
    if epilogue.second_activation.kind != "none":
        lines.append(f"  x = {_activation(epilogue.second_activation, 'x')};")
    lines += ["  return x;", "}"]
    return "\n".join(lines)


# ------------------------------------------------------------------ the contexts


@dataclass
class RowPlan:
    """How a kernel walks rows of `length` contiguous elements: `mode` "group" (G lanes per
    row, several rows per block), "block" (a block per row) or "stream" (a block per row,
    read twice); `items` vectors of `vector` elements per thread in registers."""

    mode: str
    vector: int
    threads: int
    lanes: int
    items: int = 1

    @property
    def rows_per_block(self) -> int:
        return self.threads // self.lanes


def row_plan(length: int, element_bytes: int) -> RowPlan:
    vector = vector_width(length, element_bytes)
    vectors = length // vector
    items_max = max(1, REGISTER_FLOATS // vector)
    if vectors <= 32 * items_max:
        lanes = min(32, _next_pow2(vectors))
        return RowPlan("group", vector, GROUP_BLOCK, lanes, max(1, _ceil_div(vectors, lanes)))
    if vectors <= MAX_ROW_BLOCK * items_max:
        threads = min(MAX_ROW_BLOCK, max(64, _round_up(_ceil_div(vectors, items_max), 32)))
        return RowPlan("block", vector, threads, threads, _ceil_div(vectors, threads))
    return RowPlan("stream", vector, MAX_ROW_BLOCK, MAX_ROW_BLOCK)


def _row_launch(rows: int, plan: RowPlan) -> dict:
    return {"grid": _ceil_div(rows, plan.rows_per_block), "block": plan.threads}


def _split_axis(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def reduce_context(shape: Sequence[int], axes: Iterable[int], kind: str, element: str) -> dict:
    """A reduction of `shape` over `axes` ("mean", "sum" or "max"), as the reduce
    template takes it (also the global pools')."""
    axes = set(axes)
    strides = _row_major_strides(shape)
    # merge neighbours of one kind (both reduced or both kept); extent-1 dims vanish
    merged: list[list] = []
    for axis, (extent, stride) in enumerate(zip(shape, strides)):
        if extent == 1:
            continue
        reduced = axis in axes
        if merged and merged[-1][2] == reduced:
            merged[-1][0] *= extent
            merged[-1][1] = stride
        else:
            merged.append([extent, stride, reduced])
    kept = [(e, s) for e, s, r in merged if not r]
    reduced = [(e, s) for e, s, r in merged if r]
    count = math.prod(e for e, _ in reduced)
    outputs = math.prod(e for e, _ in kept)
    bytes_ = ELEMENT_BYTES[element]
    context = {"kind": kind, "count": count, "outputs": outputs}
    if not merged or merged[-1][2]:
        # inner: each output's elements are runs of the innermost reduced extent
        vector = vector_width(reduced[-1][0] if reduced else 1, bytes_)
        vectors = count // vector
        if vectors <= 1024:
            lanes, threads = min(32, _next_pow2(_ceil_div(vectors, 4))), GROUP_BLOCK
        else:
            threads = min(MAX_ROW_BLOCK, max(64, _round_up(_ceil_div(vectors, 8), 32)))
            lanes = threads
        context.update(
            mode="inner", vector=vector, lanes=lanes, threads=threads, grid=_ceil_div(outputs, threads // lanes), block=threads,
            output_offset=offset_function("output_offset", kept),
            reduced_offset=offset_function("reduced_offset", reduced),
        )
    else:
        # outer: the innermost extent is kept; threads own vectors of it, and TY of them
        # split the reduced elements
        inner = kept[-1][0]
        vector = vector_width(inner, bytes_)
        tx = min(32, _next_pow2(inner // vector))
        ty = max(1, min(256 // tx, _next_pow2(_ceil_div(count, 8))))
        x_blocks = _ceil_div(inner // vector, tx)
        context.update(
            mode="outer", vector=vector, inner=inner, tx=tx, ty=ty, x_blocks=x_blocks,
            grid=x_blocks * (outputs // inner), block=tx * ty,
            output_offset=offset_function("output_offset", kept[:-1]),
            reduced_offset=offset_function("reduced_offset", reduced),
        )
    return context


def _pool_context(op: ops.Pool2dOp) -> dict:
    layout, kind = op.prop_value("layout"), op.kind.data
    x, y = tensor_shape(op.input.type), tensor_shape(op.output.type)
    if kind.startswith("global"):
        axes = (1, 2) if layout == "NHWC" else (2, 3)
        return {"template": "reduce.cu.j2", **reduce_context(x, axes, "mean" if kind == "global_avg" else "max", _element(op.input))}
    n, h, w, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
    p, q = (y[1], y[2]) if layout == "NHWC" else (y[2], y[3])
    vector = vector_width(c, ELEMENT_BYTES[_element(op.input)]) if layout == "NHWC" else 1
    pads = op.prop_value("pads")
    return {
        "kind": kind, "layout": layout, "n": n, "h": h, "w": w, "c": c, "p": p, "q": q,
        "kernel": op.prop_value("kernel_shape"), "strides": op.prop_value("strides"), "pads": pads,
        "dilations": op.prop_value("dilations") if kind == "max" else (1, 1),
        "include_pad": bool(op.prop_value("count_include_pad")), "vector": vector,
        "threads": 256, "work": n * p * q * c // vector,
    }


def _softmax_context(op: ops.SoftmaxOp) -> dict:
    shape = tensor_shape(op.input.type)
    outer, length, inner = _split_axis(shape, op.prop_value("axis") % len(shape))
    bytes_ = ELEMENT_BYTES[_element(op.input)]
    if inner == 1:
        plan = row_plan(length, bytes_)
        return {"strided": False, "rows": outer, "length": length, "plan": plan, **_row_launch(outer, plan)}
    vector = vector_width(inner, bytes_)
    return {
        "strided": True, "outer": outer, "length": length, "inner": inner, "vector": vector,
        "cached": length * vector <= 64, "threads": 256, "work": outer * inner // vector,
    }


def _layer_norm_context(op: ops.LayerNormOp) -> dict:
    shape = tensor_shape(op.input.type)
    axis = op.prop_value("axis") % len(shape)
    normalized = shape[axis:]
    length = math.prod(normalized)

    def index(value: SSAValue | None, name: str) -> tuple[bool, str]:
        """(full: the operand has one value per row element, else an index function)."""
        if value is None:
            return True, ""
        own = tensor_shape(value.type)
        if math.prod(own) == length:
            return True, ""
        padded = (1,) * (len(normalized) - len(own)) + own
        strides = _row_major_strides(padded)
        dims = [(extent, 0 if e == 1 else s) for extent, e, s in zip(normalized, padded, strides)]
        return False, offset_function(name, dims)

    scale_full, scale_index = index(op.scale, "scale_index")
    bias_full, bias_index = index(op.bias, "bias_index")
    rows, plan = math.prod(shape[:axis]), row_plan(length, ELEMENT_BYTES[_element(op.input)])
    return {
        "rows": rows, "length": length, "plan": plan, **_row_launch(rows, plan),
        "epsilon": f32_literal(op.prop_value("epsilon")), "has_bias": op.bias is not None,
        "scale_full": scale_full, "scale_index": scale_index, "bias_full": bias_full, "bias_index": bias_index,
        "prefetch": plan.mode != "stream" and scale_full and (op.bias is None or bias_full),
    }


def _reduce_context(op: ops.ReduceOp) -> dict:
    shape = tensor_shape(op.input.type)
    axes = [a % len(shape) for a in op.prop_value("axes")]
    return reduce_context(shape, axes, op.kind.data, _element(op.input))


def _dot_vector(extent: int, elements: Sequence[str], contiguous: Sequence[bool]) -> int:
    """The vector width of a dot product along `extent`: legal for every operand that is
    contiguous in it (1 when none is)."""
    if not any(contiguous):
        return 1
    return vector_width(extent, min(ELEMENT_BYTES[e] for e, c in zip(elements, contiguous) if c))


def _gemm_context(op: ops.GemmOp) -> dict:
    a, b, out = tensor_shape(op.a.type), tensor_shape(op.b.type), tensor_shape(op.output.type)
    layout_a, layout_b = op.prop_value("layout_a"), op.prop_value("layout_b")
    m, n, k = out[-2], out[-1], (a[-1] if layout_a == "row" else a[-2])
    lead = out[:-2]
    elements = (_element(op.a), _element(op.b))
    contiguous = (layout_a == "row", layout_b == "col")
    return {
        "batch": math.prod(lead), "m": m, "n": n, "k": k,
        "a_strides": (k, 1) if layout_a == "row" else (1, m),  # (per row of M, per k)
        "b_strides": (1, n) if layout_b == "row" else (k, 1),  # (per column of N, per k)
        "vector": _dot_vector(k, elements, contiguous),
        "a_offset": offset_function("a_offset", _broadcast_dims(lead, a[:-2], m * k)),
        "b_offset": offset_function("b_offset", _broadcast_dims(lead, b[:-2], k * n)),
        "epilogue": epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "threads": 256, "work": math.prod(out),
    }


def _conv_geometry(layout: str, x: Sequence[int], y: Sequence[int]) -> dict:
    n, h, w, c = (x[0], x[1], x[2], x[3]) if layout == "NHWC" else (x[0], x[2], x[3], x[1])
    k, p, q = (y[3], y[1], y[2]) if layout == "NHWC" else (y[1], y[2], y[3])
    return {"layout": layout, "n": n, "h": h, "w": w, "c": c, "k": k, "p": p, "q": q}


def _conv_context(op: ops.Conv2dOp | ops.Conv2dMaxPoolOp | ops.SpaceToDepthConv2dOp) -> dict:
    layout, filter_layout = op.prop_value("layout"), op.prop_value("filter_layout")
    pooled = isinstance(op, ops.Conv2dMaxPoolOp)
    blocks_image = isinstance(op, ops.SpaceToDepthConv2dOp)
    g = _conv_geometry(layout, op.blocked_shape() if blocks_image else tensor_shape(op.input.type), op.conv_shape())
    strides, pads, dilations, groups = op.window()
    f = tensor_shape(op.filter.type)
    r, s = (f[1], f[2]) if filter_layout == "OHWI" else (f[2], f[3])
    cg = g["c"] // groups
    contiguous = (layout == "NHWC", filter_layout == "OHWI")
    return {
        **g, "filter_layout": filter_layout, "r": r, "s": s, "groups": groups, "cg": cg, "kg": g["k"] // groups,
        "strides": strides, "pads": pads, "dilations": dilations,
        "input_c_stride": 1 if layout == "NHWC" else g["h"] * g["w"],
        "filter_c_stride": 1 if filter_layout == "OHWI" else r * s,
        "vector": _dot_vector(cg, (_element(op.input), _element(op.filter)), contiguous),
        "epilogue": epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "pool": op.prop_value("pool") if pooled else 1,
        "image": _image_geometry(op) if blocks_image else None,
        "threads": 256, "work": math.prod(tensor_shape(op.output.type)),
    }


def _image_geometry(op: ops.SpaceToDepthConv2dOp) -> dict:
    """The image an op.space_to_depth_conv2d blocks: sizes (NCHW or NHWC), pads, block."""
    nchw = op.prop_value("image_layout") == "NCHW"
    c, h, w = op.image_dims()
    top, left, _, _ = op.prop_value("image_pads")
    return {"nchw": nchw, "c": c, "h": h, "w": w, "top": top, "left": left, "block": op.prop_value("blocksize")}


def _conv_transpose_context(op: ops.ConvTranspose2dOp) -> dict:
    layout, filter_layout = op.prop_value("layout"), op.prop_value("filter_layout")
    g = _conv_geometry(layout, tensor_shape(op.input.type), tensor_shape(op.output.type))
    strides, pads, dilations, groups = op.window()
    f = tensor_shape(op.filter.type)
    r, s = (f[1], f[2]) if filter_layout == "IHWO" else (f[2], f[3])
    cg, kg = g["c"] // groups, g["k"] // groups
    return {
        **g, "filter_layout": filter_layout, "r": r, "s": s, "groups": groups, "cg": cg, "kg": kg,
        "strides": strides, "pads": pads, "dilations": dilations,
        "input_c_stride": 1 if layout == "NHWC" else g["h"] * g["w"],
        "filter_c_stride": r * s * kg,  # IHWO and IOHW alike: one input channel's filters are contiguous
        "vector": _dot_vector(cg, (_element(op.input),), (layout == "NHWC",)),
        "epilogue": epilogue_function("epilogue", op.epilogue),
        "has_bias": op.bias is not None, "has_residual": op.residual is not None,
        "threads": 256, "work": math.prod(tensor_shape(op.output.type)),
    }


def _b2b_gemm_context(op: ops.B2bGemmOp) -> dict:
    a, b0, b1 = (tensor_shape(v.type) for v in (op.a, op.b0, op.b1))
    out = tensor_shape(op.output.type)
    layout_a, layout_b0, layout_b1 = (op.prop_value(f"layout_{x}") for x in ("a", "b0", "b1"))
    m, n1 = out[-2], out[-1]
    k0 = a[-1] if layout_a == "row" else a[-2]
    n0 = b0[-1] if layout_b0 == "row" else b0[-2]
    lead = out[:-2]
    output = _element(op.output)
    return {
        "batch": math.prod(lead), "m": m, "k0": k0, "n0": n0, "n1": n1,
        "a_strides": (k0, 1) if layout_a == "row" else (1, m),
        "b0_strides": (1, n0) if layout_b0 == "row" else (k0, 1),
        "b1_strides": (1, n1) if layout_b1 == "row" else (n0, 1),
        "vector0": _dot_vector(k0, (_element(op.a), _element(op.b0)), (layout_a == "row", layout_b0 == "col")),
        "vector1": _dot_vector(n0, (output, _element(op.b1)), (True, layout_b1 == "col")),
        "a_offset": offset_function("a_offset", _broadcast_dims(lead, a[:-2], m * k0)),
        "b0_offset": offset_function("b0_offset", _broadcast_dims(lead, b0[:-2], k0 * n0)),
        "b1_offset": offset_function("b1_offset", _broadcast_dims(lead, b1[:-2], n0 * n1)),
        "epilogue0": epilogue_function("epilogue0", op.epilogue0),
        "epilogue1": epilogue_function("epilogue1", op.epilogue1),
        "has_bias0": op.bias0 is not None, "has_bias1": op.bias1 is not None,
        "threads": (threads := min(256, max(32, _round_up(max(n0, n1), 32)))), "grid": math.prod(out[:-1]), "block": threads,
    }


def _b2b_conv_context(op: ops.B2bConv2dOp | ops.DepthwisePointwiseConv2dOp) -> dict:
    """Also an op.depthwise_pointwise_conv2d's: a depthwise first conv (NHWC, OHWI) and a
    residual in the second epilogue."""
    depthwise = isinstance(op, ops.DepthwisePointwiseConv2dOp)
    expanding = depthwise and op.expand is not None
    layout, filter_layout = ("NHWC", "OHWI") if depthwise else (op.prop_value("layout"), op.prop_value("filter_layout"))
    g = _conv_geometry(layout, tensor_shape(op.input.type), tensor_shape(op.output.type))
    f0 = tensor_shape(op.filter0.type)
    k0 = f0[0]
    r, s = (f0[1], f0[2]) if filter_layout == "OHWI" else (f0[2], f0[3])
    output = _element(op.output)
    return {
        **g, "k0": k0, "k1": g["k"], "r": r, "s": s, "filter_layout": filter_layout,
        "strides": op.prop_value("strides"), "pads": op.prop_value("pads"), "dilations": op.prop_value("dilations"),
        "input_c_stride": 1 if layout == "NHWC" else g["h"] * g["w"],
        "filter_c_stride": 1 if filter_layout == "OHWI" else r * s,
        "vector0": _dot_vector(g["c"], (_element(op.input), _element(op.filter0)), (layout == "NHWC", filter_layout == "OHWI")),
        "vector1": _dot_vector(k0, (output, _element(op.filter1)), (True, True)),
        "epilogue0": epilogue_function("epilogue0", op.epilogue0),
        "epilogue1": epilogue_function("epilogue1", op.epilogue1),
        "has_bias0": op.bias0 is not None, "has_bias1": op.bias1 is not None,
        "depthwise": depthwise, "has_residual": depthwise and op.residual is not None,
        "expanding": expanding, "has_expand_bias": expanding and op.expand_bias is not None,
        "expand_epilogue": epilogue_function("expand_epilogue", op.expand_epilogue) if expanding else "",
        "vector_e": _dot_vector(g["c"], (_element(op.input), _element(op.expand)), (True, True)) if expanding else 1,
        "threads": (threads := min(256, max(32, _round_up(max(k0, g["k"]), 32)))), "grid": g["n"] * g["p"] * g["q"], "block": threads,
    }


# ----------------------------------------------------------------- running sums

SCAN_WARPS = 4
"""Rows (warps) per block of the row-wise cumsum kernel."""
ACCUMULATORS = {"i32": "unsigned int", "i64": "unsigned long long"}
"""What integer sums run in: unsigned, so that overflow wraps as numpy's does."""


def _cumsum_context(op: ops.CumSumOp) -> dict:
    shape = tensor_shape(op.input.type)
    outer, length, inner = _split_axis(shape, op.prop_value("axis") % len(shape))
    element = _element(op.input)
    context = {
        "length": length, "exclusive": bool(op.prop_value("exclusive")), "reverse": bool(op.prop_value("reverse")),
        "integer": element in INTEGER_ELEMENTS, "accumulator": ACCUMULATORS.get(element, "float"),
    }
    if inner == 1:
        vector = vector_width(length, ELEMENT_BYTES[element])
        rows = outer
        return {**context, "strided": False, "rows": rows, "vector": vector, "warps": SCAN_WARPS,
                "grid": _ceil_div(rows, SCAN_WARPS), "block": 32 * SCAN_WARPS}
    vector = vector_width(inner, ELEMENT_BYTES[element])
    return {**context, "strided": True, "inner": inner, "vector": vector, "threads": 256, "work": outer * inner // vector}


CONTEXTS = {
    "pool2d": _pool_context,
    "softmax": _softmax_context,
    "layer_norm": _layer_norm_context,
    "reduce": _reduce_context,
    "cumsum": _cumsum_context,
    "gemm_fallback": _gemm_context,
    "conv2d_fallback": _conv_context,
    "conv_transpose2d_fallback": _conv_transpose_context,
    "b2b_gemm_fallback": _b2b_gemm_context,
    "b2b_conv2d_fallback": _b2b_conv_context,
}


# ---------------------------------------------------------------------- emission


def _common(op: Operation, name: str, key: str) -> dict:
    operands = _operands(op)
    out = op.results[0]
    elements = element_types(op)
    types = {n: elements[_element(v)] for n, v in operands}
    types["output"] = elements[_element(out)]
    parameters = [f"const void *{n}" for n, _ in operands] + ["void *output"]
    arguments = [f"static_cast<const {types[n]} *>({n})" for n, _ in operands] + [f"static_cast<{types['output']} *>(output)"]
    kernel_parameters = [f"const {types[n]} *__restrict__ {n}" for n, _ in operands] + [f"{types['output']} *__restrict__ output"]
    return {
        "name": name,
        "key": key,
        "types": types,
        "index_t": _index_type(op),
        "signature": f"{name}({', '.join(parameters)}, cudaStream_t stream)",
        "arguments": ", ".join(arguments),
        "kernel_parameters": ", ".join(kernel_parameters),
        "empty": math.prod(tensor_shape(out.type)) == 0,
        "operand_names": [n for n, _ in operands],
    }


def emit_instance(op: Operation) -> Instance:
    """One op's kernel and launcher (raises BoltError when it has none)."""
    reason = unsupported_reason(op)
    if reason is not None:
        raise BoltError(f"'{op.name}' has no compute kernel: {reason}", format_location(op.location))
    kind = family(op)
    key, name = instance_key(op), kernel_name(op)
    context = _common(op, name, key)
    if context["empty"]:
        template = "instance.j2"  # the launcher alone: nothing to compute
    else:
        context.update(CONTEXTS[kind](op))
        template = context.get("template", f"{kind}.cu.j2")
        if "grid" not in context:  # one thread per unit of work
            context.update(grid=_ceil_div(context["work"], context["threads"]), block=context["threads"])
        if not 0 < context["grid"] < 2**31:
            raise BoltError(f"'{op.name}' needs {context['grid']} thread blocks, more than one launch takes", format_location(op.location))
    source = render("compute/" + template, **context)
    return Instance(name, key, kind, source.strip("\n"))


def compute_ops(module_or_ops: ModuleOp | Iterable[Operation]) -> list[Operation]:
    """The ops to emit: a module's ops of the compute families (in order), or the given ops."""
    if isinstance(module_or_ops, ModuleOp):
        return [op for op in module_or_ops.walk() if type(op) in FAMILIES]
    return list(module_or_ops)


def emit_translation_unit(module_or_ops: ModuleOp | Iterable[Operation]) -> str:
    """One standalone CUDA unit with every distinct instance among the ops, in first-use
    order (a module: all its ops of the compute families, fallbacks included)."""
    instances: dict[str, Instance] = {}
    for op in compute_ops(module_or_ops):
        name = kernel_name(op)
        if name not in instances:
            instances[name] = emit_instance(op)
    return render("compute/unit.cu.j2", instances=list(instances.values()))
