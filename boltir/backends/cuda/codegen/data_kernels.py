"""Templated CUDA kernels for the `op` ops that are not GEMMs or convs: the elementwise
family (`op.elementwise`, and `op.unary`, `op.binary`, `op.select`, `op.cast` through the
same generator) and data movement (`op.layout_transform`, `op.pad`, `op.slice`,
`op.concat`, `op.reshape`, `op.gather`, `op.resize`).

    source = emit_translation_unit(ops)        # one unit, instances deduplicated
    name = kernel_name(op)                     # boltir_pad_1a2b3c4d5e6f: the op's launcher
    pointers = launch_operands(op)             # its SSA values in ABI order
    supports(op), unsupported_reason(op)       # whether (why not) it has a kernel here

One jinja2 template per family lives in `templates/data/` (`common.j2` holds the macros
they share, `boltir_data.h` the device helpers pasted into every unit), in the style of
`emitter.py`. A unit needs the CUDA headers alone (`cuda_runtime.h`, `cuda_fp16.h`,
`cuda_bf16.h`) and compiles with nvcc's sm80 flags (the `boltir.target` sm80 record's, which
also runs on sm_90).

**Instances.** Every shape and attribute is static and baked into the instance: its key
(`instance_key`) is the kernel's parameters as text (family, element type or width, the
shapes after merging axes that move together, the vector width, the body), and ops with
equal keys share one kernel and launcher, `boltir_<family>_<12 hex digits of the key's
SHA-256>`. Data movement copies bits, so its keys name the element width, not the type:
an f16 and a bf16 transpose of one shape share a kernel.

**Launcher ABI.** For every instance `NAME`:

    extern "C" int NAME(const void *in0, ..., const void *inN, void *out, cudaStream_t stream);

the op's operands in order (`launch_operands`: an elementwise op's inputs, a concat's
inputs, gather's data then indices), then its result. Every pointer is a device pointer
to a contiguous row-major tensor of the op's element type (i1 as one byte, 0 or 1); none
may alias the output. The launch is asynchronous on `stream`; nothing is allocated or
synchronized. It returns 0, or 1000 + the `cudaError_t` that `cudaGetLastError()` gives
after the launch. An empty output launches nothing and returns 0.

**Kernels.** One pass over the data, one thread per output element or per vector of
them. Where the innermost extent allows (after merging axes), a thread moves V elements
with one 16-byte access of the widest tensor (8 x f16, 4 x f32), halved until V divides
the extent; the launcher falls back to V = 1 at run time when a pointer is not aligned to
its vector, so any pointer works. The transpose of a layout_transform that changes the
innermost axis goes through 32 x 32 shared-memory tiles.

**Numerics** follow `boltir.interp.op`: elementwise bodies compute f16 and bf16 values in
f32 and round each op's result to its type (what numpy does per op), f32 and f64 in their
own type, without FMA contraction (numpy has none); integers wrap; integer division
truncates, and divides by zero to 0. Resize reads per-axis tables of input positions and
weights computed in Python by the interpreter's own functions, and blends axis by axis as
it does. Gather clamps out-of-range indices (numpy raises).

Element types: elementwise f16, bf16, f32, f64, i1, i8-i64 and ui8-ui64; data movement
any type of 8, 16, 32 or 64 bits (the 8-bit floats included); resize f16, bf16, f32,
f64. Anything else raises a one-line BoltError.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from boltir.backends.cuda.codegen.generator import (
    Instance,
    LaunchArguments,
    header_text,
    render,
)
from boltir.diagnostics import BoltError, format_location
from boltir.dialects import op as ops
from boltir.dialects import resize
from boltir.dialects.elementwise_body import BodyBuilder, as_elementwise
from boltir.dialects.graph import tensor_shape
from boltir.dialects.shapes import slice_bounds
from boltir.dtypes import element_type_name, numpy_dtype

FAMILIES: dict[type, str] = {
    ops.ElementwiseOp: "elementwise",
    ops.UnaryOp: "elementwise",
    ops.BinaryOp: "elementwise",
    ops.SelectOp: "elementwise",
    ops.CastOp: "elementwise",
    ops.LayoutTransformOp: "layout_transform",
    ops.PadOp: "pad",
    ops.SliceOp: "slice",
    ops.ConcatOp: "concat",
    ops.ReshapeOp: "reshape",
    ops.GatherOp: "gather",
    ops.ResizeOp: "resize",
}

VECTOR_BYTES = 16
"""The widest access one thread makes (ld/st.global.v4.b32)."""

INT32_LIMIT = 2**31 - 1


# ------------------------------------------------------------------ element types


@dataclass(frozen=True)
class Element:
    name: str
    storage: str
    """The C++ type in memory."""
    reg: str
    """The C++ type computed in (f16/bf16 values live in f32)."""
    size: int
    """Bytes per element."""


COMPUTED: dict[str, Element] = {
    e.name: e
    for e in (
        Element("f16", "__half", "float", 2),
        Element("bf16", "__nv_bfloat16", "float", 2),
        Element("f32", "float", "float", 4),
        Element("f64", "double", "double", 8),
        Element("i1", "bool", "bool", 1),
        *(Element(f"i{w}", f"int{w}_t", f"int{w}_t", w // 8) for w in (8, 16, 32, 64)),
        *(Element(f"ui{w}", f"uint{w}_t", f"uint{w}_t", w // 8) for w in (8, 16, 32, 64)),
    )
}
"""Element types the elementwise family computes on."""

MOVED_ONLY = {"f8E4M3FN": 1, "f8E4M3FNUZ": 1, "f8E5M2": 1, "f8E5M2FNUZ": 1, "f8E8M0FNU": 1}
"""Types data movement copies (as bytes) but nothing computes on here."""

BIT_STORAGE = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t", 8: "unsigned long long"}
UNSIGNED = {"int8_t": "uint8_t", "int16_t": "uint16_t", "int32_t": "uint32_t", "int64_t": "uint64_t"}
RESIZE_ELEMENTS = ("f16", "bf16", "f32", "f64")


def _fail(op: Operation, message: str):
    raise BoltError(f"'{op.name}' has no CUDA kernel: {message}", format_location(op.location))


def _type_name(value: SSAValue | Attribute) -> str:
    t = value.type.element_type if isinstance(value, SSAValue) else value
    return element_type_name(t)


def _computed(op: Operation, t: SSAValue | Attribute) -> Element:
    name = _type_name(t)
    if name not in COMPUTED:
        _fail(op, f"element type {name} is not computed on here (elementwise kernels take {', '.join(COMPUTED)})")
    return COMPUTED[name]


def _element_size(op: Operation, value: SSAValue) -> int:
    """Bytes per element of a tensor that data movement copies."""
    name = _type_name(value)
    if name in COMPUTED:
        return COMPUTED[name].size
    if name in MOVED_ONLY:
        return MOVED_ONLY[name]
    _fail(op, f"element type {name} has no byte-addressable layout (data movement takes types of 8, 16, 32 or 64 bits)")


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_shape(value.type))


def _strides(shape: Sequence[int]) -> list[int]:
    strides, running = [], 1
    for d in reversed(shape):
        strides.append(running)
        running *= d
    return strides[::-1]


def _index_type(*shapes: Sequence[int]) -> str:
    """32-bit indices where every tensor fits (faster division), else 64-bit."""
    return "int" if max((math.prod(s) for s in shapes), default=0) <= INT32_LIMIT else "long long"


def _vector_width(widest: int, *extents: int) -> int:
    """Elements per thread: 16 bytes of the widest tensor, halved until it divides every
    given extent (a vector never crosses a row, so it has one source row)."""
    v = max(1, VECTOR_BYTES // widest)
    while v > 1 and any(x % v for x in extents):
        v //= 2
    return v


def _coordinates(extents: Sequence[int], linear: str = "e", prefix: str = "c") -> list[str]:
    """C++ lines splitting the row-major index `linear` into coordinates c0, c1, ..."""
    declare = "[[maybe_unused]] const Index"  # a map may skip an axis (stride 0)
    if len(extents) == 1:
        return [f"{declare} {prefix}0 = {linear};"]
    lines = [f"Index {prefix}_rest = {linear};"]
    for d in range(len(extents) - 1, 0, -1):
        lines.append(f"{declare} {prefix}{d} = {prefix}_rest % {extents[d]};")
        lines.append(f"{prefix}_rest /= {extents[d]};")
    lines.append(f"{declare} {prefix}0 = {prefix}_rest;")
    return lines


def _affine(base: int, coefficients: Sequence[int], prefix: str = "c") -> str:
    """`base + c0 * k0 + c1 * k1 ...` as C++ (terms with k = 0 left out)."""
    terms = [str(base)] if base else []
    for d, k in enumerate(coefficients):
        if k:
            terms.append(f"{prefix}{d}" if k == 1 else f"{prefix}{d} * {k}" if k > 0 else f"{prefix}{d} * ({k})")
    return " + ".join(terms) or "0"


def _merge_axes(extents: Sequence[int], coefficients: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """Drops extent-1 axes and merges neighbours that every map walks contiguously
    (k[d] = k[d + 1] * extent[d + 1] for each coefficient list k): fewer divisions per
    element, and a longer innermost extent to vectorize over."""
    kept = [d for d, x in enumerate(extents) if x != 1]
    out_extents: list[int] = []
    out_coefficients: list[list[int]] = [[] for _ in coefficients]
    for d in kept:
        if out_extents and all(k[d] * extents[d] == ks[-1] for k, ks in zip(coefficients, out_coefficients, strict=True)):
            out_extents[-1] *= extents[d]
            for k, ks in zip(coefficients, out_coefficients, strict=True):
                ks[-1] = k[d]
            continue
        out_extents.append(extents[d])
        for k, ks in zip(coefficients, out_coefficients, strict=True):
            ks.append(k[d])
    if not out_extents:
        return [1], [[0] for _ in coefficients]
    return out_extents, out_coefficients


def _aligned(pointers: Iterable[tuple[str, int]]) -> str:
    return " && ".join(f"boltir_data::aligned({p}, {b})" for p, b in pointers) or "true"


# ------------------------------------------------------------------------ plans


@dataclass(frozen=True)
class _Plan:
    family: str
    key: str
    template: str
    context: dict


def family(op: Operation) -> str:
    try:
        return FAMILIES[type(op)]
    except KeyError:
        raise BoltError(
            f"'{op.name}' is not an elementwise or data-movement op (data kernels cover {', '.join(sorted({c.name for c in FAMILIES}))})",
            format_location(op.location),
        ) from None


def launch_operands(op: Operation) -> list[SSAValue]:
    """The op's tensors in launcher order: its operands, then its result."""
    family(op)
    return [*op.operands, op.results[0]]


def _empty_plan(op: Operation, kind: str) -> _Plan:
    count = len(op.operands)
    return _Plan(kind, f"{kind} empty inputs={count}", "empty.cu.j2", {"family": kind, "count": count})


# ------------------------------------------------------------------- elementwise


def _binary_float(name: str) -> Callable[[str, list[str]], str]:
    return lambda reg, x: f"{'__f' if reg == 'float' else '__d'}{name}_rn({x[0]}, {x[1]})"


def _math(f32: str, f64: str) -> Callable[[str, list[str]], str]:
    return lambda reg, x: f"{f32 if reg == 'float' else f64}({', '.join(x)})"


FLOAT_OPS: dict[type, Callable[[str, list[str]], str]] = {
    arith.AddfOp: _binary_float("add"),
    arith.SubfOp: _binary_float("sub"),
    arith.MulfOp: _binary_float("mul"),
    arith.DivfOp: _binary_float("div"),
    math_dialect.SqrtOp: lambda reg, x: f"{'__fsqrt_rn' if reg == 'float' else '__dsqrt_rn'}({x[0]})",
    math_dialect.RsqrtOp: lambda reg, x: (
        f"__fdiv_rn(1.0f, __fsqrt_rn({x[0]}))" if reg == "float" else f"__ddiv_rn(1.0, __dsqrt_rn({x[0]}))"
    ),  # the interpreter's 1 / np.sqrt(x): two roundings, not rsqrtf's approximation
    math_dialect.ExpOp: _math("expf", "exp"),
    math_dialect.TanhOp: _math("tanhf", "tanh"),
    math_dialect.LogOp: _math("logf", "log"),
    math_dialect.ErfOp: _math("erff", "erf"),
    math_dialect.PowFOp: _math("powf", "pow"),
    math_dialect.FloorOp: _math("floorf", "floor"),
    math_dialect.CeilOp: _math("ceilf", "ceil"),
}
"""Float ops whose result is rounded to the result type (f16/bf16) after computing in
the register type."""

EXACT_OPS: dict[type, Callable[[str, list[str]], str]] = {
    arith.MaximumfOp: lambda reg, x: f"boltir_data::maximum({x[0]}, {x[1]})",
    arith.MinimumfOp: lambda reg, x: f"boltir_data::minimum({x[0]}, {x[1]})",
    arith.MaxSIOp: lambda reg, x: f"boltir_data::maximum({x[0]}, {x[1]})",
    arith.MinSIOp: lambda reg, x: f"boltir_data::minimum({x[0]}, {x[1]})",
    arith.NegfOp: lambda reg, x: f"(-{x[0]})",
    math_dialect.AbsFOp: _math("fabsf", "fabs"),
    arith.AddiOp: lambda reg, x: f"boltir_data::wrap_add({x[0]}, {x[1]})",
    arith.SubiOp: lambda reg, x: f"boltir_data::wrap_sub({x[0]}, {x[1]})",
    arith.MuliOp: lambda reg, x: f"boltir_data::wrap_mul({x[0]}, {x[1]})",
    arith.DivSIOp: lambda reg, x: f"boltir_data::div_trunc({x[0]}, {x[1]})",
    arith.AndIOp: lambda reg, x: f"({x[0]} & {x[1]})",
    arith.OrIOp: lambda reg, x: f"({x[0]} | {x[1]})",
    arith.XOrIOp: lambda reg, x: f"({x[0]} ^ {x[1]})",
    arith.SelectOp: lambda reg, x: f"({x[0]} ? {x[1]} : {x[2]})",
    math_dialect.IPowIOp: lambda reg, x: f"boltir_data::ipow({x[0]}, {x[1]})",
}
"""Ops whose result needs no rounding (a choice between operands, or integer math)."""

NOT_ON_BOOLEANS = (arith.SubiOp, arith.DivSIOp, math_dialect.IPowIOp)
"""numpy defines no boolean subtraction, division or power."""

CMPF = {
    0: "false",
    1: "({a} == {b})",  # oeq
    2: "({a} > {b})",  # ogt
    3: "({a} >= {b})",  # oge
    4: "({a} < {b})",  # olt
    5: "({a} <= {b})",  # ole
    6: "({a} < {b} || {a} > {b})",  # one
    7: "({a} == {a} && {b} == {b})",  # ord
    8: "!({a} < {b} || {a} > {b})",  # ueq
    9: "!({a} <= {b})",  # ugt
    10: "!({a} < {b})",  # uge
    11: "!({a} >= {b})",  # ult
    12: "!({a} > {b})",  # ule
    13: "({a} != {b})",  # une
    14: "({a} != {a} || {b} != {b})",  # uno
    15: "true",
}
"""arith.cmpf by predicate: C++'s comparisons are the ordered ones (false on NaN) and !=
the unordered one, so each predicate is one of them or a negation."""
CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}


def _float_literal(value: float, reg: str) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    if reg == "float":
        text = str(np.float32(value))  # the shortest text that reads back as this f32
        text = text if ("e" in text or "." in text) else text + ".0"
        return f"({text}f)" if text.startswith("-") else f"{text}f"
    text = repr(float(value))
    text = text if ("e" in text or "." in text) else text + ".0"
    return f"({text})" if text.startswith("-") else text


class _BodyEmitter:
    """C++ for a scalar body: one `const T vN = expression;` per op."""

    def __init__(self, op: Operation, block: Block):
        self.op, self.block = op, block
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []

    def emit(self) -> tuple[list[str], list[str], str, str]:
        """(parameters, statements, result expression, result register type)."""
        params = []
        for i, arg in enumerate(self.block.args):
            self.names[arg] = f"a{i}"
            params.append(f"{_computed(self.op, arg.type).reg} a{i}")
        for n, body_op in enumerate(self.block.ops):
            if isinstance(body_op, ops.YieldOp):
                result = body_op.operands[0]
                return params, self.lines, self.names[result], _computed(self.op, result.type).reg
            if len(body_op.results) != 1:
                _fail(self.op, f"the body op {body_op.name} must have one result")
            result_type = body_op.results[0].type
            element = _computed(self.op, result_type)
            self.lines.append(f"const {element.reg} v{n} = {self.expression(body_op, element)};")
            self.names[body_op.results[0]] = f"v{n}"
        _fail(self.op, "the body does not end in op.yield")

    def expression(self, body_op: Operation, element: Element) -> str:
        x = [self.names[o] for o in body_op.operands]
        operand_elements = [_computed(self.op, o.type) for o in body_op.operands]
        if isinstance(body_op, arith.ConstantOp):
            return self.constant(body_op.value, body_op.results[0].type, element)
        if type(body_op) in FLOAT_OPS:
            return self.rounded(FLOAT_OPS[type(body_op)](element.reg, x), element)
        if type(body_op) in EXACT_OPS:
            if isinstance(body_op, NOT_ON_BOOLEANS) and element.name == "i1":
                _fail(self.op, f"{body_op.name} on i1: numpy defines no boolean subtraction, division or power")
            return EXACT_OPS[type(body_op)](element.reg, x)
        if isinstance(body_op, arith.CmpfOp):
            return CMPF[body_op.predicate.value.data].format(a=x[0], b=x[1])
        if isinstance(body_op, arith.CmpiOp):
            predicate = body_op.predicate.value.data
            a, b = x
            unsigned = UNSIGNED.get(operand_elements[0].reg)
            if predicate >= 6 and unsigned:  # ult, ule, ugt, uge: the same bits read unsigned
                a, b = f"{unsigned}({a})", f"{unsigned}({b})"
            return f"({a} {CMPI[predicate]} {b})"
        return self.conversion(body_op, x[0] if x else "", operand_elements[0] if operand_elements else None, element)

    def conversion(self, body_op: Operation, x: str, source: Element | None, target: Element) -> str:
        # numpy's astype: value conversions (ints wrap, floats truncate toward zero).
        if isinstance(body_op, arith.ExtFOp):  # f16/bf16 already live in f32: exact
            return f"double({x})" if target.reg == "double" else x
        if isinstance(body_op, arith.TruncFOp | arith.SIToFPOp):
            if target.name in ("f16", "bf16"):
                # ints round once, from their exact f64 value (as ml_dtypes and numpy do)
                wide = f"double({x})" if isinstance(body_op, arith.SIToFPOp) else x
                return f"boltir_data::round_{target.name}({wide})"
            return f"{target.reg}({x})"
        if isinstance(body_op, arith.FPToSIOp):
            if target.name == "i1":
                return f"({'truncf' if source.reg == 'float' else 'trunc'}({x}) != 0)"
            return f"{target.reg}((long long)({x}))"  # through 64 bits: narrow targets wrap, as numpy's x86 casts do
        if isinstance(body_op, arith.ExtSIOp | arith.TruncIOp):
            return f"({x} != 0)" if target.name == "i1" else f"{target.reg}({x})"
        supported = sorted(
            {t.name for t in (*FLOAT_OPS, *EXACT_OPS)}
            | {"arith.constant", "arith.cmpf", "arith.cmpi", "arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi",
               "arith.extsi", "arith.trunci"}
        )
        _fail(self.op, f"the body op {body_op.name} has no CUDA expression (supported: {', '.join(supported)})")

    def constant(self, value: Attribute, result_type: Attribute, element: Element) -> str:
        if not isinstance(value, FloatAttr | IntegerAttr):
            _fail(self.op, f"arith.constant of {value} in the body: only scalar constants are supported")
        with np.errstate(all="ignore"):  # the interpreter's np.asarray(value, dtype=result type)
            scalar = np.asarray(value.value.data).astype(numpy_dtype(result_type))
        if element.name == "i1":
            return "true" if bool(scalar) else "false"
        if element.reg in ("float", "double"):
            return _float_literal(float(scalar), element.reg)
        number = int(scalar)
        if number == -(2**63):
            return "int64_t(-9223372036854775807LL - 1)"
        return f"{element.reg}({number}{'ULL' if element.reg.startswith('u') else 'LL'})"

    @staticmethod
    def rounded(expression: str, element: Element) -> str:
        if element.name in ("f16", "bf16"):
            return f"boltir_data::round_{element.name}({expression})"
        return expression


def _integer_clip_block(op: ops.UnaryOp) -> Block:
    """op.unary clip on integers (which fuse-elementwise leaves alone), as the interpreter
    clips them: bounds ceil(low) and floor(high), clamped to the type's range."""
    element_type = op.input.type.element_type
    info = np.iinfo(numpy_dtype(element_type))
    low, high = op.prop_value("args")
    low = min(max(math.ceil(low), info.min), info.max) if math.isfinite(low) else info.min
    high = min(max(math.floor(high), info.min), info.max) if math.isfinite(high) else info.max
    block = Block(arg_types=[element_type])
    b = BodyBuilder(block)
    value = b.add(arith.MaxSIOp(block.args[0], b.const(low, element_type)))
    block.add_op(ops.YieldOp(b.add(arith.MinSIOp(value, b.const(high, element_type)))))
    return block


def _integer_pow_block(op: ops.BinaryOp) -> Block:
    element_type = op.lhs.type.element_type
    block = Block(arg_types=[element_type, element_type])
    block.add_op(power := math_dialect.IPowIOp(block.args[0], block.args[1]))
    block.add_op(ops.YieldOp(power.results[0]))
    return block


def _body_block(op: Operation) -> tuple[Block, Callable[[], None]]:
    """The scalar body that computes the op, and how to dispose of what was built for it.
    Standalone ops get fuse-elementwise's own body, so one generator serves both."""
    if isinstance(op, ops.ElementwiseOp):
        return op.body.block, lambda: None
    for value in (*op.operands, op.results[0]):
        _computed(op, value)
    integer = _type_name(op.operands[0]) not in ("f16", "bf16", "f32", "f64")
    if integer and isinstance(op, ops.UnaryOp) and op.fn.data == "clip":
        if _type_name(op.input) == "i1":
            _fail(op, "clip on i1: numpy has no integer range for booleans")
        return _integer_clip_block(op), lambda: None
    if integer and isinstance(op, ops.BinaryOp) and op.fn.data == "pow":
        return _integer_pow_block(op), lambda: None

    try:
        built = as_elementwise(op)
    except NotImplementedError as error:
        _fail(op, f"no scalar form: {error}")
    return built.body.block, built.erase  # erase: the built op uses op's operands


def _broadcast(out: Sequence[int], inputs: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """The output's axes, merged where every input is either full or broadcast along
    both, and each input's element strides over them (0 where it broadcasts)."""
    rank = len(out)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in inputs]
    groups: list[tuple[int, tuple[bool, ...]]] = []
    for d in range(rank):
        if out[d] == 1:
            continue
        full = tuple(p[d] != 1 for p in padded)
        if groups and groups[-1][1] == full:
            groups[-1] = (groups[-1][0] * out[d], full)
        else:
            groups.append((out[d], full))
    if not groups:
        return [1], [[0] for _ in inputs]
    strides: list[list[int]] = []
    for i in range(len(inputs)):
        running, own = 1, []
        for extent, full in reversed(groups):
            own.append(running if full[i] else 0)
            running *= extent if full[i] else 1
        strides.append(own[::-1])
    return [g[0] for g in groups], strides


def _elementwise_plan(op: Operation) -> _Plan:
    out_element = _computed(op, op.results[0])
    in_elements = [_computed(op, v) for v in op.operands]
    block, dispose = _body_block(op)
    try:
        params, lines, result, result_reg = _BodyEmitter(op, block).emit()
    finally:
        dispose()
    out_shape = _shape(op.results[0])
    count = math.prod(out_shape)
    if count == 0:
        return _empty_plan(op, "elementwise")
    extents, strides = _broadcast(out_shape, [_shape(v) for v in op.operands])
    contiguous = _strides(extents)
    vector_inputs = [s[-1] == 1 for s in strides]
    widest = max([out_element.size] + [e.size for e, v in zip(in_elements, vector_inputs) if v])
    vector = _vector_width(widest, extents[-1])
    needs_coordinates = False
    inputs = []
    for i, (element, own, is_vector) in enumerate(zip(in_elements, strides, vector_inputs, strict=True)):
        if own == contiguous:
            offset, describe = "e", "the output's shape"
        elif not any(own):
            offset, describe = "0", "one element, broadcast"
        else:
            offset, describe = _affine(0, own), f"broadcast, strides [{', '.join(map(str, own))}]"
            needs_coordinates = True
        inputs.append({
            "type": element.name, "storage": element.storage, "reg": element.reg, "vector": is_vector,
            "offset": offset, "describe": describe,
        })
    index_type = _index_type(out_shape, *(_shape(v) for v in op.operands))
    aligned = _aligned(
        [(f"in{i}", vector * e.size) for i, (e, v) in enumerate(zip(in_elements, vector_inputs)) if v]
        + [("out", vector * out_element.size)]
    )
    body_text = " ".join([f"({', '.join(params)})", *lines, f"return {result};"])
    key = (
        f"elementwise out={out_element.name}[{'x'.join(map(str, extents))}] "
        + " ".join(f"in{i}={e.name}[{','.join(map(str, s))}]" for i, (e, s) in enumerate(zip(in_elements, strides)))
        + f" vector={vector} index={index_type} body={body_text}"
    )
    return _Plan("elementwise", key, "elementwise.cu.j2", {
        "source_op": op.name + (f" {op.fn.data}" if isinstance(op, ops.UnaryOp | ops.BinaryOp) else ""),
        "out": {"type": out_element.name, "storage": out_element.storage},
        "inputs": inputs,
        "extents": extents,
        "count": count,
        "vector": vector,
        "index_type": index_type,
        "coordinates": _coordinates(extents) if needs_coordinates else [],
        "body_params": params,
        "body_lines": lines,
        "body_result": result,
        "result_reg": result_reg,
        "aligned": aligned,
        "kernel_arguments": ", ".join(
            [f"static_cast<const {e.storage} *>(in{i})" for i, e in enumerate(in_elements)]
            + [f"static_cast<{out_element.storage} *>(out)"]
        ),
    })


# ----------------------------------------------------------------- data movement


def _copy_context(op: Operation, size: int, extents: list[int], coefficients: list[int], base: int, *shapes) -> dict:
    """A strided copy out[e] = in[base + sum(c_d * k_d)] over the output's (merged) axes."""
    extents, (coefficients,) = _merge_axes(extents, [coefficients])
    # a vector needs V consecutive source elements, each vector's first one aligned to V
    vector = _vector_width(size, extents[-1], base, *coefficients[:-1]) if coefficients[-1] == 1 else 1
    contiguous = coefficients == _strides(extents) and base == 0
    return {
        "storage": BIT_STORAGE[size],
        "bits": 8 * size,
        "count": math.prod(extents),
        "extents": extents,
        "coefficients": coefficients,
        "base": base,
        "vector": vector,
        "index_type": _index_type(*shapes),
        "coordinates": [] if contiguous else _coordinates(extents),
        "source": "e" if contiguous else _affine(base, coefficients),
        "aligned": _aligned([("in0", vector * size), ("out", vector * size)]),
    }


def _copy_key(kind: str, c: dict, extra: str = "") -> str:
    return (
        f"{kind} bits={c['bits']} extents=[{','.join(map(str, c['extents']))}] "
        f"coefficients=[{','.join(map(str, c['coefficients']))}] base={c['base']}{extra} vector={c['vector']} index={c['index_type']}"
    )


def _reshape_plan(op: ops.ReshapeOp) -> _Plan:
    size = _element_size(op, op.input)
    count = math.prod(_shape(op.output))
    if count == 0:
        return _empty_plan(op, "reshape")
    c = _copy_context(op, size, [count], [1], 0, _shape(op.input))
    return _Plan("reshape", _copy_key("reshape", c), "reshape.cu.j2", c)


def _slice_plan(op: ops.SliceOp) -> _Plan:
    size = _element_size(op, op.input)
    x, y = _shape(op.input), _shape(op.output)
    if math.prod(y) == 0:
        return _empty_plan(op, "slice")
    begins, steps = [0] * len(x), [1] * len(x)
    for start, end, axis, step in zip(*(op.prop_value(n) for n in ("starts", "ends", "axes", "steps")), strict=True):
        axis %= len(x)
        begins[axis], _, steps[axis] = slice_bounds(start, end, step, x[axis])
    strides = _strides(x)
    base = sum(b * s for b, s in zip(begins, strides))
    c = _copy_context(op, size, list(y), [k * s for k, s in zip(steps, strides)], base, x)
    return _Plan("slice", _copy_key("slice", c), "slice.cu.j2", c)


def _layout_transform_plan(op: ops.LayoutTransformOp) -> _Plan:
    size = _element_size(op, op.input)
    x, perm = _shape(op.input), list(op.prop_value("perm"))
    if math.prod(x) == 0:
        return _empty_plan(op, "layout_transform")
    # Merge input axes that stay adjacent and in order in the output (extent-1 axes go).
    kept = [d for d in range(len(x)) if x[d] != 1]
    order = [kept.index(p) for p in perm if x[p] != 1]  # kept input axes, in output order
    groups: list[list[int]] = []
    for a in order:
        if groups and groups[-1][-1] + 1 == a:
            groups[-1].append(a)
        else:
            groups.append([a])
    by_input = sorted(range(len(groups)), key=lambda g: groups[g][0])
    shape = [math.prod(x[kept[a]] for a in groups[g]) for g in by_input]  # merged input axes
    merged_perm = [by_input.index(g) for g in range(len(groups))]  # output axis k = input axis merged_perm[k]
    in_strides = _strides(shape)
    out_extents = [shape[p] for p in merged_perm]
    common = {"shape": shape, "perm": merged_perm, "bits": 8 * size, "storage": BIT_STORAGE[size]}
    if len(shape) <= 1 or merged_perm[-1] == len(shape) - 1:
        c = _copy_context(op, size, out_extents, [in_strides[p] for p in merged_perm], 0, x)
        mode = "copy" if len(shape) <= 1 else "rows"
        key = (
            f"layout_transform bits={8 * size} shape=[{','.join(map(str, shape))}] perm=[{','.join(map(str, merged_perm))}] "
            f"{mode} vector={c['vector']} index={c['index_type']}"
        )
        return _Plan("layout_transform", key, "layout_transform.cu.j2", {**c, **common, "mode": mode})
    a, b = len(shape) - 1, merged_perm[-1]  # the input's innermost axis, the output's innermost (as input axes)
    out_strides = _strides(out_extents)
    out_stride_of = {p: out_strides[k] for k, p in enumerate(merged_perm)}
    others = [p for p in merged_perm if p not in (a, b)]  # batch axes, in output order
    index_type = _index_type(x)
    context = {
        **common,
        "mode": "tiled",
        "count": math.prod(x),
        "index_type": index_type,
        "extent_a": shape[a],
        "extent_b": shape[b],
        "tiles_a": -(-shape[a] // 32),
        "tiles_b": -(-shape[b] // 32),
        "batch": math.prod(shape[p] for p in others),
        "batch_coordinates": _coordinates([shape[p] for p in others], "z", "z") if others else [],
        "in_base": _affine(0, [in_strides[p] for p in others], "z") if others else "0",
        "out_base": _affine(0, [out_stride_of[p] for p in others], "z") if others else "0",
        "in_stride_b": in_strides[b],
        "out_stride_a": out_stride_of[a],
        "vector": 1,
        "aligned": "true",
    }
    key = f"layout_transform bits={8 * size} shape=[{','.join(map(str, shape))}] perm=[{','.join(map(str, merged_perm))}] tiled index={index_type}"
    return _Plan("layout_transform", key, "layout_transform.cu.j2", context)


def _pad_plan(op: ops.PadOp) -> _Plan:
    size = _element_size(op, op.input)
    x, y = _shape(op.input), _shape(op.output)
    mode, pads = op.prop_value("mode"), list(op.prop_value("pads"))
    if math.prod(y) == 0:
        return _empty_plan(op, "pad")
    rank = len(x)
    # As the interpreter: negative pads crop first, then the positive ones pad.
    axes = []
    for d in range(rank):
        begin, end = pads[d], pads[d + rank]
        crop = max(0, -begin)
        length = max(0, x[d] - crop - max(0, -end))
        if length == 0 and mode != "constant":
            _fail(op, f"axis {d} is cropped to nothing (pads {begin} and {end} of {x[d]}): {mode} padding has nothing to repeat")
        axes.append((max(0, begin), crop, length, y[d]))
    # Unpadded, uncropped axes next to each other merge; they map one to one.
    merged: list[tuple[int, int, int, int]] = []
    in_extents: list[int] = []
    for (low, crop, length, out), extent in zip(axes, x):
        plain = low == 0 and crop == 0 and length == out == extent
        if plain and merged and merged[-1][0] == 0 and merged[-1][1] == 0 and merged[-1][2] == merged[-1][3] == in_extents[-1]:
            merged[-1] = (0, 0, merged[-1][2] * out, merged[-1][3] * out)
            in_extents[-1] *= extent
        else:
            merged.append((low, crop, length, out))
            in_extents.append(extent)
    in_strides = _strides(in_extents)
    extents = [m[3] for m in merged]
    mapping = []
    for d, (low, crop, length, out) in enumerate(merged):
        if low == 0 and length == out:  # no padding on this axis: a (cropped) one-to-one map
            mapping.append(f"const Index i{d} = c{d}{f' + {crop}' if crop else ''};")
            continue
        mapping.append(f"Index i{d} = c{d} - {low};")
        if mode == "constant":
            mapping.append(f"inside = inside && i{d} >= 0 && i{d} < {length};")
        elif mode == "edge":
            mapping.append(f"i{d} = i{d} < 0 ? 0 : (i{d} >= {length} ? {length - 1} : i{d});")
        elif mode == "wrap":
            mapping.append(f"i{d} = ((i{d} % {length}) + {length}) % {length};")
        elif length == 1:  # reflect of one element
            mapping.append(f"i{d} = 0;")
        else:  # reflect: period 2 (n - 1), the second half mirrored
            period = 2 * (length - 1)
            mapping.append(f"i{d} = ((i{d} % {period}) + {period}) % {period};")
            mapping.append(f"i{d} = i{d} >= {length} ? {period} - i{d} : i{d};")
        if crop:
            mapping.append(f"i{d} += {crop};")
    low, crop, length, out = merged[-1]
    plain_inner = low == 0 and crop == 0 and length == out == in_extents[-1]
    vector = _vector_width(size, extents[-1]) if plain_inner else 1
    with np.errstate(all="ignore"):
        bits = int(np.asarray(op.prop_value("value")).astype(numpy_dtype(op.input.type.element_type)).reshape(1).view(f"u{size}")[0])
    value_literal = f"{bits}{'ULL' if size == 8 else 'u'}"
    index_type = _index_type(x, y)
    context = {
        "mode": mode, "bits": 8 * size, "storage": BIT_STORAGE[size], "in_shape": x, "out_shape": y,
        "value_bits": bits, "value_literal": value_literal, "count": math.prod(y), "vector": vector,
        "index_type": index_type, "coordinates": _coordinates(extents), "mapping": mapping,
        "source": _affine(0, in_strides, "i"),
        "aligned": _aligned([("in0", vector * size), ("out", vector * size)]),
    }
    described = ",".join(f"{lo}/{cr}/{n}/{o}" for lo, cr, n, o in merged)
    key = (
        f"pad bits={8 * size} mode={mode} axes=[{described}] (low/crop/length/out)"
        + (f" value=0x{bits:x}" if mode == "constant" else "")
        + f" vector={vector} index={index_type}"
    )
    return _Plan("pad", key, "pad.cu.j2", context)


def _concat_plan(op: ops.ConcatOp) -> _Plan:
    size = _element_size(op, op.output)
    y = _shape(op.output)
    if math.prod(y) == 0:
        return _empty_plan(op, "concat")
    axis = op.prop_value("axis") % len(y)
    outer, inner = math.prod(y[:axis]), math.prod(y[axis + 1 :])
    pieces, start = [], 0
    for i, value in enumerate(op.inputs):
        columns = _shape(value)[axis] * inner
        if columns:  # an empty input contributes nothing (its pointer is not read)
            pieces.append({"input": i, "start": start, "end": start + columns, "columns": columns})
        start += columns
    vector = _vector_width(size, *(p["columns"] for p in pieces))
    index_type = _index_type(y)
    context = {
        "bits": 8 * size, "storage": BIT_STORAGE[size], "inputs": len(op.inputs), "pieces": pieces, "outer": outer,
        "columns": start, "count": math.prod(y), "vector": vector, "index_type": index_type,
        "aligned": _aligned([(f"in{p['input']}", vector * size) for p in pieces] + [("out", vector * size)]),
        "kernel_arguments": ", ".join([f"static_cast<const S *>(in{i})" for i in range(len(op.inputs))] + ["static_cast<S *>(out)"]),
    }
    key = (
        f"concat bits={8 * size} inputs={len(op.inputs)} outer={outer} "
        f"columns=[{','.join(str(_shape(v)[axis] * inner) for v in op.inputs)}] vector={vector} index={index_type}"
    )
    return _Plan("concat", key, "concat.cu.j2", context)


def _gather_plan(op: ops.GatherOp) -> _Plan:
    size = _element_size(op, op.data)
    x, y = _shape(op.data), _shape(op.output)
    if math.prod(y) == 0:
        return _empty_plan(op, "gather")
    axis = op.prop_value("axis") % len(x)
    outer, extent, inner = math.prod(x[:axis]), x[axis], math.prod(x[axis + 1 :])
    positions = math.prod(_shape(op.indices))
    index_element = _type_name(op.indices)
    vector = _vector_width(size, inner)
    index_type = _index_type(x, y)
    context = {
        "bits": 8 * size, "storage": BIT_STORAGE[size], "index_element": index_element,
        "index_storage": "int32_t" if index_element == "i32" else "int64_t", "outer": outer, "extent": extent,
        "inner": inner, "positions": positions, "count": math.prod(y), "vector": vector, "index_type": index_type,
        "aligned": _aligned([("in0", vector * size), ("out", vector * size)]),
    }
    key = (
        f"gather bits={8 * size} indices={index_element} outer={outer} extent={extent} positions={positions} "
        f"inner={inner} vector={vector} index={index_type}"
    )
    return _Plan("gather", key, "gather.cu.j2", context)


def _resize_tables(op: ops.ResizeOp, reg: str) -> list[dict]:
    """Per resized axis, what `graph.resize` computes (`boltir.dialects.resize`) for it: the input positions
    each output position reads, their weights, and (tf_crop_and_resize) whether it lies
    outside the input, taken from the interpreter's own functions."""
    x, y = _shape(op.input), _shape(op.output)
    rank = len(x)
    mode, coordinate_mode = op.prop_value("mode"), op.prop_value("coordinate_transformation_mode")
    roi = op.prop_value("roi") or None
    weight_dtype = np.float32 if reg == "float" else np.float64
    tables = []
    for axis, (in_len, out_len, scale) in enumerate(zip(x, y, op.prop_value("scales"), strict=True)):
        if in_len == out_len and scale == 1.0 and coordinate_mode != "tf_crop_and_resize":
            continue  # the interpreter skips it too
        axis_roi = (roi[axis], roi[axis + rank]) if roi else (0.0, 1.0)
        coords = resize.source_coordinates(out_len, in_len, scale, coordinate_mode, axis_roi)
        if mode == "nearest":
            index, weight = resize.nearest_indices(coords, op.prop_value("nearest_mode"), in_len)[:, None], None
        else:
            index, weight = resize.interpolation_taps(
                coords, in_len, mode, op.prop_value("cubic_coeff_a"), bool(op.prop_value("exclude_outside"))
            )
            weight = weight.astype(weight_dtype)
        outside = ((coords < 0) | (coords > in_len - 1)) if coordinate_mode == "tf_crop_and_resize" else None
        tables.append({
            "axis": axis,
            "taps": index.shape[1],
            "index": [int(i) for i in index.reshape(-1)],
            "weight": [_float_literal(float(w), reg) for w in weight.reshape(-1)] if weight is not None else [],
            "outside": [int(o) for o in outside] if outside is not None and outside.any() else [],
        })
    return tables


def _resize_plan(op: ops.ResizeOp) -> _Plan:
    name = _type_name(op.input)
    if name not in RESIZE_ELEMENTS:
        _fail(op, f"resize takes {', '.join(RESIZE_ELEMENTS)}, got {name}")
    element = COMPUTED[name]
    x, y = _shape(op.input), _shape(op.output)
    if math.prod(y) == 0:
        return _empty_plan(op, "resize")
    tables = _resize_tables(op, element.reg)
    resized = {t["axis"]: (k, t) for k, t in enumerate(tables)}
    rank = len(x)
    vector = 1 if (rank - 1) in resized else _vector_width(element.size, y[-1])
    in_strides = _strides(x)
    base = _affine(0, [0 if d in resized else in_strides[d] for d in range(rank)])
    mode = op.prop_value("mode")
    body: list[str] = [f"const Index base = {base};"]
    outside = [f"kOutside{k}[c{t['axis']}]" for k, t in enumerate(tables) if t["outside"]]
    if outside:
        extrapolation = _float_literal(float(np.float32(op.prop_value("extrapolation_value"))), element.reg)
        body += [
            f"if ({' | '.join(outside)}) {{  // tf_crop_and_resize outside the input",
            f"  boltir_data::store<V>(out, e, boltir_data::splat<V>(boltir_data::from_reg<S>(R({extrapolation}))));",
            "  return;",
            "}",
        ]
    if mode == "nearest" or not tables:
        offset = " + ".join(["base"] + [f"Index(kIndex{k}[c{t['axis']}]) * {in_strides[t['axis']]}" for k, t in enumerate(tables)])
        body.append(f"boltir_data::store<V>(out, e, boltir_data::load<V>(in, {offset}));  // a copy: no arithmetic")
    else:
        # acc_k blends axes 0..k of the resized axes, innermost loop first: the
        # interpreter's axis-by-axis order, each tap added as sum = sum + value * weight.
        def level(k: int, offset: str, indent: str) -> list[str]:
            if k < 0:
                return [
                    f"{indent}const boltir_data::Vec<S, V> p = boltir_data::load<V>(in, {offset});",
                ]
            t = tables[k]
            axis, taps = t["axis"], t["taps"]
            lines = [
                f"{indent}R acc{k}[V] = {{}};",
                "#pragma unroll",
                f"{indent}for (int t{k} = 0; t{k} < {taps}; ++t{k}) {{",
                f"{indent}  const Index o{k} = {offset} + Index(kIndex{k}[c{axis} * {taps} + t{k}]) * {in_strides[axis]};",
                f"{indent}  const R w{k} = kWeight{k}[c{axis} * {taps} + t{k}];",
            ]
            lines += level(k - 1, f"o{k}", indent + "  ")
            inner_value = "boltir_data::to_reg(p.v[j])" if k == 0 else f"acc{k - 1}[j]"
            lines += [
                "#pragma unroll",
                f"{indent}  for (int j = 0; j < V; ++j) {{",
                f"{indent}    acc{k}[j] = boltir_data::add_rn(acc{k}[j], boltir_data::mul_rn({inner_value}, w{k}));",
                f"{indent}  }}",
                f"{indent}}}",
            ]
            return lines

        last = len(tables) - 1
        body += level(last, "base", "")
        body += [
            "boltir_data::Vec<S, V> y;",
            "#pragma unroll",
            "for (int j = 0; j < V; ++j) {",
            f"  y.v[j] = boltir_data::from_reg<S>(acc{last}[j]);",
            "}",
            "boltir_data::store<V>(out, e, y);",
        ]
    index_type = _index_type(x, y)
    properties = [
        f"{p}={op.prop_value(p)}"
        for p in ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "roi",
                  "extrapolation_value", "scales")
    ]
    key = (
        f"resize {name} in=[{','.join(map(str, x))}] out=[{','.join(map(str, y))}] {' '.join(properties)} "
        f"vector={vector} index={index_type}"
    )
    context = {
        "element": name, "storage": element.storage, "reg": element.reg, "in_shape": x, "out_shape": y, "mode": mode,
        "coordinate_mode": op.prop_value("coordinate_transformation_mode"), "axes": tables, "count": math.prod(y),
        "vector": vector, "index_type": index_type, "coordinates": _coordinates(y) if y else [], "body": body,
        "aligned": _aligned([("in0", vector * element.size), ("out", vector * element.size)]),
    }
    return _Plan("resize", key, "resize.cu.j2", context)


PLANS: dict[str, Callable[[Operation], _Plan]] = {
    "elementwise": _elementwise_plan,
    "layout_transform": _layout_transform_plan,
    "pad": _pad_plan,
    "slice": _slice_plan,
    "concat": _concat_plan,
    "reshape": _reshape_plan,
    "gather": _gather_plan,
    "resize": _resize_plan,
}


def _plan(op: Operation) -> _Plan:
    return PLANS[family(op)](op)


# --------------------------------------------------------------------- public API


def instance_key(op: Operation) -> str:
    """The kernel's parameters as canonical text: ops with equal keys share one kernel."""
    return _plan(op).key


def _name_for(plan: _Plan) -> str:
    return f"boltir_{plan.family}_{hashlib.sha256(plan.key.encode()).hexdigest()[:12]}"


def kernel_name(op: Operation) -> str:
    """The name of the op's `extern "C"` launcher."""
    return _name_for(_plan(op))


def unsupported_reason(op: Operation) -> str | None:
    """Why `op` has no kernel here, as a sentence; None when it has one."""
    try:
        _plan(op)
    except BoltError as error:
        return error.message
    return None


def is_fallback(op: Operation) -> bool:
    """Data kernels are never stand-ins: each is the kernel for its op."""
    return False


def launch_arguments(op: Operation) -> LaunchArguments:
    """The launcher's name and pointer operands (these launchers take no problem sizes)."""
    return LaunchArguments(kernel_name(op), tuple(launch_operands(op)))


def supports(op: Operation) -> bool:
    return unsupported_reason(op) is None


def emit_instance(op: Operation) -> Instance:
    """One op's kernel and launcher (raises BoltError when it has none)."""
    plan = _plan(op)
    return _render(plan, _name_for(plan))


def _render(plan: _Plan, name: str) -> Instance:
    source = render("data/" + plan.template, name=name, key=plan.key, **plan.context)
    return Instance(name, plan.key, plan.family, source.rstrip("\n"))


def data_ops(module_or_ops: ModuleOp | Iterable[Operation]) -> list[Operation]:
    """The ops of a module this module has kernels for (in order), or the given ops."""
    if isinstance(module_or_ops, ModuleOp):
        return [op for op in module_or_ops.walk() if type(op) in FAMILIES]
    return list(module_or_ops)


def emit_translation_unit(module_or_ops: ModuleOp | Iterable[Operation]) -> str:
    """The CUDA source for every distinct instance among the ops (first-use order):
    includes, boltir_data.h, then each instance."""
    instances: dict[str, Instance] = {}
    for op in data_ops(module_or_ops):
        plan = _plan(op)
        if (name := _name_for(plan)) not in instances:
            instances[name] = _render(plan, name)
    prelude = header_text("data/boltir_data.h")
    return render("data/translation_unit.cu.j2", instances=list(instances.values()), prelude=prelude)
