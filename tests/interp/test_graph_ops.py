"""Every `graph` op in the interpreter against ONNX's reference evaluator.

Each case builds a one-node ONNX model and the equivalent one-op `@main`, feeds both the
same fresh random inputs and compares the results (dtype, shape and values). Where the
reference evaluator cannot serve as the oracle, the case says why and compares against
an explicit numpy computation instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest
from graph_oracle import (
    INT64_MAX,
    INT64_MIN,
    OPSET,
    assert_matches,
    check_node,
    random_array,
    run_boltir,
    run_onnx,
    run_onnxruntime,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType, i1

from boltir import weights
from boltir.dialects import graph
from boltir.dtypes import element_type_for, numpy_dtype_named

f16, f32, f64 = np.float16, np.float32, np.float64
i32, i64 = np.int32, np.int64


# ------------------------------------------------------------------------ the cases


@dataclass(frozen=True)
class In:
    """A random model input: its shape, dtype and `random_array` options."""

    shape: tuple[int, ...]
    dtype: type = f32
    options: Mapping = field(default_factory=dict)


def inp(*shape: int, dtype=f32, **options) -> In:
    return In(tuple(shape), dtype, options)


@dataclass
class Case:
    """A graph op built by `build(*inputs)` and the ONNX node `op_type(attrs)` it must match."""

    op_type: str
    inputs: Mapping[str, In]
    build: Callable
    attrs: Mapping = field(default_factory=dict)
    constants: Mapping[str, np.ndarray] = field(default_factory=dict)
    onnx_inputs: list[str] | None = None
    opset: int = OPSET
    num_outputs: int = 1

    def make_inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {name: random_array(rng, s.shape, s.dtype, **s.options) for name, s in self.inputs.items()}

    def check(self, rng: np.random.Generator) -> list[np.ndarray]:
        return check_node(
            self.build,
            self.op_type,
            self.make_inputs(rng),
            attrs=self.attrs,
            onnx_inputs=self.onnx_inputs,
            constants=self.constants,
            num_outputs=self.num_outputs,
            opset=self.opset,
        )


def onnx_attrs(**attrs) -> dict:
    """Builder keyword arguments as ONNX attributes: tuples to lists, bools to ints."""
    converted = {}
    for name, value in attrs.items():
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, tuple):
            value = list(value)
        converted[name] = value
    return converted


def int64s(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def cases(*params):
    """pytest params from (id, Case) pairs."""
    return [pytest.param(case, id=case_id) for case_id, case in params]


# ---------------------------------------------------------------------------- unary


def unary(op_type, build, dtype=f32, attrs=None, opset=OPSET, **options) -> Case:
    return Case(op_type, {"x": inp(3, 4, 5, dtype=dtype, **options)}, build, attrs=attrs or {}, opset=opset)


UNARY_CASES = cases(
    ("relu", unary("Relu", graph.ReluOp)),
    ("relu-f16", unary("Relu", graph.ReluOp, f16)),
    ("relu-i32", unary("Relu", graph.ReluOp, i32, low=-9, high=9)),
    ("sigmoid-f64", unary("Sigmoid", graph.SigmoidOp, f64, low=-20, high=20)),
    ("tanh-f64", unary("Tanh", graph.TanhOp, f64, low=-5, high=5)),
    ("leaky_relu", unary("LeakyRelu", graph.LeakyReluOp, attrs={"alpha": 0.01})),
    ("leaky_relu-alpha", unary("LeakyRelu", lambda x: graph.LeakyReluOp(x, 0.3), attrs={"alpha": 0.3})),
    ("gelu", unary("Gelu", graph.GeluOp, opset=20, low=-6, high=6)),
    ("gelu-f16", unary("Gelu", graph.GeluOp, f16, opset=20, low=-6, high=6)),
    (
        "gelu-tanh",
        unary("Gelu", lambda x: graph.GeluOp(x, "tanh"), attrs={"approximate": "tanh"}, opset=20, low=-6, high=6),
    ),
    ("sigmoid", unary("Sigmoid", graph.SigmoidOp, low=-20, high=20)),
    ("sigmoid-f16", unary("Sigmoid", graph.SigmoidOp, f16, low=-10, high=10)),
    ("tanh", unary("Tanh", graph.TanhOp, low=-5, high=5)),
    ("silu", unary("Swish", graph.SiluOp, attrs={"alpha": 1.0}, opset=24, low=-20, high=20)),
    ("hardswish", unary("HardSwish", graph.HardSwishOp, low=-5, high=5)),
    ("hardsigmoid", unary("HardSigmoid", graph.HardSigmoidOp, attrs={"alpha": 0.2, "beta": 0.5}, low=-5, high=5)),
    (
        "hardsigmoid-alpha-beta",
        unary(
            "HardSigmoid",
            lambda x: graph.HardSigmoidOp(x, alpha=1 / 6, beta=0.25),
            attrs={"alpha": 1 / 6, "beta": 0.25},
            low=-5,
            high=5,
        ),
    ),
    ("erf", unary("Erf", graph.ErfOp, low=-4, high=4)),
    ("erf-wide", unary("Erf", graph.ErfOp, low=-8, high=8)),
    ("sqrt", unary("Sqrt", graph.SqrtOp, low=0.01, high=9)),
    ("exp", unary("Exp", graph.ExpOp, low=-10, high=10)),
    ("neg", unary("Neg", graph.NegOp)),
    ("neg-i64", unary("Neg", graph.NegOp, i64, low=-100, high=100)),
    ("reciprocal", unary("Reciprocal", graph.ReciprocalOp, nonzero=True)),
    ("reciprocal-f16", unary("Reciprocal", graph.ReciprocalOp, f16, nonzero=True)),
)


@pytest.mark.parametrize("case", UNARY_CASES)
def test_unary(case, rng):
    case.check(rng)


def clip_case(minimum, maximum, dtype=f32, **options) -> Case:
    """graph.clip's bounds are attributes; ONNX Clip's are optional scalar inputs."""
    constants, names = {}, ["x"]
    for name, bound in (("min", minimum), ("max", maximum)):
        if bound is None:
            names.append("")
        else:
            constants[name] = np.array(bound, dtype=dtype)
            names.append(name)
    while names[-1] == "":
        names.pop()
    options = options or ({"low": -9, "high": 9} if np.dtype(dtype).kind == "i" else {"low": -3, "high": 3})
    return Case(
        "Clip",
        {"x": inp(4, 6, dtype=dtype, **options)},
        lambda x: graph.ClipOp(x, minimum, maximum),
        constants=constants,
        onnx_inputs=names,
    )


@pytest.mark.parametrize(
    "case",
    cases(
        ("min-max", clip_case(-1.0, 1.5)),
        ("min-only", clip_case(-0.5, None)),
        ("max-only", clip_case(None, 0.25)),
        ("relu6", clip_case(0.0, 6.0)),
        ("f16", clip_case(-1.0, 1.0, f16)),
        ("i32", clip_case(-3, 4, i32)),
        ("i64-large", clip_case(-(2**61), 2**61, i64, low=-(2**62), high=2**62)),
        ("i64-large-min-only", clip_case(-3, None, i64, low=-(2**62), high=2**62)),
    ),
)
def test_clip(case, rng):
    case.check(rng)


@pytest.mark.parametrize("dtype", [f32, f16, i32, i64])
def test_clip_min_above_max(dtype, rng):
    """With min > max, ONNX Clip gives max everywhere (numpy's clip does too)."""
    (got,) = clip_case(2.0, -1.0, dtype).check(rng)
    assert (got == -1).all()


# ---------------------------------------------------------------------------- cast

CAST_ELEMENT_TYPES = {f16: Float16Type(), f32: Float32Type(), i32: IntegerType(32), i64: IntegerType(64), np.bool_: i1}


@pytest.mark.parametrize(
    ("source", "target", "options"),
    [
        pytest.param(
            f32,
            f16,
            {"low": -70000, "high": 70000},
            id="f32-f16-overflow",
            marks=pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning"),
        ),
        pytest.param(f32, f16, {"low": -1, "high": 1}, id="f32-f16-small"),
        pytest.param(f32, i32, {"low": -100, "high": 100}, id="f32-i32"),
        pytest.param(f32, i64, {"low": -100, "high": 100}, id="f32-i64"),
        pytest.param(i64, f32, {"low": -(2**40), "high": 2**40}, id="i64-f32"),
        pytest.param(i32, i64, {"low": -1000, "high": 1000}, id="i32-i64"),
        pytest.param(f32, np.bool_, {"low": -2, "high": 2}, id="f32-bool"),
        pytest.param(np.bool_, f32, {}, id="bool-f32"),
        pytest.param(f16, f32, {}, id="f16-f32"),
        pytest.param(f16, i32, {"low": -50, "high": 50}, id="f16-i32"),
    ],
)
def test_cast(source, target, options, rng):
    x = random_array(rng, (5, 7), source, **options)
    if np.dtype(source).kind == "f":
        x.reshape(-1)[:4] = [0.0, -0.0, 2.0, -3.0]  # exact zeros (-> False) and integers
    check_node(
        lambda v: graph.CastOp(v, CAST_ELEMENT_TYPES[target]),
        "Cast",
        {"x": x},
        attrs={"to": helper.np_dtype_to_tensor_dtype(np.dtype(target))},
    )


# Narrow element types by their ml_dtypes names, as ONNX's numpy dtypes are.
F8_TYPES = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"]
E8M0 = "float8_e8m0fnu"
NARROW_INTEGERS = ["int4", "uint4", "int2", "uint2"]
F4 = "float4_e2m1fn"


def assert_same_bits(got: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    """Same dtype, same shape and the same bytes: NaN codes and signed zeros included."""
    assert got.dtype == expected.dtype, f"{what}dtype {got.dtype}, expected {expected.dtype}"
    assert got.shape == expected.shape, f"{what}shape {got.shape}, expected {expected.shape}"
    unsigned = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(unsigned), expected.view(unsigned), err_msg=what)


def check_cast(x: np.ndarray, target, *, saturate: bool | None = None, round_mode: str | None = None) -> np.ndarray:
    """graph.cast against ONNX Cast-25 (where round_mode exists), bit for bit; `None`
    leaves an attribute at its default on both sides."""
    target = np.dtype(target)
    attrs: dict = {"to": helper.np_dtype_to_tensor_dtype(target)}
    options: dict = {}
    if saturate is not None:
        attrs["saturate"], options["saturate"] = int(saturate), saturate
    if round_mode is not None:
        attrs["round_mode"], options["round_mode"] = round_mode, round_mode
    node = helper.make_node("Cast", ["x"], ["y0"], **attrs)
    (expected,) = run_onnx(node, {"x": x}, ["y0"], opset=25)
    (got,) = run_boltir(lambda v: graph.CastOp(v, element_type_for(target), **options), {"x": x})
    assert_same_bits(got, expected, what=f"Cast {x.dtype} to {target}: ")
    return got


def float8_inputs(rng: np.random.Generator, target: np.dtype, source) -> np.ndarray:
    """Values for a cast to an 8-bit float: zeros, infinities, NaNs, the largest finite
    value and what lies just past it (rounding back to it, the tie above it, beyond),
    far out of range, subnormals and their ties, and random values across the range."""
    info = ml_dtypes.finfo(target)
    largest, tiny = float(info.max), float(info.smallest_subnormal)
    top_step = 2.0 ** (math.floor(math.log2(largest)) - info.nmant)  # the spacing at the top
    edge = [largest, largest + top_step / 4, largest + top_step / 2, largest + top_step * 3 / 4, 2 * largest, 1e30]
    small = [tiny, tiny / 2, tiny * 3 / 4, tiny * 3 / 2, float(info.smallest_normal)]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, *edge, *(-v for v in edge), *small, *(-v for v in small)]
    magnitudes = 2.0 ** rng.uniform(math.log2(tiny) - 2, math.log2(largest), 48)
    values = np.concatenate(
        [special, rng.uniform(-1.2 * largest, 1.2 * largest, 48), magnitudes * rng.choice([-1.0, 1.0], 48)]
    )
    with np.errstate(over="ignore"):  # f16 cannot hold 1e30: it becomes infinity, also worth casting
        return values.astype(source)


@pytest.mark.parametrize("saturate", [True, False, None], ids=["saturate", "no-saturate", "default"])
@pytest.mark.parametrize("target", F8_TYPES)
@pytest.mark.parametrize("source", [f32, f16])
def test_cast_float8(source, target, saturate, rng):
    """Saturation clamps out-of-range values (infinities too) to the largest finite value;
    without it they become NaN, or infinity for E5M2; NaN stays NaN and the FNUZ types
    have no -0 (ONNX Cast's tables)."""
    target = numpy_dtype_named(target)
    got = check_cast(float8_inputs(rng, target, source), target, saturate=saturate)
    largest = ml_dtypes.finfo(target).max
    assert (got[2] == largest) == (saturate is not False)  # +inf


def float8_e8m0_inputs(rng: np.random.Generator) -> np.ndarray:
    """Non-negative f32 values (ONNX leaves negative ones undefined): zero, powers of two,
    ties and near-ties between them, f32 subnormals, the top of the range (2**127, its
    tie 1.5 * 2**127, the largest f32), infinity, NaN, and random magnitudes over the
    whole range."""
    f32_max = float(np.finfo(f32).max)
    special = [0.0, 1.0, 2.0, 0.5, 1.5, 3.0, 0.75, 1.5 + 2**-20, 1.5 - 2**-20, 1 + 2**-23, 2 - 2**-23]
    special += [2.0**-127, 2.0**-128, 2.0**-149, 1.5 * 2**-127, 0.75 * 2**-126, 2.0**-126, 1.5 * 2**-126]
    special += [2.0**127, 1.5 * 2**127, 1.25 * 2**127, f32_max, np.inf, np.nan]
    mantissas = rng.choice([1.0, 1.25, 1.5, 1.75], 64) + rng.uniform(0, 0.25, 64) * rng.integers(0, 2, 64)
    magnitudes = mantissas * 2.0 ** rng.integers(-126, 128, 64)
    return np.concatenate([special, np.minimum(magnitudes, f32_max)]).astype(f32)


@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "no-saturate"])
@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
def test_cast_float8_e8m0(round_mode, saturate, rng):
    """f8E8M0FNU keeps the exponent only; round_mode rounds the mantissa away. With
    saturate, rounding stops at the largest power (0xFE), else it reaches the NaN code
    0xFF.

    The interpreter follows ONNX's reference (numpy_helper.to_float8e8m0) where it
    departs from the spec: infinity becomes 0xFF either way (the spec's table: E8M0_MAX
    under saturate + up), zero and values below 2**-127 become code 0 (the table: NaN
    under non-saturate + nearest), and f32 subnormals round their mantissa field as if
    it followed a leading 1, so 2**-127 becomes 2**-126 under "up" and 1.25 * 2**-127
    becomes 2**-126 under "nearest", though 2**-127 is code 0 itself."""
    x = float8_e8m0_inputs(rng)
    got = check_cast(x, numpy_dtype_named(E8M0), saturate=saturate, round_mode=round_mode)
    codes = got.view(np.uint8)
    assert codes[x == 2.0**127][0] == 0xFE  # exact: no rounding at all
    assert codes[np.isnan(x)][0] == 0xFF


def test_cast_float8_e8m0_default(rng):
    """Without saturate and round_mode, both sides saturate and round up."""
    x = float8_e8m0_inputs(rng)
    got = check_cast(x, numpy_dtype_named(E8M0))
    explicit = check_cast(x, numpy_dtype_named(E8M0), saturate=True, round_mode="up")
    np.testing.assert_array_equal(got.view(np.uint8), explicit.view(np.uint8))


@pytest.mark.parametrize("target", NARROW_INTEGERS)
@pytest.mark.parametrize("source", [f32, f16])
def test_cast_to_narrow_integer(source, target, rng):
    """Floats truncate toward zero; the values stay within (lowest - 1, highest + 1), so
    that the truncated values fit (ONNX leaves out-of-range ones undefined)."""
    target = numpy_dtype_named(target)
    info = ml_dtypes.iinfo(target)
    exact = np.arange(int(info.min), int(info.max) + 1, dtype=np.float64)
    near = [-0.0, 0.5, -0.5, 0.99, -0.99, info.min - 0.75, info.max + 0.75]
    randoms = rng.uniform(info.min - 0.999, info.max + 0.999, 48)
    x = np.concatenate([exact, near, randoms]).astype(source)
    # Rounding to f16 can carry a value near the ends onto lowest - 1 or highest + 1.
    x = x[(x > info.min - 1) & (x < info.max + 1)]
    got = check_cast(x, target)
    np.testing.assert_array_equal(got.astype(np.int64), np.trunc(x.astype(np.float64)).astype(np.int64))


def test_cast_to_float4(rng):
    """f4E2M1FN (±0, 0.5, 1, 1.5, 2, 3, 4, 6) rounds to nearest even and saturates past
    ±6, infinities included. It has no NaN, and ONNX does not say what NaN becomes, so no
    NaN is cast."""
    codes = [0.0, -0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0]
    beyond = [6.5, 8.0, 100.0, 1e30, np.inf]
    special = codes + ties + beyond
    x = np.concatenate([special, [-v for v in special], rng.uniform(-9, 9, 48)]).astype(f32)
    check_cast(x, numpy_dtype_named(F4))


def all_codes(dtype: np.dtype) -> np.ndarray:
    """Every value of a narrow type: every bit pattern of an 8- or 16-bit float (NaNs
    included), every integer of a 2- or 4-bit integer type, the 16 codes of f4E2M1FN."""
    if dtype.name in NARROW_INTEGERS:
        info = ml_dtypes.iinfo(dtype)
        return np.arange(int(info.min), int(info.max) + 1).astype(dtype)
    if dtype.name == F4:
        return np.arange(16, dtype=np.uint8).view(dtype)
    return np.arange(2 ** (8 * dtype.itemsize), dtype=np.dtype(f"u{dtype.itemsize}")).view(dtype)


@pytest.mark.parametrize("source", [*F8_TYPES, E8M0, *NARROW_INTEGERS, F4, "bfloat16"])
def test_cast_from_narrow_to_f32(source):
    """Every value of each narrow type back to f32, exactly (NaN codes to NaN)."""
    check_cast(all_codes(numpy_dtype_named(source)), f32)


@pytest.mark.parametrize("source", [f32, f16])
def test_cast_to_bfloat16(source, rng):
    """bf16 rounds the mantissa to nearest even; past its largest value it overflows to
    infinity; NaN and signed zeros stay."""
    special = [0.0, -0.0, 1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-9, np.inf, -np.inf, np.nan, 6e-8, 65504.0]
    if source == f32:
        special += [float(np.finfo(f32).max), 3.3961e38, 1e-40, 2.0**-133]
    x = np.concatenate([special, rng.uniform(-5, 5, 32), 2.0 ** rng.uniform(-14, 15, 32)]).astype(source)
    check_cast(x, numpy_dtype_named("bfloat16"))


@pytest.mark.parametrize(
    "target",
    [f32, pytest.param(f16, marks=pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning"))],
)
def test_cast_from_bfloat16(target):
    """Every bf16 bit pattern to f32 (exact) and to f16 (rounded, overflowing to infinity)."""
    check_cast(all_codes(numpy_dtype_named("bfloat16")), target)


# --------------------------------------------------------------------------- binary

BROADCAST_PAIRS = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (3, 1)),
    ((2, 1, 4), (1, 3, 1)),
    ((5, 1, 3), (4, 1)),
    ((1,), (2, 3)),
    ((), (2, 3)),
    ((3, 4), ()),
]
BINARY_OPS = {
    "add": (graph.AddOp, "Add", {}, {}),
    "sub": (graph.SubOp, "Sub", {}, {}),
    "mul": (graph.MulOp, "Mul", {}, {}),
    "div": (graph.DivOp, "Div", {}, {"nonzero": True}),
    "pow": (graph.PowOp, "Pow", {"low": 0.1, "high": 3}, {}),
}


def shape_pair_id(shapes) -> str:
    return "_".join("x".join(map(str, s)) or "scalar" for s in shapes)


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=shape_pair_id)
@pytest.mark.parametrize("name", BINARY_OPS)
def test_binary_broadcast(name, shapes, rng):
    op, op_type, lhs_options, rhs_options = BINARY_OPS[name]
    inputs = {"a": random_array(rng, shapes[0], **lhs_options), "b": random_array(rng, shapes[1], **rhs_options)}
    check_node(op, op_type, inputs)


@pytest.mark.parametrize("name", ["add", "mul", "div", "sub"])
def test_binary_f16(name, rng):
    op, op_type, lhs_options, rhs_options = BINARY_OPS[name]
    inputs = {"a": random_array(rng, (3, 4), f16, **lhs_options), "b": random_array(rng, (4,), f16, **rhs_options)}
    check_node(op, op_type, inputs)


@pytest.mark.parametrize("dtype", [i32, i64])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_integer(name, dtype, rng):
    """Integer arithmetic is exact; ONNX integer Div truncates toward zero."""
    op, op_type, _, _ = BINARY_OPS[name]
    a = random_array(rng, (4, 5), dtype, low=-50, high=50)
    b = random_array(rng, (5,), dtype, low=-7, high=7, nonzero=name == "div")
    a[0, :4] = [-7, 7, -6, 6]  # quotients that round differently toward zero and toward -inf
    b[:4] = [2, -2, 4, -4]
    (got,) = check_node(op, op_type, {"a": a, "b": b})
    if name == "div":
        np.testing.assert_array_equal(got[0, :4], [-3, -3, -1, -1])


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "equal"])
def test_binary_unsigned(name, dtype, rng):
    """Unsigned integers over their whole range: add, sub and mul wrap modulo 2**bits (as
    numpy and ONNX's reference do), div truncates, and ui64 values past 2**53 stay exact
    (a detour through f64 would round them)."""
    op, op_type = (graph.EqualOp, "Equal") if name == "equal" else BINARY_OPS[name][:2]
    top = np.iinfo(dtype).max
    a = rng.integers(0, top, size=(4, 5), dtype=dtype, endpoint=True)
    b = rng.integers(1, top, size=(5,), dtype=dtype, endpoint=True)
    b[:2] = rng.integers(1, 1000, size=2, dtype=dtype)  # quotients of every size
    a[0, :3] = [top, 0, 7]  # wrap-around at both ends
    b[2] = a[1, 2]  # one equal pair
    (got,) = check_node(op, op_type, {"a": a, "b": b})
    if name == "equal":
        assert got[1, 2]


@pytest.mark.parametrize(("dtype", "largest_exponent"), [(i32, 11), (i64, 22)])
def test_pow_integer(dtype, largest_exponent, rng):
    """Integer Pow with non-negative exponents is exact: 7**11 nearly fills i32, and
    7**22 is past 2**53, where a detour through f64 would round; 0**0 is 1."""
    a = random_array(rng, (4, 6), dtype, low=-7, high=7)
    b = random_array(rng, (6,), dtype, low=0, high=largest_exponent)
    a[0, :4] = [7, -7, 0, -1]
    b[:4] = [largest_exponent, largest_exponent, 0, largest_exponent]
    (got,) = check_node(graph.PowOp, "Pow", {"a": a, "b": b})
    assert got[0, 0] == 7**largest_exponent and got[0, 2] == 1


@pytest.mark.parametrize(
    ("dtype", "shapes"),
    [
        pytest.param(f32, ((3, 4), (3, 4)), id="f32"),
        pytest.param(f32, ((2, 3, 4), (3, 1)), id="f32-broadcast"),
        pytest.param(f16, ((3, 4), (4,)), id="f16"),
        pytest.param(i64, ((3, 4), (1, 4)), id="i64"),
        pytest.param(np.bool_, ((3, 4), (3, 4)), id="bool"),
    ],
)
def test_equal(dtype, shapes, rng):
    # Few distinct values, so that both outcomes occur.
    a = random_array(rng, shapes[0], i64, low=-2, high=2).astype(dtype)
    b = random_array(rng, shapes[1], i64, low=-2, high=2).astype(dtype)
    b.reshape(-1)[0] = a.reshape(-1)[0]
    (got,) = check_node(graph.EqualOp, "Equal", {"a": a, "b": b})
    assert got.any()


COMPARISONS = {
    "greater": (graph.GreaterOp, "Greater"),
    "greater_equal": (graph.GreaterOrEqualOp, "GreaterOrEqual"),
    "less": (graph.LessOp, "Less"),
    "less_equal": (graph.LessOrEqualOp, "LessOrEqual"),
}


@pytest.mark.parametrize("dtype", [f32, f16, i64, np.uint32])
@pytest.mark.parametrize("name", list(COMPARISONS))
def test_comparison(name, dtype, rng):
    """Against onnxruntime, with broadcasting; few distinct values, so that ties occur."""
    op, op_type = COMPARISONS[name]
    a = random_array(rng, (2, 3, 4), i64, low=0, high=3)
    a[0, :, :3] = [0, 1, 2]  # with b holding 0, 1 and 2: every outcome occurs, whatever the draw
    b = rng.permutation(3).reshape(3, 1)
    (got,) = check_node(op, op_type, {"a": a.astype(dtype), "b": b.astype(dtype)})
    assert got.dtype == np.bool_ and got.any() and not got.all()


def test_comparisons_are_false_on_nan():
    a = np.array([np.nan, 1.0, np.nan, 2.0], f32)
    b = np.array([1.0, np.nan, np.nan, 2.0], f32)
    for op, op_type in COMPARISONS.values():
        (got,) = check_node(op, op_type, {"a": a, "b": b})
        assert not got[:3].any()


@pytest.mark.parametrize(("op", "op_type"), [(graph.AndOp, "And"), (graph.OrOp, "Or"), (graph.XorOp, "Xor")])
def test_logical(op, op_type, rng):
    a = random_array(rng, (2, 3, 4), np.bool_)
    b = random_array(rng, (3, 1), np.bool_)
    check_node(op, op_type, {"a": a, "b": b})


def test_not(rng):
    check_node(graph.NotOp, "Not", {"x": random_array(rng, (3, 4), np.bool_)})


@pytest.mark.parametrize(
    ("shapes", "dtype"),
    [
        pytest.param(((3, 4), (3, 4), (3, 4)), f32, id="same"),
        pytest.param(((3, 1), (4,), (2, 1, 1)), f32, id="broadcast"),
        pytest.param(((2, 3), (), (3,)), i64, id="i64-scalar"),
        pytest.param(((4,), (4,), (4,)), f16, id="f16"),
    ],
)
def test_where(shapes, dtype, rng):
    inputs = {
        "c": random_array(rng, shapes[0], np.bool_),
        "x": random_array(rng, shapes[1], dtype, low=-50, high=50),
        "y": random_array(rng, shapes[2], dtype, low=-50, high=50),
    }
    check_node(graph.WhereOp, "Where", inputs)


@pytest.mark.parametrize(
    ("shapes", "dtype"),
    [
        pytest.param(((3, 4),), f32, id="one"),
        pytest.param(((3, 4), (3, 4)), f32, id="two"),
        pytest.param(((2, 3, 4), (4,), (3, 1)), f32, id="three-broadcast"),
        pytest.param(((2, 3), (2, 3), (1, 3), (2, 1)), f16, id="four-f16"),
        pytest.param(((5,), (2, 5)), i32, id="i32"),
    ],
)
def test_sum(shapes, dtype, rng):
    inputs = {f"x{i}": random_array(rng, s, dtype, low=-20, high=20) for i, s in enumerate(shapes)}
    check_node(lambda *values: graph.SumOp(values), "Sum", inputs)


# ----------------------------------------------------------------------------- conv


def conv_case(x_shape, w_shape, *, bias=False, dtype=f32, **attrs) -> Case:
    inputs = {"x": inp(*x_shape, dtype=dtype), "w": inp(*w_shape, dtype=dtype)}
    if bias:
        inputs["b"] = inp(w_shape[0], dtype=dtype)

    def build(x, w, b=None):
        return graph.Conv2dOp(x, w, b, **attrs)

    return Case("Conv", inputs, build, attrs=onnx_attrs(**attrs))


CONV_CASES = cases(
    ("plain", conv_case((1, 3, 8, 8), (4, 3, 3, 3))),
    ("bias", conv_case((2, 3, 8, 8), (4, 3, 3, 3), bias=True)),
    ("1x1", conv_case((2, 5, 6, 6), (7, 5, 1, 1), bias=True)),
    ("strides", conv_case((1, 3, 9, 9), (4, 3, 3, 3), strides=(2, 2))),
    ("strides-uneven", conv_case((1, 3, 9, 10), (4, 3, 3, 3), strides=(2, 3))),
    ("pads", conv_case((1, 3, 7, 7), (4, 3, 3, 3), bias=True, pads=(1, 1, 1, 1))),
    ("pads-asymmetric", conv_case((1, 3, 7, 7), (4, 3, 3, 3), pads=(0, 1, 2, 1))),
    ("pads-asymmetric-strided", conv_case((1, 2, 8, 7), (3, 2, 3, 3), strides=(2, 2), pads=(2, 0, 1, 1))),
    ("dilations", conv_case((1, 3, 9, 9), (4, 3, 3, 3), dilations=(2, 2))),
    ("dilations-uneven", conv_case((1, 3, 9, 11), (4, 3, 3, 3), dilations=(1, 3), pads=(1, 2, 1, 2))),
    ("kernel-rectangular", conv_case((1, 3, 8, 8), (4, 3, 2, 5), bias=True, pads=(0, 2, 1, 2))),
    ("grouped", conv_case((2, 6, 7, 7), (4, 3, 3, 3), group=2)),
    ("grouped-bias", conv_case((1, 8, 6, 6), (12, 2, 3, 3), bias=True, group=4, pads=(1, 1, 1, 1))),
    ("depthwise", conv_case((2, 4, 7, 7), (4, 1, 3, 3), bias=True, group=4, pads=(1, 1, 1, 1))),
    ("depthwise-multiplier", conv_case((1, 4, 7, 7), (8, 1, 3, 3), group=4, strides=(2, 2))),
    (
        "everything",
        conv_case(
            (2, 4, 11, 10), (6, 2, 3, 2), bias=True, strides=(2, 1), pads=(1, 0, 2, 1), dilations=(2, 3), group=2
        ),
    ),
    ("f16", conv_case((1, 3, 8, 8), (4, 3, 3, 3), bias=True, dtype=f16, pads=(1, 1, 1, 1))),
    ("f64", conv_case((1, 4, 8, 8), (4, 2, 3, 3), bias=True, dtype=f64, pads=(1, 1, 1, 1), group=2)),
)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(case, rng):
    case.check(rng)


def numpy_conv_transpose(
    x, w, b, *, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1, output_padding=(0, 0)
):
    """ConvTranspose from its definition, in f64: input pixel (i, j) times kernel tap
    (ki, kj) lands at (s0 * i + d0 * ki, s1 * j + d1 * kj) of the uncropped output, which
    `output_padding` extends at the end; the pads then crop it."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    cg = c // group
    full_h = strides[0] * (h - 1) + dilations[0] * (kh - 1) + 1 + output_padding[0]
    full_w = strides[1] * (wd - 1) + dilations[1] * (kw - 1) + 1 + output_padding[1]
    full = np.zeros((n, group * mg, full_h, full_w))
    for g in range(group):
        xg = x[:, g * cg : (g + 1) * cg].astype(np.float64)
        wg = w[g * cg : (g + 1) * cg].astype(np.float64)
        for i in range(h):
            for j in range(wd):
                for ki in range(kh):
                    for kj in range(kw):
                        row, col = strides[0] * i + dilations[0] * ki, strides[1] * j + dilations[1] * kj
                        full[:, g * mg : (g + 1) * mg, row, col] += xg[:, :, i, j] @ wg[:, :, ki, kj]
    out = full[:, :, pads[0] : full_h - pads[2], pads[1] : full_w - pads[3]]
    if b is not None:
        out = out + b.astype(np.float64).reshape(1, -1, 1, 1)
    return out.astype(x.dtype)


def conv_transpose_case(x_shape, w_shape, *, bias=False, dtype=f32, reference=True, **attrs):
    """`reference=False` where ONNX's reference evaluator fails: with group > 1 it slices
    the weight by output channels instead of input channels (and raises), and with
    dilations and output_padding together its col2im gets the wrong block count."""
    inputs = {"x": inp(*x_shape, dtype=dtype), "w": inp(*w_shape, dtype=dtype)}
    if bias:
        inputs["b"] = inp(w_shape[1] * attrs.get("group", 1), dtype=dtype)

    def build(x, w, b=None):
        return graph.ConvTranspose2dOp(x, w, b, **attrs)

    return Case("ConvTranspose", inputs, build, attrs=onnx_attrs(**attrs)), attrs, reference


CONV_TRANSPOSE_CASES = [
    pytest.param(*conv_transpose_case(*args, **kwargs), id=case_id)
    for case_id, args, kwargs in [
        ("plain", ((1, 3, 5, 5), (3, 2, 3, 3)), {}),
        ("bias", ((2, 3, 5, 4), (3, 4, 3, 3)), {"bias": True}),
        ("strides", ((1, 3, 4, 4), (3, 2, 3, 3)), {"strides": (2, 2)}),
        ("strides-uneven", ((1, 2, 4, 3), (2, 3, 2, 3)), {"strides": (3, 2)}),
        ("pads", ((1, 3, 5, 5), (3, 2, 3, 3)), {"strides": (2, 2), "pads": (1, 1, 1, 1)}),
        ("pads-asymmetric", ((1, 3, 5, 5), (3, 2, 3, 3)), {"strides": (2, 2), "pads": (0, 1, 2, 0)}),
        (
            "output_padding",
            ((1, 3, 4, 4), (3, 2, 3, 3)),
            {"strides": (2, 2), "pads": (1, 1, 1, 1), "output_padding": (1, 1)},
        ),
        ("output_padding-uneven", ((1, 2, 3, 4), (2, 2, 3, 3)), {"strides": (2, 3), "output_padding": (1, 2)}),
        ("groups", ((1, 4, 4, 4), (4, 3, 3, 3)), {"bias": True, "group": 2, "reference": False}),
        ("depthwise", ((2, 3, 4, 4), (3, 1, 3, 3)), {"group": 3, "strides": (2, 2), "reference": False}),
        ("dilations", ((1, 2, 4, 4), (2, 3, 3, 3)), {"dilations": (2, 2)}),
        ("dilations-pads", ((1, 2, 4, 4), (2, 3, 3, 3)), {"dilations": (2, 1), "pads": (1, 2, 2, 0)}),
        (
            "dilations-output_padding",
            ((1, 2, 4, 4), (2, 3, 2, 2)),
            {"dilations": (3, 2), "output_padding": (2, 1), "reference": False},
        ),
        (
            "everything",
            ((2, 4, 3, 5), (4, 2, 3, 2)),
            {
                "bias": True,
                "strides": (2, 3),
                "pads": (1, 0, 0, 2),
                "dilations": (2, 1),
                "group": 2,
                "output_padding": (1, 2),
                "reference": False,
            },
        ),
        ("f16", ((1, 3, 4, 4), (3, 2, 3, 3)), {"bias": True, "dtype": f16, "strides": (2, 2)}),
    ]
]


def conv_transpose_oracle(inputs: Mapping[str, np.ndarray], attrs: Mapping) -> np.ndarray:
    return numpy_conv_transpose(inputs["x"], inputs["w"], inputs.get("b"), **attrs)


@pytest.mark.parametrize(("case", "attrs", "reference"), CONV_TRANSPOSE_CASES)
def test_conv_transpose2d(case, attrs, reference, rng):
    inputs = case.make_inputs(rng)
    (got,) = run_boltir(case.build, inputs)
    assert_matches(got, conv_transpose_oracle(inputs, attrs))
    if reference:
        case.check(rng)


@pytest.mark.parametrize(
    ("case", "attrs", "reference"),
    [
        param
        for param in CONV_TRANSPOSE_CASES
        if all(
            p < s
            for p, s in zip(param.values[1].get("output_padding", (0, 0)), param.values[1].get("strides", (1, 1)))
        )
    ],
)
def test_conv_transpose_oracle_agrees_with_onnxruntime(case, attrs, reference, rng):
    """The numpy ConvTranspose oracle is itself checked against onnxruntime (which only
    takes an output_padding below the stride; the spec also allows one below the dilation)."""
    inputs = {name: value.astype(f32) for name, value in case.make_inputs(rng).items()}
    node = helper.make_node("ConvTranspose", list(inputs), ["y0"], **case.attrs)
    (expected,) = run_onnxruntime(node, inputs, ["y0"], [f32])
    assert_matches(conv_transpose_oracle(inputs, attrs), expected)


def test_conv2d_batch_chunks(rng, monkeypatch):
    """A batch too big for one tap buffer runs in chunks, with the same result."""
    from boltir.interp import graph as interp_graph

    monkeypatch.setattr(interp_graph, "CONV_TAP_CHUNK_BYTES", 2 * 3 * 8 * 8 * 4)  # two images per chunk
    conv_case((5, 3, 8, 8), (4, 3, 3, 3), bias=True, strides=(1, 1), pads=(1, 0, 1, 2)).check(rng)


# --------------------------------------------------------------------- linear algebra


@pytest.mark.parametrize(
    ("a", "b", "dtype"),
    [
        pytest.param((3, 4), (4, 5), f32, id="2d"),
        pytest.param((4,), (4, 5), f32, id="1d-lhs"),
        pytest.param((3, 4), (4,), f32, id="1d-rhs"),
        pytest.param((4,), (4,), f32, id="1d-both"),
        pytest.param((4,), (2, 4, 5), f32, id="1d-lhs-batched-rhs"),
        pytest.param((2, 3, 4), (4,), f32, id="batched-lhs-1d-rhs"),
        pytest.param((2, 3, 4), (2, 4, 5), f32, id="batched"),
        pytest.param((2, 1, 3, 4), (5, 4, 2), f32, id="broadcast-batch"),
        pytest.param((3, 4), (2, 4, 5), f32, id="broadcast-lhs"),
        pytest.param((6, 1, 3, 4), (1, 2, 4, 5), f32, id="broadcast-both"),
        pytest.param((2, 3, 8), (8, 5), f16, id="f16"),
        pytest.param((3, 4), (4, 5), i32, id="i32"),
        pytest.param((2, 3, 4), (4, 5), f64, id="f64"),
    ],
)
def test_matmul(a, b, dtype, rng):
    options = {"low": -9, "high": 9} if np.dtype(dtype).kind == "i" else {}
    inputs = {"a": random_array(rng, a, dtype, **options), "b": random_array(rng, b, dtype, **options)}
    check_node(graph.MatMulOp, "MatMul", inputs)


def gemm_case(m, k, n, c_shape=None, *, trans_a=False, trans_b=False, alpha=1.0, beta=1.0, dtype=f32) -> Case:
    inputs = {
        "a": inp(*((k, m) if trans_a else (m, k)), dtype=dtype),
        "b": inp(*((n, k) if trans_b else (k, n)), dtype=dtype),
    }
    if c_shape is not None:
        inputs["c"] = inp(*c_shape, dtype=dtype)

    def build(a, b, c=None):
        return graph.GemmOp(a, b, c, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b)

    attrs = {"alpha": alpha, "beta": beta, "transA": int(trans_a), "transB": int(trans_b)}
    return Case("Gemm", inputs, build, attrs=attrs)


GEMM_CASES = cases(
    ("plain", gemm_case(3, 4, 5)),
    ("c-n", gemm_case(3, 4, 5, (5,))),
    ("c-1n", gemm_case(3, 4, 5, (1, 5))),
    ("c-mn", gemm_case(3, 4, 5, (3, 5))),
    ("c-m1", gemm_case(3, 4, 5, (3, 1))),
    ("c-scalar", gemm_case(3, 4, 5, ())),
    ("trans_a", gemm_case(3, 4, 5, (5,), trans_a=True)),
    ("trans_b", gemm_case(3, 4, 5, (5,), trans_b=True)),
    ("trans_both", gemm_case(3, 4, 5, (3, 5), trans_a=True, trans_b=True)),
    ("alpha", gemm_case(3, 4, 5, (5,), alpha=0.5)),
    ("beta", gemm_case(3, 4, 5, (1, 5), beta=-2.0)),
    ("alpha-beta-trans", gemm_case(6, 7, 2, (6, 2), alpha=1.5, beta=0.25, trans_a=True, trans_b=True)),
    ("classifier", gemm_case(2, 64, 10, (10,), trans_b=True)),
    ("f16", gemm_case(3, 16, 5, (5,), trans_b=True, dtype=f16)),
    ("f64", gemm_case(3, 16, 5, (3, 5), alpha=0.3, beta=0.7, trans_a=True, dtype=f64)),
)


@pytest.mark.parametrize("case", GEMM_CASES)
def test_gemm(case, rng):
    case.check(rng)


@pytest.mark.parametrize(
    ("shape", "dtype", "epsilon"),
    [
        pytest.param((2, 3, 4, 5), f32, 1e-5, id="nchw"),
        pytest.param((2, 3), f32, 1e-3, id="rank2"),
        pytest.param((1, 4, 6), f32, 0.1, id="rank3"),
        pytest.param((2, 3, 4, 4), f16, 1e-5, id="f16"),
        pytest.param((2, 3, 4, 4), f64, 1e-5, id="f64"),
    ],
)
def test_batch_norm(shape, dtype, epsilon, rng):
    c = shape[1]
    inputs = {
        "x": random_array(rng, shape, dtype),
        "scale": random_array(rng, (c,), dtype),
        "bias": random_array(rng, (c,), dtype),
        "mean": random_array(rng, (c,), dtype),
        "var": random_array(rng, (c,), dtype, low=0.1, high=3),
    }
    check_node(
        lambda *v: graph.BatchNormOp(*v, epsilon=epsilon),
        "BatchNormalization",
        inputs,
        attrs={"epsilon": epsilon},
    )


# ---------------------------------------------------------------------------- pools


def numpy_pool(
    x,
    kernel_shape,
    *,
    kind,
    strides=(1, 1),
    pads=(0, 0, 0, 0),
    dilations=(1, 1),
    ceil_mode=False,
    count_include_pad=False,
):
    """MaxPool / AveragePool from their definition, one window at a time, in f64.

    Output o of an axis reads positions o * stride - pad_begin + k * dilation; positions
    inside the input are pooled; with count_include_pad, the divisor also counts the
    explicit pads, but never what ceil_mode reaches past them. ceil_mode rounds the
    output length up, less a last window that would start in the end padding."""
    n, c = x.shape[:2]
    sizes = []
    for axis in range(2):
        size, k, s, d = x.shape[2 + axis], kernel_shape[axis], strides[axis], dilations[axis]
        span = size + pads[axis] + pads[axis + 2] - (d * (k - 1) + 1)
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= size + pads[axis]:
            out -= 1
        sizes.append(out)
    y = np.zeros((n, c, *sizes))
    for oh in range(sizes[0]):
        for ow in range(sizes[1]):
            taps = []
            for axis, o in enumerate((oh, ow)):
                start = o * strides[axis] - pads[axis]
                taps.append([start + k * dilations[axis] for k in range(kernel_shape[axis])])
            rows = [r for r in taps[0] if 0 <= r < x.shape[2]]
            cols = [q for q in taps[1] if 0 <= q < x.shape[3]]
            window = x[:, :, rows][:, :, :, cols].astype(np.float64)
            if kind == "max":
                y[:, :, oh, ow] = window.max(axis=(2, 3))
                continue
            if count_include_pad:
                counted = [
                    sum(-pads[a] <= t < x.shape[2 + a] + pads[a + 2] for t in taps[a]) for a in range(2)
                ]
                divisor = counted[0] * counted[1]
            else:
                divisor = len(rows) * len(cols)
            y[:, :, oh, ow] = window.sum(axis=(2, 3)) / divisor
    return y.astype(x.dtype)


def pool_case(op_type, x_shape, kernel_shape, *, dtype=f32, reference=True, **attrs):
    """`reference=False` where ONNX's reference AveragePool is wrong: when ceil_mode needs
    two or more extra positions past an axis' padding, it puts half of them at the start,
    which shifts every window (x of 7 rows, kernel 3, stride 3, ceil_mode: its first
    window reads rows -1..1 instead of 0..2; onnxruntime reads 0..2)."""
    op = graph.MaxPool2dOp if op_type == "MaxPool" else graph.AvgPool2dOp
    case = Case(
        op_type,
        {"x": inp(*x_shape, dtype=dtype)},
        lambda x: op(x, kernel_shape, **attrs),
        attrs=onnx_attrs(kernel_shape=tuple(kernel_shape), **attrs),
    )
    kind = "max" if op_type == "MaxPool" else "avg"
    return case, lambda x: numpy_pool(x, kernel_shape, kind=kind, **attrs), reference


def pool_params(*params):
    return [pytest.param(*pool_case(*args, **kwargs), id=case_id) for case_id, args, kwargs in params]


def check_pool(case, oracle, reference, rng):
    inputs = case.make_inputs(rng)
    (got,) = run_boltir(case.build, inputs)
    assert_matches(got, oracle(inputs["x"]))
    if reference:
        case.check(rng)


MAX_POOL_CASES = pool_params(
    ("k2s2", ("MaxPool", (2, 3, 8, 8), (2, 2)), {"strides": (2, 2)}),
    ("k3s1", ("MaxPool", (1, 2, 6, 7), (3, 3)), {}),
    ("k3s2-pads", ("MaxPool", (1, 3, 9, 9), (3, 3)), {"strides": (2, 2), "pads": (1, 1, 1, 1)}),
    ("pads-asymmetric", ("MaxPool", (1, 3, 8, 9), (3, 3)), {"strides": (2, 2), "pads": (1, 0, 0, 2)}),
    ("rectangular", ("MaxPool", (1, 2, 9, 8), (3, 2)), {"strides": (1, 2), "pads": (0, 1, 2, 0)}),
    ("ceil-extra-window", ("MaxPool", (1, 2, 7, 7), (2, 2)), {"strides": (2, 2), "ceil_mode": True}),
    ("ceil-no-effect", ("MaxPool", (1, 2, 8, 8), (2, 2)), {"strides": (2, 2), "ceil_mode": True}),
    ("ceil-k3s2", ("MaxPool", (1, 2, 8, 10), (3, 3)), {"strides": (2, 2), "ceil_mode": True}),
    (
        "ceil-pads-last-window-dropped",
        ("MaxPool", (1, 2, 5, 5), (2, 2)),
        {"strides": (2, 2), "pads": (1, 1, 1, 1), "ceil_mode": True},
    ),
    ("ceil-extra-two", ("MaxPool", (1, 2, 7, 4), (3, 3)), {"strides": (3, 3), "ceil_mode": True}),
    ("dilations", ("MaxPool", (1, 2, 9, 9), (3, 3)), {"dilations": (2, 2)}),
    (
        "dilations-uneven",
        ("MaxPool", (1, 2, 9, 10), (2, 3)),
        {"strides": (2, 1), "dilations": (3, 2), "pads": (1, 1, 0, 1)},
    ),
    (
        "dilations-ceil",
        ("MaxPool", (1, 2, 10, 10), (2, 2)),
        {"strides": (2, 2), "dilations": (2, 2), "ceil_mode": True},
    ),
    ("f16", ("MaxPool", (1, 3, 8, 8), (3, 3)), {"strides": (2, 2), "pads": (1, 1, 1, 1), "dtype": f16}),
)


@pytest.mark.parametrize(("case", "oracle", "reference"), MAX_POOL_CASES)
def test_max_pool2d(case, oracle, reference, rng):
    check_pool(case, oracle, reference, rng)


@pytest.mark.parametrize(
    ("kernel_shape", "attrs"),
    [
        pytest.param((2, 2), {"strides": (2, 2)}, id="k2s2"),
        pytest.param((3, 3), {"strides": (2, 2), "pads": (1, 1, 1, 1)}, id="k3s2-pads"),
        pytest.param((2, 2), {"strides": (2, 2), "ceil_mode": True}, id="ceil-extra-window"),
        pytest.param((2, 3), {"strides": (2, 1), "dilations": (2, 2), "pads": (1, 0, 1, 2)}, id="dilations-pads"),
    ],
)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, i32])
def test_max_pool2d_integer(dtype, kernel_shape, attrs, rng):
    """Integer max pooling over the type's whole range, with a corner of values near its
    lowest: padding and ceil_mode's extra positions must never win (they read as the
    lowest value, not 0). ONNX MaxPool takes int8 and uint8; i32, which it does not list,
    is checked against the numpy oracle only."""
    case, oracle, _ = pool_case("MaxPool", (2, 3, 7, 7), kernel_shape, dtype=dtype, **attrs)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=(2, 3, 7, 7), dtype=dtype, endpoint=True)
    x[:, :, :3, :3] = rng.integers(info.min, info.min + 10, size=(2, 3, 3, 3), dtype=dtype)
    (got,) = run_boltir(case.build, {"x": x})
    assert_matches(got, oracle(x))
    if dtype != i32:
        check_node(case.build, "MaxPool", {"x": x}, attrs=case.attrs)


AVG_POOL_CASES = pool_params(
    ("k2s2", ("AveragePool", (2, 3, 8, 8), (2, 2)), {"strides": (2, 2)}),
    ("k3s1", ("AveragePool", (1, 2, 6, 7), (3, 3)), {}),
    ("pads-exclude", ("AveragePool", (1, 3, 7, 7), (3, 3)), {"pads": (1, 1, 1, 1)}),
    ("pads-include", ("AveragePool", (1, 3, 7, 7), (3, 3)), {"pads": (1, 1, 1, 1), "count_include_pad": True}),
    ("pads-asymmetric-exclude", ("AveragePool", (1, 2, 8, 9), (3, 3)), {"strides": (2, 2), "pads": (2, 0, 1, 1)}),
    (
        "pads-asymmetric-include",
        ("AveragePool", (1, 2, 8, 9), (3, 3)),
        {"strides": (2, 2), "pads": (2, 0, 1, 1), "count_include_pad": True},
    ),
    ("rectangular", ("AveragePool", (1, 2, 9, 8), (3, 2)), {"strides": (1, 2), "pads": (0, 1, 2, 0)}),
    ("ceil-extra-window", ("AveragePool", (1, 2, 7, 7), (2, 2)), {"strides": (2, 2), "ceil_mode": True}),
    (
        "ceil-extra-window-include",
        ("AveragePool", (1, 2, 7, 7), (2, 2)),
        {"strides": (2, 2), "ceil_mode": True, "count_include_pad": True},
    ),
    (
        "ceil-pads-include",
        ("AveragePool", (1, 2, 6, 8), (3, 3)),
        {"strides": (2, 2), "pads": (1, 1, 1, 1), "ceil_mode": True, "count_include_pad": True},
    ),
    (
        "ceil-pads-exclude",
        ("AveragePool", (1, 2, 6, 8), (3, 3)),
        {"strides": (2, 2), "pads": (1, 1, 1, 1), "ceil_mode": True},
    ),
    (
        "ceil-pads-last-window-dropped",
        ("AveragePool", (1, 2, 5, 5), (2, 2)),
        {"strides": (2, 2), "pads": (1, 1, 1, 1), "ceil_mode": True},
    ),
    (
        "ceil-extra-two",
        ("AveragePool", (1, 2, 7, 4), (3, 3)),
        {"strides": (3, 3), "ceil_mode": True, "reference": False},
    ),
    (
        "ceil-extra-two-pads-include",
        ("AveragePool", (1, 2, 8, 9), (3, 3)),
        {"strides": (3, 3), "pads": (1, 0, 0, 2), "ceil_mode": True, "count_include_pad": True, "reference": False},
    ),
    ("f16", ("AveragePool", (1, 3, 8, 8), (3, 3)), {"strides": (2, 2), "pads": (1, 1, 1, 1), "dtype": f16}),
    (
        "f64",
        ("AveragePool", (1, 3, 7, 7), (3, 3)),
        {"strides": (2, 2), "pads": (1, 1, 1, 1), "dtype": f64, "count_include_pad": True},
    ),
)


@pytest.mark.parametrize(("case", "oracle", "reference"), AVG_POOL_CASES)
def test_avg_pool2d(case, oracle, reference, rng):
    check_pool(case, oracle, reference, rng)


@pytest.mark.parametrize(
    ("case", "oracle"),
    [
        pytest.param(case, oracle, id=f"{case.op_type}-{param.id}")
        for param in AVG_POOL_CASES + MAX_POOL_CASES
        for case, oracle, _ in [param.values]
    ],
)
def test_pool_oracle_agrees_with_onnxruntime(case, oracle, rng):
    """The numpy pool oracle is itself checked against onnxruntime on every pool case."""
    x = case.make_inputs(rng)["x"].astype(f32)
    node = helper.make_node(case.op_type, ["x"], ["y0"], **case.attrs)
    (expected,) = run_onnxruntime(node, {"x": x}, ["y0"], [f32])
    assert_matches(oracle(x), expected)


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        pytest.param((2, 3, 5, 7), f32, id="nchw"),
        pytest.param((2, 3, 5), f32, id="rank3"),
        pytest.param((1, 2, 3, 4, 5), f32, id="rank5"),
        pytest.param((1, 4, 7, 7), f16, id="f16"),
    ],
)
def test_global_avg_pool(shape, dtype, rng):
    check_node(graph.GlobalAvgPoolOp, "GlobalAveragePool", {"x": random_array(rng, shape, dtype)})


# ---------------------------------------------------------------- softmax, layer norm


@pytest.mark.parametrize(
    ("shape", "axis", "dtype"),
    [
        pytest.param((2, 3, 4), -1, f32, id="last"),
        pytest.param((2, 3, 4), 0, f32, id="axis0"),
        pytest.param((2, 3, 4), 1, f32, id="axis1"),
        pytest.param((2, 3, 4), -2, f32, id="axis-2"),
        pytest.param((5,), 0, f32, id="rank1"),
        pytest.param((2, 8), -1, f16, id="f16"),
        pytest.param((3, 8), 0, f64, id="f64"),
    ],
)
def test_softmax(shape, axis, dtype, rng):
    x = random_array(rng, shape, dtype, low=-10, high=10)
    check_node(lambda v: graph.SoftmaxOp(v, axis), "Softmax", {"x": x}, attrs={"axis": axis})


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize(
    ("shape", "axis", "dtype", "epsilon"),
    [
        pytest.param((2, 3, 8), -1, f32, 1e-5, id="axis-1"),
        pytest.param((2, 3, 8), -2, f32, 1e-5, id="axis-2"),
        pytest.param((2, 3, 8), 1, f32, 1e-3, id="axis1-eps"),
        pytest.param((4, 16), -1, f16, 1e-5, id="f16"),
        pytest.param((2, 3, 8), -2, f64, 1e-5, id="f64"),
    ],
)
def test_layer_norm(shape, axis, dtype, epsilon, bias, rng):
    normalized = shape[axis % len(shape) :]
    inputs = {"x": random_array(rng, shape, dtype, low=-3, high=5), "scale": random_array(rng, normalized, dtype)}
    if bias:
        inputs["bias"] = random_array(rng, normalized, dtype)
    check_node(
        lambda x, s, b=None: graph.LayerNormOp(x, s, b, axis=axis, epsilon=epsilon),
        "LayerNormalization",
        inputs,
        attrs={"axis": axis, "epsilon": epsilon},
        opset=17,
    )


# ---------------------------------------------------------------------------- reduce

REDUCE_OPS = {
    "mean": (graph.ReduceMeanOp, "ReduceMean"),
    "sum": (graph.ReduceSumOp, "ReduceSum"),
    "max": (graph.ReduceMaxOp, "ReduceMax"),
}


@pytest.mark.parametrize("keepdims", [True, False], ids=["keepdims", "dropdims"])
@pytest.mark.parametrize("axes", [(1,), (0, 2), (-1,), (0, 1, 2), (2, -3)], ids=str)
@pytest.mark.parametrize("name", REDUCE_OPS)
def test_reduce(name, axes, keepdims, rng):
    op, op_type = REDUCE_OPS[name]
    check_node(
        lambda x: op(x, axes, keepdims),
        op_type,
        {"x": random_array(rng, (3, 4, 5))},
        attrs={"keepdims": int(keepdims)},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(*axes)},
    )


@pytest.mark.parametrize(
    ("name", "dtype"),
    [("sum", i32), ("max", i64), ("mean", f16), ("sum", f16), ("max", f16)],
)
def test_reduce_dtypes(name, dtype, rng):
    op, op_type = REDUCE_OPS[name]
    options = {"low": -100, "high": 100} if np.dtype(dtype).kind == "i" else {}
    check_node(
        lambda x: op(x, (1,), False),
        op_type,
        {"x": random_array(rng, (3, 16, 2), dtype, **options)},
        attrs={"keepdims": 0},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(1)},
    )



@pytest.mark.parametrize("keepdims", [True, False], ids=["keepdims", "dropdims"])
@pytest.mark.parametrize(
    ("shape", "axes", "dtype"),
    [
        pytest.param((3, 0, 4), (1,), f32, id="f32"),
        pytest.param((3, 0, 4), (0, 1), f16, id="f16-two-axes"),
        pytest.param((0, 5), (0,), f64, id="f64"),
        pytest.param((2, 0), (-1,), i32, id="i32"),
        pytest.param((0, 3), (0,), i64, id="i64"),
        pytest.param((3, 0, 2), (1,), np.uint8, id="ui8"),
        pytest.param((2, 0), (1,), np.bool_, id="bool"),
    ],
)
def test_reduce_max_empty(shape, axes, dtype, keepdims):
    """The maximum over an axis of size 0 is the lowest value of the type (ONNX
    ReduceMax): -inf for floats, the minimum for integers, False for bool."""
    x = np.zeros(shape, dtype)
    (got,) = check_node(
        lambda v: graph.ReduceMaxOp(v, axes, keepdims),
        "ReduceMax",
        {"x": x},
        attrs={"keepdims": int(keepdims)},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(*axes)},
    )
    lowest = -np.inf if np.dtype(dtype).kind == "f" else (False if dtype == np.bool_ else np.iinfo(dtype).min)
    assert got.size and (got == lowest).all()


def test_reduce_max_empty_result(rng):
    """Reducing a non-empty axis of an empty tensor gives an empty result."""
    check_node(
        lambda v: graph.ReduceMaxOp(v, (2,), False),
        "ReduceMax",
        {"x": np.zeros((3, 0, 4), f32)},
        attrs={"keepdims": 0},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(2)},
    )

# ------------------------------------------------------------------- data movement


@pytest.mark.parametrize(
    ("shape", "target"),
    [((2, 3, 4), (6, 4)), ((2, 3, 4), (24,)), ((2, 3, 4), (4, 1, 6)), ((24,), (2, 2, 3, 2)), ((1, 5), (5,))],
    ids=str,
)
def test_reshape(shape, target, rng):
    check_node(
        lambda x: graph.ReshapeOp(x, target),
        "Reshape",
        {"x": random_array(rng, shape)},
        onnx_inputs=["x", "shape"],
        constants={"shape": int64s(*target)},
    )


@pytest.mark.parametrize(
    ("shape", "target", "dtype"),
    [
        ((3, 1), (2, 3, 4), f32),
        ((1,), (2, 2), f32),
        ((4,), (3, 4), i64),
        ((2, 1, 3), (2, 5, 3), f16),
        ((3, 4), (3, 4), f32),
    ],
    ids=str,
)
def test_expand(shape, target, dtype, rng):
    check_node(
        lambda x: graph.ExpandOp(x, target),
        "Expand",
        {"x": random_array(rng, shape, dtype, low=-9, high=9)},
        onnx_inputs=["x", "shape"],
        constants={"shape": int64s(*target)},
    )


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(axis, rng):
    check_node(lambda x: graph.FlattenOp(x, axis), "Flatten", {"x": random_array(rng, (2, 3, 4))}, attrs={"axis": axis})


@pytest.mark.parametrize(
    ("shape", "perm"),
    [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4), (0, 1, 2))],
    ids=str,
)
def test_transpose(shape, perm, rng):
    x = random_array(rng, shape)
    check_node(lambda v: graph.TransposeOp(v, perm), "Transpose", {"x": x}, attrs={"perm": list(perm)})


@pytest.mark.parametrize(
    ("shapes", "axis", "dtype"),
    [
        (((2, 3), (4, 3)), 0, f32),
        (((2, 3), (2, 1), (2, 5)), 1, f32),
        (((2, 3, 4), (2, 3, 2)), -1, i64),
        (((1, 2, 3),), 1, f32),
        (((2, 2, 2), (2, 3, 2), (2, 1, 2)), -2, f16),
    ],
    ids=str,
)
def test_concat(shapes, axis, dtype, rng):
    inputs = {f"x{i}": random_array(rng, s, dtype, low=-9, high=9) for i, s in enumerate(shapes)}
    check_node(lambda *v: graph.ConcatOp(v, axis), "Concat", inputs, attrs={"axis": axis})


@pytest.mark.parametrize(
    ("shape", "sizes", "axis"),
    [((6, 4), (2, 4), 0), ((3, 7), (1, 2, 4), 1), ((2, 5, 3), (5,), 1), ((2, 3, 6), (3, 3), -1), ((4, 2), (0, 4), 0)],
    ids=str,
)
def test_split(shape, sizes, axis, rng):
    check_node(
        lambda x: graph.SplitOp(x, sizes, axis),
        "Split",
        {"x": random_array(rng, shape)},
        attrs={"axis": axis},
        onnx_inputs=["x", "split"],
        constants={"split": int64s(*sizes)},
        num_outputs=len(sizes),
    )


SLICE_CASES = [
    pytest.param((10,), (2,), (7,), (0,), (1,), id="plain"),
    pytest.param((10,), (-3,), (INT64_MAX,), (0,), (1,), id="negative-start-to-end"),
    pytest.param((10,), (1,), (INT64_MAX,), (0,), (3,), id="int64max-end-step3"),
    pytest.param((10,), (-1,), (INT64_MIN,), (0,), (-1,), id="reverse-all"),
    pytest.param((10,), (INT64_MAX,), (INT64_MIN,), (0,), (-2,), id="reverse-step2-from-int64max"),
    pytest.param((10,), (7,), (2,), (0,), (-1,), id="negative-step"),
    pytest.param((10,), (-2,), (-8,), (0,), (-3,), id="negative-step-negative-bounds"),
    pytest.param((10,), (8,), (-11,), (0,), (-1,), id="negative-step-end-below"),
    pytest.param((10,), (20,), (0,), (0,), (-1,), id="negative-step-start-above"),
    pytest.param((10,), (-20,), (20,), (0,), (1,), id="out-of-range-clamped"),
    pytest.param((10,), (5,), (2,), (0,), (1,), id="empty"),
    pytest.param((4, 6, 5), (1, -4), (3, INT64_MAX), (0, 1), (1, 2), id="two-axes"),
    pytest.param((4, 6, 5), (-1, 4), (INT64_MIN, 0), (-1, 1), (-2, -1), id="negative-axes-and-steps"),
    pytest.param((4, 6, 5), (0,), (-1,), (2,), (1,), id="last-axis-negative-end"),
    pytest.param((3, 8, 2), (-1, -2), (INT64_MIN, 0), (0, 1), (-1, -3), id="negative-steps-two-axes"),
]


@pytest.mark.parametrize(("shape", "starts", "ends", "axes", "steps"), SLICE_CASES)
def test_slice(shape, starts, ends, axes, steps, rng):
    check_node(
        lambda x: graph.SliceOp(x, starts, ends, axes, steps),
        "Slice",
        {"x": random_array(rng, shape)},
        onnx_inputs=["x", "starts", "ends", "axes", "steps"],
        constants={"starts": int64s(*starts), "ends": int64s(*ends), "axes": int64s(*axes), "steps": int64s(*steps)},
    )


@pytest.mark.parametrize(
    ("starts", "ends", "steps"),
    [
        pytest.param((-20,), (INT64_MIN,), (-1,), id="start-below-to-int64min"),
        pytest.param((-11,), (-12,), (-1,), id="start-and-end-below"),
        pytest.param((-20,), (-30,), (-2,), id="step2"),
    ],
)
def test_slice_backwards_from_below_start(starts, ends, steps, rng):
    """Stepping backwards from a start below -size: the ONNX spec clamps the start to 0
    (onnxruntime agrees) where the reference evaluator, like Python, yields nothing."""
    x = random_array(rng, (10,))
    constants = {"starts": int64s(*starts), "ends": int64s(*ends), "axes": int64s(0), "steps": int64s(*steps)}
    node = helper.make_node("Slice", ["x", *constants], ["y0"])
    (expected,) = run_onnxruntime(node, {"x": x}, ["y0"], [f32], constants=constants)
    np.testing.assert_array_equal(expected, x[:1])
    (got,) = run_boltir(lambda v: graph.SliceOp(v, starts, ends, (0,), steps), {"x": x})
    assert_matches(got, expected)


PAD_CASES = [
    pytest.param((3, 4), (1, 2, 0, 1), "constant", 0.0, f32, id="constant-zero"),
    pytest.param((2, 3, 4), (0, 1, 2, 1, 0, 3), "constant", 1.5, f32, id="constant-value"),
    pytest.param((3, 4), (2, 0, 1, 3), "constant", -7.0, i64, id="constant-i64"),
    pytest.param((3, 4), (1, 1, 1, 1), "constant", 2.0, f16, id="constant-f16"),
    pytest.param((3, 4), (2, 1, 3, 2), "edge", 0.0, f32, id="edge"),
    pytest.param((1, 2, 3, 4), (0, 0, 1, 2, 0, 0, 2, 1), "edge", 0.0, f32, id="edge-nchw"),
    pytest.param((4, 5), (3, 1, 2, 4), "reflect", 0.0, f32, id="reflect"),
    pytest.param((1, 2, 4, 5), (0, 0, 1, 2, 0, 0, 3, 1), "reflect", 0.0, f32, id="reflect-nchw"),
    pytest.param((4, 5), (1, 1, 2, 0), "reflect", 0.0, i32, id="reflect-i32"),
    pytest.param((3, 4), (1, 2, 2, 1), "wrap", 0.0, f32, id="wrap"),
    pytest.param((1, 2, 3, 4), (0, 0, 2, 1, 0, 1, 1, 3), "wrap", 0.0, f32, id="wrap-nchw"),
    # Pads larger than the axis wrap around it more than once (a torus).
    pytest.param((2, 3), (5, 7, 4, 2), "wrap", 0.0, f32, id="wrap-larger-than-axis"),
    pytest.param((1, 2, 3, 4), (0, 0, 4, 9, 0, 1, 5, 3), "wrap", 0.0, f32, id="wrap-nchw-larger-than-axis"),
    pytest.param((1, 3), (2, 4, 3, 5), "wrap", 0.0, f32, id="wrap-length-one"),
    pytest.param((4, 5), (1, 6, 2, 0), "wrap", 0.0, i32, id="wrap-i32"),
    pytest.param((3, 2), (0, 3, 4, 0), "wrap", 0.0, f16, id="wrap-f16"),
]


@pytest.mark.parametrize(("shape", "pads", "mode", "value", "dtype"), PAD_CASES)
def test_pad(shape, pads, mode, value, dtype, rng):
    constants = {"pads": int64s(*pads)}
    names = ["x", "pads"]
    if mode == "constant":
        constants["value"] = np.array(value, dtype=dtype)
        names.append("value")
    check_node(
        lambda x: graph.PadOp(x, pads, mode, value),
        "Pad",
        {"x": random_array(rng, shape, dtype, low=-9, high=9)},
        attrs={"mode": mode},
        onnx_inputs=names,
        constants=constants,
    )


def numpy_pad_with_crops(x: np.ndarray, pads, mode: str, value: float) -> np.ndarray:
    """ONNX Pad with negative pads, spelled out: a negative pad removes that many elements
    from its side, then the positive pads are applied to what is left (as onnxruntime
    does). ONNX's reference evaluator hands negative widths to np.pad, which rejects them."""
    rank = x.ndim
    for axis in range(rank):
        begin, end = pads[axis], pads[axis + rank]
        x = np.take(x, np.arange(max(0, -begin), x.shape[axis] - max(0, -end)), axis=axis)
    widths = [(max(0, pads[a]), max(0, pads[a + rank])) for a in range(rank)]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=mode)


@pytest.mark.parametrize(
    ("shape", "pads", "mode", "value"),
    [
        pytest.param((5, 6), (-1, 2, -2, 0), "constant", 3.0, id="constant"),
        pytest.param((5, 6), (0, -2, 0, -3), "constant", 0.0, id="crop-only"),
        pytest.param((5, 6), (-2, 1, 3, -1), "constant", -1.0, id="crop-and-pad-one-axis"),
        pytest.param((5, 6), (-1, 2, 2, -2), "edge", 0.0, id="edge"),
        pytest.param((6, 7), (-2, 2, 1, -3), "reflect", 0.0, id="reflect"),
    ],
)
def test_pad_negative(shape, pads, mode, value, rng):
    x = random_array(rng, shape)
    (got,) = run_boltir(lambda v: graph.PadOp(v, pads, mode, value), {"x": x})
    assert_matches(got, numpy_pad_with_crops(x, pads, mode, value).astype(x.dtype))
    # onnxruntime implements negative pads; a second opinion.
    node = helper.make_node("Pad", ["x", "pads", "value"], ["y0"], mode=mode)
    constants = {"pads": int64s(*pads), "value": np.array(value, f32)}
    (expected,) = run_onnxruntime(node, {"x": x}, ["y0"], [f32], constants=constants)
    assert_matches(got, expected)


# ---------------------------------------------------------------------------- resize

COORDINATE_MODES = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
# Exact f32 scales whose products with the sizes are whole numbers: for align_corners
# ONNX's reference evaluator divides by the fractional `scale * size` where the spec
# divides by the integer output length, and the two agree only there. Both sides get the
# same (f32) scale, as an importer passes it on.
RESIZE_SCALINGS = {
    "up2": ((1, 2, 4, 5), (1.0, 1.0, 2.0, 2.0)),
    "up-uneven": ((1, 2, 4, 6), (1.0, 1.0, 1.5, 3.0)),
    "down2": ((1, 2, 8, 6), (1.0, 1.0, 0.5, 0.5)),
    "down-uneven": ((1, 2, 8, 16), (1.0, 1.0, 0.75, 0.375)),
    "mixed": ((2, 3, 6, 4), (1.0, 1.0, 0.5, 2.5)),
}


def resize_case(
    shape,
    scales,
    mode,
    coordinate_mode,
    nearest_mode="round_prefer_floor",
    dtype=f32,
    *,
    cubic_coeff_a=-0.75,
    exclude_outside=False,
) -> Case:
    return Case(
        "Resize",
        {"x": inp(*shape, dtype=dtype)},
        lambda x: graph.ResizeOp(
            x,
            [float(np.float32(s)) for s in scales],
            mode=mode,
            coordinate_transformation_mode=coordinate_mode,
            nearest_mode=nearest_mode,
            cubic_coeff_a=cubic_coeff_a,
            exclude_outside=exclude_outside,
        ),
        attrs={
            "mode": mode,
            "coordinate_transformation_mode": coordinate_mode,
            "nearest_mode": nearest_mode,
            "cubic_coeff_a": cubic_coeff_a,
            "exclude_outside": int(exclude_outside),
        },
        onnx_inputs=["x", "", "scales"],
        constants={"scales": np.array(scales, dtype=f32)},
        opset=19,
    )


@pytest.mark.parametrize("scaling", RESIZE_SCALINGS)
@pytest.mark.parametrize("coordinate_mode", COORDINATE_MODES)
@pytest.mark.parametrize("nearest_mode", NEAREST_MODES)
def test_resize_nearest(nearest_mode, coordinate_mode, scaling, rng):
    shape, scales = RESIZE_SCALINGS[scaling]
    resize_case(shape, scales, "nearest", coordinate_mode, nearest_mode).check(rng)


@pytest.mark.parametrize("scaling", RESIZE_SCALINGS)
@pytest.mark.parametrize("coordinate_mode", COORDINATE_MODES)
def test_resize_linear(coordinate_mode, scaling, rng):
    shape, scales = RESIZE_SCALINGS[scaling]
    resize_case(shape, scales, "linear", coordinate_mode).check(rng)


@pytest.mark.parametrize("dtype", [f16, f64])
@pytest.mark.parametrize(
    ("mode", "coordinate_mode"),
    [
        ("nearest", "asymmetric"),
        ("linear", "half_pixel"),
        ("linear", "align_corners"),
        ("linear", "pytorch_half_pixel"),
    ],
)
def test_resize_dtypes(mode, coordinate_mode, dtype, rng):
    resize_case((1, 2, 4, 4), (1.0, 1.0, 2.0, 1.5), mode, coordinate_mode, dtype=dtype).check(rng)


@pytest.mark.parametrize("coordinate_mode", ["half_pixel", "pytorch_half_pixel", "asymmetric"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_inexact_scale(mode, coordinate_mode, rng):
    """Scales with no exact f32 value (0.4, 0.3), where ties such as x / 0.4 = 2.5 fall
    either way depending on the scale's rounding."""
    resize_case((1, 2, 10, 10), (1.0, 1.0, 0.4, 0.3), mode, coordinate_mode, "round_prefer_ceil").check(rng)


@pytest.mark.parametrize("nearest_mode", NEAREST_MODES)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_align_corners_inexact_scale(mode, nearest_mode, rng):
    """align_corners divides by the unrounded output length `scale * size` minus one,
    as ONNX's reference evaluator and the ONNX backend node tests
    (test_resize_downsample_scales_linear_align_corners) do; for 10 * f32(0.4) =
    4.00000006 that moves 3 to 2.99999994. onnxruntime divides by the integer length
    instead and disagrees here."""
    resize_case((1, 2, 10, 10), (1.0, 1.0, 0.4, 0.3), mode, "align_corners", nearest_mode).check(rng)


@pytest.mark.parametrize("coordinate_mode", ["half_pixel", "pytorch_half_pixel", "asymmetric"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_scale_keeps_size(mode, coordinate_mode, rng):
    """A scale other than 1 whose output length equals the input's still moves the samples."""
    resize_case((1, 2, 5, 7), (1.0, 1.0, 1.125, 1.0625), mode, coordinate_mode).check(rng)


@pytest.mark.parametrize("coordinate_mode", COORDINATE_MODES)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_to_one(mode, coordinate_mode, rng):
    """Down to a single output pixel along an axis (pytorch_half_pixel's and
    align_corners's special case)."""
    resize_case((1, 2, 4, 6), (1.0, 1.0, 0.25, 0.5), mode, coordinate_mode).check(rng)


# Cubic, and the coordinate modes the tests above leave out. Both cubic coefficients in
# use (PyTorch's -0.75, TensorFlow's -0.5), with and without exclude_outside.
CUBIC_OPTIONS = {
    "a-0.75": {"cubic_coeff_a": -0.75},
    "a-0.75-exclude": {"cubic_coeff_a": -0.75, "exclude_outside": True},
    "a-0.5": {"cubic_coeff_a": -0.5},
    "a-0.5-exclude": {"cubic_coeff_a": -0.5, "exclude_outside": True},
}


@pytest.mark.parametrize("options", CUBIC_OPTIONS)
@pytest.mark.parametrize("scaling", RESIZE_SCALINGS)
@pytest.mark.parametrize("coordinate_mode", [*COORDINATE_MODES, "half_pixel_symmetric"])
def test_resize_cubic(coordinate_mode, scaling, options, rng):
    shape, scales = RESIZE_SCALINGS[scaling]
    resize_case(shape, scales, "cubic", coordinate_mode, **CUBIC_OPTIONS[options]).check(rng)


# Scales whose products with the sizes are not whole (6.75 -> 6, 7.5 -> 7, 3.3 -> 3), where
# half_pixel_symmetric moves the samples by in_len / 2 * (1 - out_len / (in_len * scale)).
HALF_PIXEL_SYMMETRIC_SCALINGS = {
    "fractional": ((1, 2, 9, 6), (1.0, 1.0, 0.75, 1.25)),
    "fractional-uneven": ((2, 1, 3, 11), (1.0, 1.0, 2.5, 0.3)),
}
RESIZE_MODES = {
    **{f"nearest-{m}": {"mode": "nearest", "nearest_mode": m} for m in NEAREST_MODES},
    "linear": {"mode": "linear"},
    "cubic": {"mode": "cubic"},
    "cubic-a-0.5-exclude": {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": True},
}


@pytest.mark.parametrize("modes", RESIZE_MODES)
@pytest.mark.parametrize("scaling", HALF_PIXEL_SYMMETRIC_SCALINGS)
def test_resize_half_pixel_symmetric(scaling, modes, rng):
    shape, scales = HALF_PIXEL_SYMMETRIC_SCALINGS[scaling]
    options = dict(RESIZE_MODES[modes])
    mode = options.pop("mode")
    resize_case(shape, scales, mode, "half_pixel_symmetric", **options).check(rng)


def keys_cubic(distance: float, a: float) -> float:
    """Keys' cubic convolution kernel (Equation 4 of the paper ONNX Resize cites)."""
    d = abs(distance)
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


def spec_coordinate(out_index: int, in_len: int, out_len: int, scale: float, coordinate_mode: str) -> float:
    """The input coordinate an output position samples, by the formulas of ONNX Resize's
    coordinate_transformation_mode; `output_width` is the unrounded `scale * in_len` (the
    spec's own term for half_pixel_symmetric, and what ONNX's reference and backend tests
    use for align_corners)."""
    x = out_index
    if coordinate_mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if coordinate_mode == "half_pixel_symmetric":
        output_width = scale * in_len
        return in_len / 2 * (1 - out_len / output_width) + (x + 0.5) / scale - 0.5
    if coordinate_mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else 0.0
    if coordinate_mode == "align_corners":
        output_width = scale * in_len
        return 0.0 if output_width == 1 else x * (in_len - 1) / (output_width - 1)
    assert coordinate_mode == "asymmetric"
    return x / scale


def resize_matrix(in_len, out_len, scale, mode, coordinate_mode, nearest_mode, cubic_coeff_a, exclude_outside):
    """The (out_len, in_len) matrix that resizes one axis: row o holds the weight output o
    gives each input. Nearest rounds the coordinate, linear weighs its 2 neighbours, cubic
    its 4 by Keys' kernel; exclude_outside drops the neighbours past the edge and
    renormalizes, otherwise they read the edge value."""
    matrix = np.zeros((out_len, in_len))
    for o in range(out_len):
        x = spec_coordinate(o, in_len, out_len, scale, coordinate_mode)
        if mode == "nearest":
            rounding = {
                "round_prefer_floor": math.ceil(x - 0.5),
                "round_prefer_ceil": math.floor(x + 0.5),
                "floor": math.floor(x),
                "ceil": math.ceil(x),
            }
            taps = {rounding[nearest_mode]: 1.0}
        else:
            base = math.floor(x)
            if mode == "linear":
                taps = {base: 1 - (x - base), base + 1: x - base}
            else:
                taps = {base + k: keys_cubic(x - (base + k), cubic_coeff_a) for k in (-1, 0, 1, 2)}
            if exclude_outside:
                taps = {i: w for i, w in taps.items() if 0 <= i < in_len}
                total = sum(taps.values())
                taps = {i: w / total for i, w in taps.items()}
        for i, weight in taps.items():
            matrix[o, min(max(i, 0), in_len - 1)] += weight
    return matrix


def numpy_resize(
    x, scales, mode, coordinate_mode, nearest_mode="round_prefer_floor", cubic_coeff_a=-0.75, exclude_outside=False
) -> np.ndarray:
    """ONNX Resize from the spec, in f64, one axis at a time (the N-linear and N-cubic
    resamplings are products of 1-D ones); the output lengths are floor(size * scale)."""
    y = x.astype(np.float64)
    for axis, (in_len, scale) in enumerate(zip(x.shape, scales, strict=True)):
        out_len = int(in_len * scale)
        matrix = resize_matrix(
            in_len, out_len, scale, mode, coordinate_mode, nearest_mode, cubic_coeff_a, exclude_outside
        )
        y = np.moveaxis(np.tensordot(matrix, np.moveaxis(y, axis, 0), axes=1), 0, axis)
    return y.astype(x.dtype)


# Resizes where ONNX's reference evaluator is no oracle, checked against `numpy_resize`:
# (shape, scales, dtype, graph.ResizeOp options).
RESIZE_SPEC_CASES = {
    # pytorch_half_pixel to a length of 1 samples coordinate 0 (the spec's formula);
    # ONNX's reference samples -0.5, which cubic blends with the pixel past the edge.
    **{
        f"pytorch_half_pixel-to-one-cubic-{name}": (
            (1, 2, 4, 6),
            (1.0, 1.0, 0.25, 0.5),
            f32,
            {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel", **options},
        )
        for name, options in CUBIC_OPTIONS.items()
    },
    # half_pixel_symmetric with fractional products: to find the neighbours, ONNX's
    # reference adds half its window (1 for nearest and linear, 2 for cubic) to the
    # coordinate; where that rounds a tiny fraction away (1 + 2**-52 at 7 * 0.5,
    # 2 + 2**-51 at 7 * 1.5, the latter for cubic only), it takes the neighbours of the
    # integer below with the weights of the coordinate: at 7 * 0.5, nearest and linear
    # read pixel 0 instead of 1. onnxruntime agrees with the spec.
    **{
        f"half_pixel_symmetric-{scaling}-{mode}": (
            (1, 2, 5, 7),
            scales,
            f32,
            {"mode": mode, "coordinate_transformation_mode": "half_pixel_symmetric"},
        )
        for scaling, scales in {"by-1.5-0.5": (1.0, 1.0, 1.5, 0.5), "by-0.5-1.5": (1.0, 1.0, 0.5, 1.5)}.items()
        for mode in ("nearest", "linear", "cubic")
    },
    # f64 cubic: ONNX's reference computes the cubic weights in f32 (it holds
    # cubic_coeff_a as an np.float32, and NumPy 2 keeps f32 for f32 * Python float),
    # exact only for fractions such as 0.25 (the scale-2 cases in test_resize_cubic_dtypes);
    # here they are thirds and fifths.
    **{
        f"f64-cubic-{coordinate_mode}": (
            (1, 2, 4, 6),
            (1.0, 1.0, 1.5, 0.5),
            f64,
            {"mode": "cubic", "coordinate_transformation_mode": coordinate_mode, "exclude_outside": True},
        )
        for coordinate_mode in ("half_pixel", "half_pixel_symmetric", "align_corners")
    },
}


def numpy_resize_for(x, scales, options) -> np.ndarray:
    return numpy_resize(
        x,
        scales,
        options.get("mode", "nearest"),
        options.get("coordinate_transformation_mode", "half_pixel"),
        options.get("nearest_mode", "round_prefer_floor"),
        options.get("cubic_coeff_a", -0.75),
        options.get("exclude_outside", False),
    )


@pytest.mark.parametrize("name", RESIZE_SPEC_CASES)
def test_resize_against_spec(name, rng):
    shape, scales, dtype, options = RESIZE_SPEC_CASES[name]
    x = random_array(rng, shape, dtype)
    (got,) = run_boltir(lambda v: graph.ResizeOp(v, scales, **options), {"x": x})
    assert_matches(got, numpy_resize_for(x, scales, options))


@pytest.mark.parametrize("name", RESIZE_SPEC_CASES)
def test_resize_spec_oracle_agrees_with_onnxruntime(name, rng):
    """The numpy Resize oracle is itself checked against onnxruntime (in f32) on each case
    it serves as the oracle for (align_corners only with whole output lengths, where
    onnxruntime's rounded length and the unrounded one agree)."""
    shape, scales, _, options = RESIZE_SPEC_CASES[name]
    x = random_array(rng, shape, f32)
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", **options}
    attrs["exclude_outside"] = int(attrs.get("exclude_outside", False))
    node = helper.make_node("Resize", ["x", "", "scales"], ["y0"], **attrs)
    constants = {"scales": np.array(scales, f32)}
    (expected,) = run_onnxruntime(node, {"x": x}, ["y0"], [f32], constants=constants, opset=19)
    assert_matches(numpy_resize_for(x, scales, options), expected)


@pytest.mark.parametrize("coordinate_mode", [c for c in COORDINATE_MODES if c != "pytorch_half_pixel"])
@pytest.mark.parametrize("options", CUBIC_OPTIONS)
def test_resize_cubic_to_one(options, coordinate_mode, rng):
    """Cubic down to a single output pixel along an axis (pytorch_half_pixel's case is in
    RESIZE_SPEC_CASES: ONNX's reference differs from the spec there)."""
    resize_case((1, 2, 4, 6), (1.0, 1.0, 0.25, 0.5), "cubic", coordinate_mode, **CUBIC_OPTIONS[options]).check(rng)


@pytest.mark.parametrize(
    ("dtype", "scales", "coordinate_mode"),
    [
        pytest.param(f16, (1.0, 1.0, 2.0, 1.5), "half_pixel", id="f16"),
        pytest.param(f16, (1.0, 1.0, 0.5, 1.25), "half_pixel_symmetric", id="f16-half_pixel_symmetric"),
        pytest.param(f64, (1.0, 1.0, 2.0, 0.5), "half_pixel", id="f64"),
        pytest.param(f64, (1.0, 1.0, 2.0, 4.0), "asymmetric", id="f64-asymmetric"),
    ],
)
def test_resize_cubic_dtypes(dtype, scales, coordinate_mode, rng):
    """f64 with scales whose sample fractions are exact in f32 (0.25, 0.75, 0.5): ONNX's
    reference computes cubic weights in f32 (see RESIZE_SPEC_CASES for other f64 cases)."""
    resize_case((1, 2, 4, 4), scales, "cubic", coordinate_mode, dtype=dtype, exclude_outside=True).check(rng)


# tf_crop_and_resize: (shape, roi, scales or sizes). roi holds every axis' start, then every
# axis' end, as fractions of the input (a start above the end flips the axis); positions
# that sample outside the input get extrapolation_value. From scales, the spec sizes the
# output floor(size * (end - start) * scale) and ONNX's reference floor(size * scale):
# the scale cases keep every roi extent 1, where the two agree (the test checks it).
CROP_CASES = {
    "scales-up": ((1, 2, 4, 5), (0, 0, -0.25, 0.125, 1, 1, 0.75, 1.125), {"scales": (1.0, 1.0, 2.0, 2.0)}),
    "scales-down": ((1, 2, 8, 6), (0, 0, 0.125, -0.375, 1, 1, 1.125, 0.625), {"scales": (1.0, 1.0, 0.5, 0.5)}),
    "scales-mixed": ((2, 1, 6, 4), (0, 0, 0.5, -0.25, 1, 1, 1.5, 0.75), {"scales": (1.0, 1.0, 0.5, 2.5)}),
    "sizes-up": ((1, 2, 4, 5), (0, 0, 0.2, 0.1, 1, 1, 0.8, 0.6), {"sizes": (1, 2, 7, 9)}),
    "sizes-down": ((1, 2, 9, 8), (0, 0, 0.1, 0.3, 1, 1, 0.9, 0.95), {"sizes": (1, 2, 4, 3)}),
    "sizes-extrapolate": ((1, 2, 5, 5), (0, 0, -0.4, 0.6, 1, 1, 0.9, 1.7), {"sizes": (1, 2, 6, 7)}),
    "sizes-to-one": ((1, 2, 5, 6), (0, 0, 0.2, 0.1, 1, 1, 0.6, 1.3), {"sizes": (1, 2, 1, 4)}),
    "sizes-flipped": ((1, 2, 5, 6), (0, 0, 0.9, 0.8, 1, 1, 0.1, 0.2), {"sizes": (1, 2, 4, 4)}),
    "sizes-batch": ((3, 2, 5, 6), (0.25, 0, 0.2, 0.1, 0.75, 1, 0.8, 0.9), {"sizes": (2, 2, 4, 4)}),
}
CROP_MODES = {
    "nearest": {"mode": "nearest"},
    "nearest-ceil": {"mode": "nearest", "nearest_mode": "ceil", "extrapolation_value": 10.0},
    "linear": {"mode": "linear", "extrapolation_value": -7.5},
    "cubic": {"mode": "cubic", "extrapolation_value": 0.5},
    "cubic-a-0.5-exclude": {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": True},
}


@pytest.mark.parametrize("modes", CROP_MODES)
@pytest.mark.parametrize("crop", CROP_CASES)
def test_resize_tf_crop_and_resize(crop, modes, rng):
    """ONNX's roi input is f64 here, the roi property's own type: an f32 roi would make
    the reference compute `start * (size - 1)` in f32, and nearest's ties (many cases
    land on x.5) would break on the rounding."""
    shape, roi, output = CROP_CASES[crop]
    options = {"mode": "nearest", "nearest_mode": "round_prefer_floor", **CROP_MODES[modes]}
    rank = len(shape)
    constants = {"roi": np.array(roi, f64)}
    if "scales" in output:
        scales = [float(np.float32(s)) for s in output["scales"]]
        sizes = [int(d * s) for d, s in zip(shape, scales, strict=True)]
        for axis, (d, s) in enumerate(zip(shape, scales, strict=True)):
            assert math.floor(d * (roi[axis + rank] - roi[axis]) * s) == sizes[axis]
        onnx_inputs = ["x", "roi", "scales"]
        constants["scales"] = np.array(output["scales"], f32)
    else:
        sizes = list(output["sizes"])
        scales = [o / d for o, d in zip(sizes, shape, strict=True)]
        onnx_inputs = ["x", "roi", "", "sizes"]
        constants["sizes"] = int64s(*sizes)
    attrs = {"coordinate_transformation_mode": "tf_crop_and_resize", **options}
    attrs["exclude_outside"] = int(attrs.get("exclude_outside", False))
    (got,) = check_node(
        lambda x: graph.ResizeOp(
            x, scales, sizes=sizes, coordinate_transformation_mode="tf_crop_and_resize", roi=roi, **options
        ),
        "Resize",
        {"x": random_array(rng, shape)},
        attrs=attrs,
        onnx_inputs=onnx_inputs,
        constants=constants,
        opset=19,
    )
    assert got.shape == tuple(sizes)


# ------------------------------------------------------------ squeeze, unsqueeze, gather


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((1, 3, 1, 4), (0,)), ((1, 3, 1, 4), (0, 2)), ((2, 1), (-1,)), ((1, 1, 5), (1, -3)), ((1,), (0,))],
    ids=str,
)
def test_squeeze(shape, axes, rng):
    check_node(
        lambda x: graph.SqueezeOp(x, axes),
        "Squeeze",
        {"x": random_array(rng, shape)},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(*axes)},
    )


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), (-1,)), ((3, 4), (0, 3)), ((3,), (-1, 0)), ((), (0,)), ((2, 3), (1, -2))],
    ids=str,
)
def test_unsqueeze(shape, axes, rng):
    check_node(
        lambda x: graph.UnsqueezeOp(x, axes),
        "Unsqueeze",
        {"x": random_array(rng, shape)},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(*axes)},
    )


@pytest.mark.parametrize(
    ("shape", "indices", "axis", "index_dtype"),
    [
        pytest.param((5, 3), [0, 4, 2], 0, i64, id="axis0"),
        pytest.param((5, 3), [-1, -5, 2, -2], 0, i64, id="negative"),
        pytest.param((4, 6, 2), [[1, -1], [0, -6]], 1, i64, id="axis1-2d-indices"),
        pytest.param((4, 6, 3), [-3, 0, 2], -1, i32, id="axis-1-i32"),
        pytest.param((4, 6), 3, 1, i64, id="scalar-index"),
        pytest.param((4, 6), -2, 0, i32, id="scalar-negative"),
        pytest.param((7,), -3, 0, i64, id="scalar-from-rank1"),
        pytest.param((7,), [[6, -7, 0], [1, -1, 3]], 0, i64, id="rank1-data"),
    ],
)
def test_gather(shape, indices, axis, index_dtype, rng):
    data = random_array(rng, shape)
    check_node(
        lambda d, i: graph.GatherOp(d, i, axis),
        "Gather",
        {"data": data, "indices": np.array(indices, dtype=index_dtype)},
        attrs={"axis": axis},
    )


# ------------------------------------------------------------------------- constant


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((3,), f32), ((4, 5), f32), ((2, 3), i64), ((1, 8, 3), f16), ((2, 2), np.bool_)],
    ids=str,
)
def test_constant(shape, dtype, rng, monkeypatch):
    """A constant (inline `dense` when small, a `dense_resource` weight otherwise), alone
    and combined with an input, against an ONNX initializer."""
    monkeypatch.setattr(weights, "WEIGHTS", weights.WeightStore())  # a store of this test's own
    value = random_array(rng, shape, dtype, low=-9, high=9)
    x = random_array(rng, shape, dtype, low=-9, high=9)
    op, op_type = (graph.EqualOp, "Equal") if dtype == np.bool_ else (graph.AddOp, "Add")

    def build(v):
        constant = graph.ConstantOp(weights.make_weight_attr("test_constant", value)).output
        return [constant, op(v, constant).output]

    expected = run_onnx(helper.make_node(op_type, ["x", "c"], ["y0"]), {"x": x}, ["y0"], constants={"c": value})
    got = run_boltir(build, {"x": x})
    assert_matches(got[0], value)
    assert_matches(got[1], expected[0])


# -------------------------------------------------------------- hypothesis: broadcasting

HYPOTHESIS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BINARY_ONNX = {graph.AddOp: "Add", graph.SubOp: "Sub", graph.MulOp: "Mul", graph.DivOp: "Div", graph.EqualOp: "Equal"}


@HYPOTHESIS
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
    op=st.sampled_from(sorted(BINARY_ONNX, key=lambda o: o.name)),
    dtype=st.sampled_from([f32, i32]),
    seed=st.integers(0, 2**63 - 1),
)
def test_binary_broadcast_property(shapes, op, dtype, seed):
    rng = np.random.default_rng(seed)
    a_shape, b_shape = shapes.input_shapes
    a = random_array(rng, a_shape, dtype, low=-5, high=5)
    b = random_array(rng, b_shape, dtype, low=-5, high=5, nonzero=op is graph.DivOp)
    (got,) = check_node(op, BINARY_ONNX[op], {"a": a, "b": b})
    assert got.shape == shapes.result_shape


@st.composite
def reshape_targets(draw):
    """A shape and a different shape of as many elements: the source's dims shuffled,
    runs of them multiplied together, and 1s put in."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5))
    dims = draw(st.permutations(list(shape)))
    target: list[int] = []
    for d in dims:
        if target and draw(st.booleans()):
            target[-1] *= d
        else:
            target.append(d)
    for _ in range(draw(st.integers(0, 2))):
        target.insert(draw(st.integers(0, len(target))), 1)
    return tuple(shape), tuple(target)


@HYPOTHESIS
@given(shapes=reshape_targets(), seed=st.integers(0, 2**63 - 1))
def test_reshape_property(shapes, seed):
    shape, target = shapes
    x = random_array(np.random.default_rng(seed), shape)
    (got,) = check_node(
        lambda v: graph.ReshapeOp(v, target),
        "Reshape",
        {"x": x},
        onnx_inputs=["x", "shape"],
        constants={"shape": int64s(*target)},
    )
    assert got.shape == target


@st.composite
def transposes(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=5, min_side=1, max_side=4))
    return tuple(shape), tuple(draw(st.permutations(range(len(shape)))))


@HYPOTHESIS
@given(case=transposes(), seed=st.integers(0, 2**63 - 1))
def test_transpose_property(case, seed):
    shape, perm = case
    x = random_array(np.random.default_rng(seed), shape)
    (got,) = check_node(lambda v: graph.TransposeOp(v, perm), "Transpose", {"x": x}, attrs={"perm": list(perm)})
    assert got.shape == tuple(shape[p] for p in perm)


@st.composite
def squeezes(draw):
    """A shape with some 1s and a non-empty subset of their axes, some counted from the end."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=5, min_side=1, max_side=3))
    ones = [i for i, d in enumerate(shape) if d == 1]
    if not ones:
        position = draw(st.integers(0, len(shape)))
        shape = shape[:position] + (1,) + shape[position:]
        ones = [position]
    axes = draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    axes = [a - len(shape) if draw(st.booleans()) else a for a in axes]
    return tuple(shape), tuple(axes)


@HYPOTHESIS
@given(case=squeezes(), seed=st.integers(0, 2**63 - 1))
def test_squeeze_property(case, seed):
    shape, axes = case
    x = random_array(np.random.default_rng(seed), shape)
    (got,) = check_node(
        lambda v: graph.SqueezeOp(v, axes),
        "Squeeze",
        {"x": x},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(*axes)},
    )
    dropped = {a % len(shape) for a in axes}
    assert got.shape == tuple(d for i, d in enumerate(shape) if i not in dropped)


@st.composite
def unsqueezes(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    rank = len(shape) + draw(st.integers(1, 3))
    axes = draw(st.lists(st.integers(0, rank - 1), min_size=rank - len(shape), max_size=rank - len(shape), unique=True))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    return tuple(shape), tuple(axes)


@HYPOTHESIS
@given(case=unsqueezes(), seed=st.integers(0, 2**63 - 1))
def test_unsqueeze_property(case, seed):
    shape, axes = case
    x = random_array(np.random.default_rng(seed), shape)
    (got,) = check_node(
        lambda v: graph.UnsqueezeOp(v, axes),
        "Unsqueeze",
        {"x": x},
        onnx_inputs=["x", "axes"],
        constants={"axes": int64s(*axes)},
    )
    rank = len(shape) + len(axes)
    inserted = {a % rank for a in axes}
    dims = iter(shape)
    assert got.shape == tuple(1 if i in inserted else next(dims) for i in range(rank))
