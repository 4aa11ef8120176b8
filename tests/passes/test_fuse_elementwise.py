"""fuse-elementwise: every op.unary/binary/select/cast becomes an op.elementwise with a
scalar body, chains merge into one kernel, and the module computes the same outputs on
fresh random inputs (f16 chains up to the single rounding a fused kernel does)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.dtypes import element_type_for, is_floating
from boltir.interp import run
from boltir.passes import statistics
from boltir.passes.fuse_elementwise import FuseElementwisePass
from boltir.passes.lower_graph_to_op import identity_body
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from tests.passes.equivalence import assert_equivalent, random_inputs, relative_error

PASS = FuseElementwisePass()
# NaN from sqrt/pow of negatives, overflow of clip's open bounds in f32: expected, in both modules.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
ELEMENTWISE_KINDS = (ops.UnaryOp, ops.BinaryOp, ops.SelectOp, ops.CastOp)

# ------------------------------------------------------------------------- helpers


def kernels(module: ModuleOp) -> list[ops.ElementwiseOp]:
    return [op for op in module.walk() if isinstance(op, ops.ElementwiseOp)]


def unfused(module: ModuleOp) -> list[str]:
    """The op.unary/binary/select/cast ops the pass left as they are."""
    return [op.name for op in module.walk() if isinstance(op, ELEMENTWISE_KINDS)]


def body_ops(kernel: ops.ElementwiseOp) -> list[type]:
    return [type(op) for op in kernel.body.block.ops]


def run_pass(module: ModuleOp, rng: np.random.Generator, tolerance: float = 1e-5) -> tuple[ModuleOp, statistics.PassStatistics]:
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, tolerance=tolerance)
    return after, collected


def stat(collected: statistics.PassStatistics, what: str) -> int:
    return collected.get(PASS.name, what)


def fuse(module: ModuleOp) -> ModuleOp:
    after = module.clone()
    PASS.apply(boltir.make_context(), after)
    boltir.verify_module(after)
    return after


def assert_exact(module: ModuleOp, rng: np.random.Generator, inputs: dict | None = None) -> ModuleOp:
    """The pass changes nothing, bit for bit (integer and exact-conversion cases)."""
    after = fuse(module)
    inputs = inputs if inputs is not None else random_inputs(module, rng)
    with np.errstate(all="ignore"):
        expected, got = run(module, inputs), run(after, inputs)
    for value, reference in zip(got, expected, strict=True):
        assert value.dtype == reference.dtype and value.shape == reference.shape
        np.testing.assert_array_equal(value, reference)
    return after


def single_op_module(make, *specs: tuple[tuple[int, ...], object]) -> ModuleOp:
    """@main(inputs of `specs`) returning `make(builder, *inputs)`."""
    b = ModelBuilder()
    args = [b.input(f"in{i}", shape, dtype) for i, (shape, dtype) in enumerate(specs)]
    out = make(b, *args)
    return b.finish(out if isinstance(out, list) else [out])


def unary(b: ModelBuilder, fn: str, x: SSAValue, args=()) -> SSAValue:
    return b.insert(ops.UnaryOp(fn, x, args)).output


def binary(b: ModelBuilder, fn: str, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(ops.BinaryOp(fn, x, y)).output


def cast(b: ModelBuilder, x: SSAValue, dtype) -> SSAValue:
    return b.insert(ops.CastOp(x, element_type_for(np.dtype(dtype)))).output


def select(b: ModelBuilder, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(ops.SelectOp(c, x, y)).output


# --------------------------------------------------------------- one op at a time

UNARY_CASES = [
    ("identity", (), ()),
    ("relu", (), (arith.MaximumfOp,)),
    ("clip", (-0.5, 0.75), (arith.MaximumfOp, arith.MinimumfOp)),
    ("clip", (-ops.UNBOUNDED, 6.0), (arith.MinimumfOp,)),  # relu6 without a lower bound
    ("clip", (0.0, ops.UNBOUNDED), (arith.MaximumfOp,)),
    ("gelu", (), (math_dialect.ErfOp,)),
    ("gelu_tanh", (), (math_dialect.TanhOp,)),
    ("sigmoid", (), (math_dialect.ExpOp, arith.DivfOp)),
    ("silu", (), (math_dialect.ExpOp, arith.DivfOp, arith.MulfOp)),
    ("hardswish", (), (arith.MaximumfOp, arith.MinimumfOp, arith.MulfOp)),
    ("tanh", (), (math_dialect.TanhOp,)),
    ("leaky_relu", (0.1,), (arith.CmpfOp, arith.SelectOp)),
    ("hardsigmoid", (0.2, 0.5), (arith.MaximumfOp, arith.MinimumfOp)),
    ("erf", (), (math_dialect.ErfOp,)),
    ("sqrt", (), (math_dialect.SqrtOp,)),  # NaN for negative inputs, in the same places
    ("exp", (), (math_dialect.ExpOp,)),
    ("neg", (), (arith.NegfOp,)),
    ("reciprocal", (), (arith.DivfOp,)),
]


@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize(("fn", "args", "expected_ops"), UNARY_CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_unary(rng, fn, args, expected_ops, dtype, tolerance):
    module = single_op_module(lambda b, x: unary(b, fn, x, args), ((3, 5, 7), dtype))
    after, collected = run_pass(module, rng, tolerance)
    (kernel,) = kernels(after)
    assert unfused(after) == []
    assert set(expected_ops) <= set(body_ops(kernel))
    assert not {arith.ExtFOp, arith.TruncFOp} & set(body_ops(kernel))  # f32 and f64 compute as they are
    assert stat(collected, "elementwise kernels") == 1
    assert stat(collected, "elementwise ops merged") == 0


@pytest.mark.parametrize("fn", ["relu", "gelu", "sigmoid", "leaky_relu", "exp"])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_unary_narrow_float_computes_in_f32(rng, fn, dtype):
    args = (0.1,) if fn == "leaky_relu" else ()
    module = single_op_module(lambda b, x: unary(b, fn, x, args), ((4, 9), dtype))
    after, _ = run_pass(module, rng, 1e-2)
    (kernel,) = kernels(after)
    kinds = body_ops(kernel)
    assert kinds[0] is arith.ExtFOp and kinds[-2:] == [arith.TruncFOp, ops.YieldOp]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
@pytest.mark.parametrize(("fn", "expected"), [("relu", arith.MaxSIOp), ("neg", arith.SubiOp), ("identity", None)])
def test_unary_integer(rng, fn, expected, dtype):
    module = single_op_module(lambda b, x: unary(b, fn, x), ((4, 6), dtype))
    inputs = {"in0": rng.integers(-50, 50, (4, 6)).astype(dtype)}
    after = assert_exact(module, rng, inputs)
    (kernel,) = kernels(after)
    assert expected is None or expected in body_ops(kernel)


FLOAT_BINARY = [("add", arith.AddfOp), ("sub", arith.SubfOp), ("mul", arith.MulfOp), ("div", arith.DivfOp), ("pow", math_dialect.PowFOp)]


@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize(("fn", "expected"), FLOAT_BINARY)
def test_binary_float(rng, fn, expected, dtype, tolerance):
    """Broadcasting operands: 3x1x5 with 4x5 gives 3x4x5."""
    module = single_op_module(lambda b, x, y: binary(b, fn, x, y), ((3, 1, 5), dtype), ((4, 5), dtype))
    after, collected = run_pass(module, rng, tolerance)
    (kernel,) = kernels(after)
    assert expected in body_ops(kernel)
    assert tuple(kernel.output.type.get_shape()) == (3, 4, 5)
    assert stat(collected, "elementwise kernels") == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_equal(rng, dtype):
    module = single_op_module(lambda b, x, y: binary(b, "equal", x, y), ((3, 1), dtype), ((3, 4), dtype))
    inputs = {"in0": rng.integers(0, 3, (3, 1)).astype(dtype), "in1": rng.integers(0, 3, (3, 4)).astype(dtype)}
    after = assert_exact(module, rng, inputs)
    (kernel,) = kernels(after)
    assert (arith.CmpiOp if dtype == np.int32 else arith.CmpfOp) in body_ops(kernel)
    assert kernel.output.type.element_type == element_type_for(np.bool_)


COMPARISON_PREDICATES = {  # cmpf, cmpi, cmpi on i1
    "equal": ("oeq", "eq", "eq"),
    "greater": ("ogt", "sgt", "ugt"),
    "greater_equal": ("oge", "sge", "uge"),
    "less": ("olt", "slt", "ult"),
    "less_equal": ("ole", "sle", "ule"),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8, np.bool_])
@pytest.mark.parametrize("fn", list(COMPARISON_PREDICATES))
def test_comparisons(rng, fn, dtype):
    """Exact against numpy: ties, NaN (false in every ordered comparison), negative
    integers (signed predicates) and booleans (unsigned: True > False)."""
    module = single_op_module(lambda b, x, y: binary(b, fn, x, y), ((3, 1), dtype), ((3, 4), dtype))
    if dtype == np.bool_:
        inputs = {"in0": np.array([[True], [False], [True]]), "in1": rng.random((3, 4)) < 0.5}
    else:
        inputs = {"in0": rng.integers(-2, 2, (3, 1)).astype(dtype), "in1": rng.integers(-2, 2, (3, 4)).astype(dtype)}
        if is_floating(np.dtype(dtype)):
            inputs["in0"][0, 0] = inputs["in1"][1, 2] = np.nan
    after = assert_exact(module, rng, inputs)
    (kernel,) = kernels(after)
    (compare,) = [op for op in kernel.body.block.ops if isinstance(op, arith.CmpfOp | arith.CmpiOp)]
    floating, signed, boolean = COMPARISON_PREDICATES[fn]
    table = arith.CMPF_COMPARISON_OPERATIONS if isinstance(compare, arith.CmpfOp) else arith.CMPI_COMPARISON_OPERATIONS
    expected = floating if is_floating(np.dtype(dtype)) else boolean if dtype == np.bool_ else signed
    assert table[compare.predicate.value.data] == expected
    assert kernel.output.type.element_type == element_type_for(np.bool_)


@pytest.mark.parametrize(("fn", "expected"), [("and", arith.AndIOp), ("or", arith.OrIOp), ("xor", arith.XOrIOp)])
def test_logical(rng, fn, expected):
    module = single_op_module(lambda b, x, y: binary(b, fn, x, y), ((3, 1), np.bool_), ((3, 4), np.bool_))
    after = assert_exact(module, rng)
    (kernel,) = kernels(after)
    assert body_ops(kernel) == [expected, ops.YieldOp]


def test_not(rng):
    after = assert_exact(single_op_module(lambda b, x: unary(b, "not", x), ((3, 4), np.bool_)), rng)
    (kernel,) = kernels(after)
    assert body_ops(kernel) == [arith.ConstantOp, arith.XOrIOp, ops.YieldOp]


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_comparisons_and_logic_feeding_where_through_the_default_pipeline(rng, dtype):
    """Each comparison, and, or, xor and not, each feeding a graph.where, from the graph
    level through the whole default pipeline: the same outputs as the graph module, and
    every mask computed inside fused elementwise kernels."""
    b = ModelBuilder()
    x, y = b.input("x", (2, 3, 8)), b.input("y", (8,))
    n, m = b.input("n", (3, 1), np.int64), b.input("m", (8,), np.int64)
    mask = b.input("mask", (3, 8), np.bool_)
    masks = [b.insert(op(x, y)).output for op in (graph.GreaterOp, graph.GreaterOrEqualOp, graph.LessOp, graph.LessOrEqualOp)]
    masks.append(b.insert(graph.GreaterOrEqualOp(n, m)).output)  # integer (an attention mask's row >= column)
    masks.append(b.insert(graph.AndOp(masks[0], mask)).output)
    masks.append(b.insert(graph.OrOp(masks[2], masks[4])).output)
    masks.append(b.insert(graph.XorOp(masks[1], masks[3])).output)
    masks.append(b.insert(graph.NotOp(mask)).output)
    fill = b.constant("fill", np.array(-1e4, np.float32))
    module = b.finish([b.insert(graph.WhereOp(c, x, fill)).output for c in masks])
    inputs = random_inputs(module, rng)
    for name in ("x", "y"):  # values f16 holds exactly: the f16 pipeline compares and selects exactly too
        inputs[name] = inputs[name].astype(np.float16).astype(np.float32)
    inputs["y"][:4] = inputs["x"][0, 0, :4]  # ties
    inputs["x"][1, 2, 5] = np.nan  # false in every comparison

    after = module.clone()
    run_passes(after, parse_pipeline_spec(default_pipeline(dtype=dtype), available_passes()), boltir.make_context())
    names = {op.name for op in after.walk()}
    assert not {"op.binary", "op.unary", "op.select"} & names and "op.elementwise" in names
    with np.errstate(all="ignore"):
        expected, got = run(module, inputs), run(after, inputs)
    for value, reference in zip(got, expected, strict=True):
        np.testing.assert_array_equal(value.astype(np.float32), reference)


def test_integer_comparisons_and_logic_chain_is_exact(rng):
    def make(b, n, m, c):
        ge = binary(b, "greater_equal", n, m)
        lt = binary(b, "less", n, unary(b, "neg", m))
        either = binary(b, "or", binary(b, "and", ge, unary(b, "not", c)), binary(b, "xor", lt, c))
        return select(b, either, n, m)

    module = single_op_module(make, ((3, 4), np.int32), ((4,), np.int32), ((3, 1), np.bool_))
    inputs = {"in0": rng.integers(-3, 4, (3, 4)).astype(np.int32), "in1": rng.integers(-3, 4, (4,)).astype(np.int32),
              "in2": np.array([[True], [False], [True]])}
    after = assert_exact(module, rng, inputs)
    assert len(kernels(after)) == 1


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
@pytest.mark.parametrize(
    ("fn", "expected"), [("add", arith.AddiOp), ("sub", arith.SubiOp), ("mul", arith.MuliOp), ("div", arith.DivSIOp)]
)
def test_binary_integer(rng, fn, expected, dtype):
    """Exact, wrap-around and division truncating toward zero (by zero too) included."""
    module = single_op_module(lambda b, x, y: binary(b, fn, x, y), ((5, 6), dtype), ((6,), dtype))
    inputs = {"in0": rng.integers(-100, 100, (5, 6)).astype(dtype), "in1": rng.integers(-7, 8, (6,)).astype(dtype)}
    after = assert_exact(module, rng, inputs)
    (kernel,) = kernels(after)
    assert expected in body_ops(kernel)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_select(rng, dtype):
    module = single_op_module(lambda b, c, x, y: select(b, c, x, y), ((4, 1), np.bool_), ((4, 6), dtype), ((6,), dtype))
    after = assert_exact(module, rng)
    (kernel,) = kernels(after)
    assert arith.SelectOp in body_ops(kernel)


CASTS = [
    (np.float32, np.float16, [arith.TruncFOp]),
    (np.float16, np.float32, [arith.ExtFOp]),
    (np.float32, ml_dtypes.bfloat16, [arith.TruncFOp]),
    (ml_dtypes.bfloat16, np.float32, [arith.ExtFOp]),
    (np.float64, np.float32, [arith.TruncFOp]),
    (np.float32, np.float64, [arith.ExtFOp]),
    (np.int32, np.float32, [arith.SIToFPOp]),
    (np.int32, np.float16, [arith.SIToFPOp]),
    (np.int32, ml_dtypes.bfloat16, [arith.SIToFPOp]),
    (np.float64, np.float16, [arith.TruncFOp]),
    (np.float16, ml_dtypes.bfloat16, [arith.ExtFOp, arith.TruncFOp]),  # through f32: same width
    (ml_dtypes.bfloat16, np.float16, [arith.ExtFOp, arith.TruncFOp]),
    (np.float32, np.int32, [arith.FPToSIOp]),
    (np.float16, np.int64, [arith.FPToSIOp]),
    (np.float32, np.bool_, [arith.CmpfOp]),
    (np.bool_, np.float32, [arith.SelectOp]),
    (np.int32, np.int64, [arith.ExtSIOp]),
    (np.int64, np.int8, [arith.TruncIOp]),
    (np.int32, np.bool_, [arith.CmpiOp]),
    (np.bool_, np.int32, [arith.SelectOp]),
]


@pytest.mark.parametrize(("source", "target", "expected"), CASTS, ids=lambda v: getattr(v, "__name__", None))
def test_cast(rng, source, target, expected):
    """One conversion is exact: the same rounding (to nearest even, toward zero for integers)."""
    module = single_op_module(lambda b, x: cast(b, x, target), ((5, 7), source))
    if np.dtype(source) == np.bool_:
        values = rng.random((5, 7)) < 0.5
    elif np.dtype(source).kind == "i":
        values = rng.integers(-100, 100, (5, 7))
    else:
        values = rng.standard_normal((5, 7)) * 20
        values[0, :3] = 0.0  # exact zeros: false for i1
    after = assert_exact(module, rng, {"in0": values.astype(source)})
    (kernel,) = kernels(after)
    assert [k for k in body_ops(kernel) if k is not arith.ConstantOp][:-1] == expected


@pytest.mark.parametrize(
    ("source", "target", "values"),
    [
        # Just above a tie of the target; through f32 the tail goes, the tie rounds to even.
        (np.float64, np.float16, [1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 3 + 2**-9 + 2**-50]),
        (np.float64, ml_dtypes.bfloat16, [1 + 2**-8 + 2**-40, 2**100 * (1 + 2**-8 + 2**-40)]),
        (np.int32, ml_dtypes.bfloat16, [2**24 + 2**16 + 1, -(2**30 + 2**22 + 1)]),
        (np.int64, ml_dtypes.bfloat16, [2**40 + 2**32 + 1, 2**60 + 2**52 + 1]),
    ],
    ids=["f64-f16", "f64-bf16", "i32-bf16", "i64-bf16"],
)
def test_cast_rounds_once(rng, source, target, values):
    """A cast is one conversion: f64 -> f16 or i32 -> bf16 through f32 would round twice."""
    module = single_op_module(lambda b, x: cast(b, x, target), ((len(values),), source))
    after = assert_exact(module, rng, {"in0": np.array(values, dtype=source)})
    (kernel,) = kernels(after)
    assert len([k for k in body_ops(kernel) if k is not arith.ConstantOp]) == 2  # the conversion, the yield


# ------------------------------------------------------------------------- chains


def test_chain_merges_with_broadcasting_and_shared_inputs(rng):
    """((x * y + z) |> gelu) - x, then a select against x: x is passed once, y (per
    column) and z (per row) broadcast inside the kernel, one kernel remains."""

    def make(b, x, y, z, c):
        v = binary(b, "mul", x, y)
        v = binary(b, "add", v, z)
        v = unary(b, "gelu", v)
        v = binary(b, "sub", v, x)
        return select(b, c, v, x)

    module = single_op_module(make, ((2, 4, 8), np.float32), ((8,), np.float32), ((4, 1), np.float32), ((2, 1, 1), np.bool_))
    after, collected = run_pass(module, rng)
    (kernel,) = kernels(after)
    assert unfused(after) == []
    entry_args = list(after.body.block.first_op.body.block.args)
    assert list(kernel.inputs) == [entry_args[3], entry_args[0], entry_args[1], entry_args[2]]  # c, x, y, z, once each
    assert len(kernel.body.block.args) == 4
    assert stat(collected, "elementwise ops merged") == 4
    assert stat(collected, "elementwise kernels") == 1


def test_value_used_twice_by_one_user_merges(rng):
    """exp(x) * exp(x) from one exp: its only user is the mul, so it merges."""
    module = single_op_module(lambda b, x: (lambda e: binary(b, "mul", e, e))(unary(b, "exp", x)), ((3, 4), np.float32))
    after, collected = run_pass(module, rng)
    (kernel,) = kernels(after)
    assert len(kernel.inputs) == 1
    assert body_ops(kernel).count(math_dialect.ExpOp) == 1
    assert stat(collected, "elementwise ops merged") == 1


def test_intermediate_with_two_users_stops_the_merge(rng):
    """t = tanh(x) feeds two chains: t stays its own kernel; each chain fuses behind it."""

    def make(b, x, y):
        t = unary(b, "tanh", x)
        left = unary(b, "relu", binary(b, "add", t, y))
        right = binary(b, "mul", unary(b, "sigmoid", t), y)
        return [left, right]

    module = single_op_module(make, ((4, 5), np.float32), ((5,), np.float32))
    after, collected = run_pass(module, rng)
    found = kernels(after)
    assert len(found) == 3
    tanh = next(k for k in found if math_dialect.TanhOp in body_ops(k))
    assert len(list(tanh.output.uses)) == 2
    assert all(tanh.output in k.inputs for k in found if k is not tanh)
    assert stat(collected, "elementwise ops merged") == 2
    assert stat(collected, "elementwise kernels") == 3


def test_returned_intermediate_stops_the_merge(rng):
    def make(b, x):
        t = unary(b, "exp", x)
        return [t, unary(b, "neg", t)]

    after, collected = run_pass(single_op_module(make, ((6,), np.float32)), rng)
    assert len(kernels(after)) == 2
    assert stat(collected, "elementwise ops merged") == 0


def test_non_elementwise_op_between_stops_the_merge(rng):
    def make(b, x):
        t = unary(b, "exp", x)
        r = b.insert(ops.ReshapeOp(t, (4, 3))).output
        return unary(b, "neg", r)

    after, collected = run_pass(single_op_module(make, ((3, 4), np.float32)), rng)
    assert len(kernels(after)) == 2
    assert stat(collected, "elementwise kernels") == 2


def test_existing_elementwise_kernels_merge(rng):
    """An op.elementwise made before the pass (lowering's broadcast) merges like any other."""

    def make(b, x):
        expanded = b.insert(ops.ElementwiseOp([x], identity_body(x.type.element_type), TensorType(x.type.element_type, (3, 4)))).output
        return unary(b, "relu", expanded)

    after, collected = run_pass(single_op_module(make, ((1, 4), np.float32)), rng)
    (kernel,) = kernels(after)
    assert tuple(kernel.inputs[0].type.get_shape()) == (1, 4)
    assert stat(collected, "elementwise ops merged") == 1


def f16_chain(b, x, y, z):
    v = unary(b, "gelu", x)
    v = binary(b, "mul", v, y)
    v = binary(b, "add", v, z)
    v = unary(b, "sigmoid", v)
    v = unary(b, "hardswish", binary(b, "mul", v, x))
    return unary(b, "leaky_relu", binary(b, "sub", v, z), (0.2,))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_narrow_float_chain_rounds_once(rng, dtype):
    """The fused kernel computes the whole chain in f32 and rounds once; compared with
    the unfused module in the same type, which rounds after every op."""
    module = single_op_module(f16_chain, ((4, 16), dtype), ((16,), dtype), ((4, 1), dtype))
    after, collected = run_pass(module, rng, 1e-2 if dtype == np.float16 else 5e-2)
    (kernel,) = kernels(after)
    kinds = body_ops(kernel)
    assert kinds.count(arith.TruncFOp) == 1 and kinds[-2] is arith.TruncFOp
    # Each input is widened where it is read; no value is rounded and widened back.
    extended = [op.input for op in kernel.body.block.ops if isinstance(op, arith.ExtFOp)]
    assert set(extended) == set(kernel.body.block.args)
    assert stat(collected, "elementwise ops merged") == 7
    assert stat(collected, "elementwise kernels") == 1


def test_extf_of_truncf_is_skipped(rng):
    """cast f32 -> f16 -> f32 in one kernel: the round trip goes, so the kernel is the
    identity; the unfused module keeps f16 precision."""
    module = single_op_module(lambda b, x: unary(b, "relu", cast(b, cast(b, x, np.float16), np.float32)), ((8, 8), np.float32))
    after, _ = run_pass(module, rng, 1e-2)
    (kernel,) = kernels(after)
    assert body_ops(kernel) == [arith.ConstantOp, arith.MaximumfOp, ops.YieldOp]
    x = rng.standard_normal((8, 8)).astype(np.float32)
    np.testing.assert_array_equal(run(after, {"in0": x})[0], np.maximum(x, 0))


def test_truncf_still_used_stays(rng):
    """f16 -> f32 of a rounded value that is also an output in f16: both kept."""

    def make(b, x):
        h = cast(b, unary(b, "exp", x), np.float16)
        return [h, cast(b, h, np.float32)]

    after, _ = run_pass(single_op_module(make, ((5,), np.float32)), rng, 1e-2)
    assert len(kernels(after)) == 2


def test_integer_chain_is_exact(rng):
    def make(b, n, m):
        v = binary(b, "mul", n, m)
        v = binary(b, "sub", v, unary(b, "neg", m))
        v = unary(b, "relu", binary(b, "div", v, n))
        flags = binary(b, "equal", v, m)
        return select(b, flags, v, cast(b, cast(b, m, np.int64), np.int32))

    module = single_op_module(make, ((3, 4), np.int32), ((4,), np.int32))
    inputs = {"in0": rng.integers(-9, 10, (3, 4)).astype(np.int32), "in1": rng.integers(-9, 10, (4,)).astype(np.int32)}
    with statistics.collecting() as collected:
        after = assert_exact(module, rng, inputs)
    assert len(kernels(after)) == 1
    assert stat(collected, "elementwise kernels") == 1


def test_mixed_types_through_casts(rng):
    """int -> float, bool -> float, float -> bool and back, in one kernel."""

    def make(b, x, n, c):
        v = binary(b, "mul", x, cast(b, n, np.float32))
        v = binary(b, "add", v, cast(b, c, np.float32))
        keep = cast(b, unary(b, "relu", v), np.bool_)
        return select(b, keep, v, cast(b, cast(b, x, np.float16), np.float32))

    module = single_op_module(make, ((3, 4), np.float32), ((4,), np.int32), ((3, 1), np.bool_))
    after, _ = run_pass(module, rng, 1e-2)
    assert len(kernels(after)) == 1


def test_left_alone(rng):
    """Integer pow and casts to or from 8-bit floats stay, and are counted; the ops
    around them still fuse."""

    def make(b, n, x):
        p = binary(b, "pow", unary(b, "relu", n), n)
        e = unary(b, "exp", x)
        f8 = cast(b, e, ml_dtypes.float8_e4m3fn)
        back = cast(b, f8, np.float32)
        return [p, unary(b, "neg", back)]

    module = single_op_module(make, ((3, 4), np.int32), ((3, 4), np.float32))
    after, collected = run_pass(module, rng, 0.1)
    assert sorted(unfused(after)) == ["op.binary", "op.cast", "op.cast"]
    assert len(kernels(after)) == 3  # relu, exp, neg
    assert stat(collected, "op.binary left as it is (types a body cannot hold)") == 1
    assert stat(collected, "op.cast left as it is (types a body cannot hold)") == 2
    assert stat(collected, "elementwise kernels") == 3


def test_nothing_to_do_records_nothing(rng):
    module = single_op_module(lambda b, x: b.insert(ops.SoftmaxOp(x, -1)).output, ((2, 3), np.float32))
    after, collected = run_pass(module, rng)
    assert kernels(after) == []
    assert PASS.name not in collected.counters


# --------------------------------------------------- random chains (hypothesis)

FLOAT_UNARY = [
    ("relu", ()), ("clip", (-0.5, 1.5)), ("gelu", ()), ("gelu_tanh", ()), ("sigmoid", ()), ("silu", ()),
    ("hardswish", ()), ("tanh", ()), ("leaky_relu", (0.1,)), ("hardsigmoid", (0.2, 0.5)), ("erf", ()),
    ("neg", ()), ("identity", ()),
]
INPUTS = [  # name, shape, dtype, pool
    ("x", (2, 3, 4), np.float32, "float"),
    ("y", (3, 1), np.float32, "float"),
    ("z", (4,), np.float32, "float"),
    ("h", (1, 3, 4), np.float16, "half"),  # read through a cast to f32
    ("n", (3, 4), np.int32, "int"),
    ("c", (2, 1, 4), np.bool_, "bool"),
]

step = st.tuples(st.sampled_from(["unary", "binary", "select", "int", "cast"]), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))


def recent(pool: list[SSAValue], pick: int) -> SSAValue:
    """The pool's last value two times in three (chains), else any."""
    return pool[-1] if pick % 3 else pool[pick // 3 % len(pool)]


def build_random(steps, outputs) -> ModuleOp:
    """A module from drawn steps: each step picks its operands among the values so far."""
    b = ModelBuilder()
    pools: dict[str, list[SSAValue]] = {"float": [], "half": [], "int": [], "bool": []}
    for name, shape, dtype, pool in INPUTS:
        pools[pool].append(b.input(name, shape, dtype))
    made: list[SSAValue] = []
    for kind, i, j, k in steps:
        floats = pools["float"]
        if kind == "unary":
            fn, args = FLOAT_UNARY[i % len(FLOAT_UNARY)]
            value = unary(b, fn, recent(floats, j), args)
        elif kind == "binary":
            value = binary(b, ("add", "sub", "mul")[i % 3], recent(floats, j), floats[k % len(floats)])
        elif kind == "select":
            conditions = pools["bool"]
            value = select(b, recent(conditions, i), recent(floats, j), floats[k % len(floats)])
        elif kind == "int":
            ints = pools["int"]
            if i % 3 == 0:
                pools["bool"].append(binary(b, "equal", recent(ints, j), ints[k % len(ints)]))
                made.append(pools["bool"][-1])
                continue
            value = (
                binary(b, ("add", "sub", "mul")[j % 3], recent(ints, j), ints[k % len(ints)])
                if i % 3 == 1
                else unary(b, ("relu", "neg")[j % 2], recent(ints, k))
            )
            pools["int"].append(value)
            made.append(value)
            continue
        else:  # casts into the float pool (exact ones), or a float output rounded to f16
            choice = i % 4
            if choice == 3:
                made.append(cast(b, recent(floats, j), np.float16))
                continue
            source = pools[("int", "bool", "half")[choice]]
            value = cast(b, recent(source, j), np.float32)
        floats.append(value)
        made.append(value)
    results = [made[-1]] + [made[o % len(made)] for o in outputs]
    return b.finish(list(dict.fromkeys(results)))


@settings(max_examples=120, deadline=None)
@given(steps=st.lists(step, min_size=2, max_size=8), outputs=st.lists(st.integers(0, 10**6), max_size=2), seed=st.integers(0, 2**32 - 1))
def test_random_chains(steps, outputs, seed):
    module = build_random(steps, outputs)
    boltir.verify_module(module)
    rng = np.random.default_rng(seed)
    with statistics.collecting() as collected:
        after = fuse(module)
    assert unfused(after) == []
    found = kernels(after)
    assert stat(collected, "elementwise kernels") == len(found)
    # Merged as far as it goes: no kernel feeds a kernel that is its only user.
    for kernel in found:
        users = {use.operation for use in kernel.output.uses}
        assert not (len(users) == 1 and isinstance(next(iter(users)), ops.ElementwiseOp)), "a chain was left unmerged"
    inputs = random_inputs(module, rng)
    with np.errstate(all="ignore"):
        expected, got = run(module, inputs), run(after, inputs)
    for value, reference in zip(got, expected, strict=True):
        assert value.dtype == reference.dtype and value.shape == reference.shape
        if value.dtype.kind in "biu":
            np.testing.assert_array_equal(value, reference)
        else:  # the same f32 operations, up to the last bits of each function
            assert relative_error(value, reference) < (1e-5 if value.dtype == np.float32 else 1e-2)
