"""What the data-movement and elementwise kernel generators share: the element types a
kernel stores and computes in, the index arithmetic of the generated code (strides,
coordinates, affine offsets, merged axes, vector widths), and the plan a generator makes
of an op (family, instance key, template, context)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, Operation, SSAValue

from boltir.diagnostics import BoltError, format_location
from boltir.dialects.graph import tensor_shape
from boltir.dtypes import element_type_name

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


def unsupported(op: Operation, message: str):
    raise BoltError(f"'{op.name}' has no CUDA kernel: {message}", format_location(op.location))


def type_name_of(value: SSAValue | Attribute) -> str:
    t = value.type.element_type if isinstance(value, SSAValue) else value
    return element_type_name(t)


def computed_element(op: Operation, t: SSAValue | Attribute) -> Element:
    name = type_name_of(t)
    if name not in COMPUTED:
        unsupported(op, f"element type {name} is not computed on here (elementwise kernels take {', '.join(COMPUTED)})")
    return COMPUTED[name]


def element_size(op: Operation, value: SSAValue) -> int:
    """Bytes per element of a tensor that data movement copies."""
    name = type_name_of(value)
    if name in COMPUTED:
        return COMPUTED[name].size
    if name in MOVED_ONLY:
        return MOVED_ONLY[name]
    unsupported(op, f"element type {name} has no byte-addressable layout (data movement takes types of 8, 16, 32 or 64 bits)")


def static_shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_shape(value.type))


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides, running = [], 1
    for d in reversed(shape):
        strides.append(running)
        running *= d
    return strides[::-1]


def index_type_for(*shapes: Sequence[int]) -> str:
    """32-bit indices where every tensor fits (faster division), else 64-bit."""
    return "int" if max((math.prod(s) for s in shapes), default=0) <= INT32_LIMIT else "long long"


def vector_width_for(widest: int, *extents: int) -> int:
    """Elements per thread: 16 bytes of the widest tensor, halved until it divides every
    given extent (a vector never crosses a row, so it has one source row)."""
    v = max(1, VECTOR_BYTES // widest)
    while v > 1 and any(x % v for x in extents):
        v //= 2
    return v


def coordinate_expressions(extents: Sequence[int], linear: str = "e", prefix: str = "c") -> list[str]:
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


def affine_expression(base: int, coefficients: Sequence[int], prefix: str = "c") -> str:
    """`base + c0 * k0 + c1 * k1 ...` as C++ (terms with k = 0 left out)."""
    terms = [str(base)] if base else []
    for d, k in enumerate(coefficients):
        if k:
            terms.append(f"{prefix}{d}" if k == 1 else f"{prefix}{d} * {k}" if k > 0 else f"{prefix}{d} * ({k})")
    return " + ".join(terms) or "0"


def merge_axes(extents: Sequence[int], coefficients: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
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


def alignment_check(pointers: Iterable[tuple[str, int]]) -> str:
    return " && ".join(f"boltir_data::aligned({p}, {b})" for p, b in pointers) or "true"



# ------------------------------------------------------------------------ plans


@dataclass(frozen=True)
class KernelPlan:
    family: str
    key: str
    template: str
    context: dict


def empty_plan(op: Operation, kind: str) -> KernelPlan:
    count = len(op.operands)
    return KernelPlan(kind, f"{kind} empty inputs={count}", "empty.cu.j2", {"family": kind, "count": count})


