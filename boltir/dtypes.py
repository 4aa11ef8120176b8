"""Element types: the IR's builtin types and the numpy dtypes that hold their values.

Narrow types (bfloat16, the 8-, 6- and 4-bit floats, 4- and 2-bit integers) come from
ml_dtypes, imported on first use because it costs a second at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from boltir.diagnostics import BoltError


@dataclass(frozen=True)
class ElementKind:
    ir_name: str
    """How the IR spells it: f32, bf16, f8E4M3FN, ui8..."""
    numpy_name: str
    """The numpy (or ml_dtypes) dtype name."""
    make_type: Callable[[], Attribute]
    floating: bool


def _int(width: int, signed: bool = True) -> Callable[[], Attribute]:
    return lambda: IntegerType(width, Signedness.SIGNLESS if signed else Signedness.UNSIGNED)


ELEMENT_KINDS: tuple[ElementKind, ...] = (
    ElementKind("f16", "float16", Float16Type, True),
    ElementKind("bf16", "bfloat16", BFloat16Type, True),
    ElementKind("f32", "float32", Float32Type, True),
    ElementKind("f64", "float64", Float64Type, True),
    ElementKind("f8E4M3FN", "float8_e4m3fn", Float8E4M3FNType, True),
    ElementKind("f8E4M3FNUZ", "float8_e4m3fnuz", Float8E4M3FNUZType, True),
    ElementKind("f8E5M2", "float8_e5m2", Float8E5M2Type, True),
    ElementKind("f8E5M2FNUZ", "float8_e5m2fnuz", Float8E5M2FNUZType, True),
    ElementKind("f8E8M0FNU", "float8_e8m0fnu", Float8E8M0FNUType, True),
    ElementKind("f4E2M1FN", "float4_e2m1fn", Float4E2M1FNType, True),
    ElementKind("i1", "bool", _int(1), False),
    ElementKind("i2", "int2", _int(2), False),
    ElementKind("i4", "int4", _int(4), False),
    ElementKind("i8", "int8", _int(8), False),
    ElementKind("i16", "int16", _int(16), False),
    ElementKind("i32", "int32", _int(32), False),
    ElementKind("i64", "int64", _int(64), False),
    ElementKind("ui2", "uint2", _int(2, False), False),
    ElementKind("ui4", "uint4", _int(4, False), False),
    ElementKind("ui8", "uint8", _int(8, False), False),
    ElementKind("ui16", "uint16", _int(16, False), False),
    ElementKind("ui32", "uint32", _int(32, False), False),
    ElementKind("ui64", "uint64", _int(64, False), False),
)
_BY_IR_NAME = {kind.ir_name: kind for kind in ELEMENT_KINDS}
_BY_NUMPY_NAME = {kind.numpy_name: kind for kind in ELEMENT_KINDS}


@cache
def numpy_dtype_named(numpy_name: str) -> np.dtype:
    if hasattr(np, numpy_name) and numpy_name not in ("bool",):
        return np.dtype(numpy_name)
    if numpy_name == "bool":
        return np.dtype(np.bool_)
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, numpy_name))


def element_type_name(element_type: Attribute) -> str:
    """The IR's short name for a builtin element type (f32, i64, ui8, f8E4M3FN...)."""
    if isinstance(element_type, IntegerType):
        prefix = "ui" if element_type.signedness.data == Signedness.UNSIGNED else "i"
        return f"{prefix}{element_type.width.data}"
    return getattr(element_type, "name", str(element_type))


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of a builtin element type."""
    name = element_type_name(element_type)
    if name not in _BY_IR_NAME:
        raise BoltError(f"element type {name} is not supported; supported: {', '.join(_BY_IR_NAME)}")
    return numpy_dtype_named(_BY_IR_NAME[name].numpy_name)


def element_type_for(dtype: np.dtype | type) -> Attribute:
    """The builtin element type for a numpy dtype."""
    dtype = np.dtype(dtype)
    kind = _BY_NUMPY_NAME.get(dtype.name)
    if kind is None:
        raise BoltError(
            f"numpy dtype {dtype} has no tensor element type; supported: "
            + ", ".join(k.numpy_name for k in ELEMENT_KINDS)
        )
    return kind.make_type()


def is_floating(dtype: np.dtype) -> bool:
    """Floating point, the ml_dtypes narrow floats included (numpy calls those kind 'V')."""
    kind = _BY_NUMPY_NAME.get(np.dtype(dtype).name)
    return kind.floating if kind is not None else np.dtype(dtype).kind == "f"


def is_bfloat16(dtype: np.dtype) -> bool:
    return np.dtype(dtype).name == "bfloat16"


def is_numpy_native(dtype: np.dtype) -> bool:
    """Whether numpy itself (not ml_dtypes) defines the dtype."""
    return np.dtype(dtype).kind in "fiub"


def numpy_dtype_from_name(ir_name: str) -> np.dtype:
    """The numpy dtype of an IR element type name (f16, bf16, i64...)."""
    if ir_name not in _BY_IR_NAME:
        raise BoltError(f"element type {ir_name} is not supported; supported: {', '.join(_BY_IR_NAME)}")
    return numpy_dtype_named(_BY_IR_NAME[ir_name].numpy_name)


def ir_name_of_numpy(numpy_name: str) -> str:
    """The IR element type name of a numpy (or torch) dtype name: float16 -> f16."""
    kind = _BY_NUMPY_NAME.get(numpy_name)
    return kind.ir_name if kind else numpy_name
