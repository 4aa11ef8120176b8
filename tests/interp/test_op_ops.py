"""Every `op` op in the interpreter, on fresh random inputs, against an independent
computation: the `graph` op it stands for (itself checked against ONNX's reference
evaluator) with the layout changes done by explicit numpy transposes, two separate ops
for a back-to-back one, or a numpy formula written out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from graph_oracle import assert_matches, random_array, run_boltir
from xdsl.dialects.builtin import Float16Type, Float32Type, TensorType

import boltir
from boltir import interp
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.dtypes import element_type_for
from boltir.weights import make_weight_attr

f16, f32, f64 = np.float16, np.float32, np.float64
i32, i64 = np.int32, np.int64

NHWC_TO_NCHW = (0, 3, 1, 2)
NCHW_TO_NHWC = (0, 2, 3, 1)


def nchw(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, NHWC_TO_NCHW))


def nhwc(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, NCHW_TO_NHWC))


def run_one(build: Callable, **inputs: np.ndarray) -> np.ndarray:
    """`build(*arguments)` as the only op of `@main`, run on `inputs` (in order)."""
    (result,) = run_boltir(build, inputs)
    return result


def run_text(text: str, **inputs: np.ndarray) -> list[np.ndarray]:
    """Parses (and verifies) a module and runs its `@main`."""
    return interp.run(boltir.parse_module(text), {f"arg{i}": value for i, value in enumerate(inputs.values())})


# ----------------------------------------------------------- independent activations

ERF = np.vectorize(math.erf, otypes=[np.float64])

ACTIVATIONS: dict[str, Callable] = {
    "none": lambda x: x,
    "identity": lambda x: x,
    "relu": lambda x: np.maximum(x, 0.0),
    "clip": lambda x, low, high: np.minimum(np.maximum(x, low), high),
    "gelu": lambda x: 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0))),
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "hardswish": lambda x: x * np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0,
    "tanh": np.tanh,
    "leaky_relu": lambda x, alpha: np.where(x > 0, x, alpha * x),
    "hardsigmoid": lambda x, alpha, beta: np.minimum(np.maximum(alpha * x + beta, 0.0), 1.0),
    "erf": lambda x: ERF(x),
    "sqrt": np.sqrt,
    "exp": np.exp,
    "neg": np.negative,
    "reciprocal": lambda x: 1.0 / x,
}
"""Written from the definitions, in f64: not the interpreter's code."""

ACTIVATION_ARGS: dict[str, tuple[float, ...]] = {"clip": (-0.5, 1.5), "leaky_relu": (0.125,), "hardsigmoid": (0.25, 0.375)}


def activate(kind: str, x: np.ndarray) -> np.ndarray:
    return ACTIVATIONS[kind](x, *ACTIVATION_ARGS.get(kind, ()))


def activation(kind: str) -> ops.Activation:
    return ops.Activation(kind, ACTIVATION_ARGS.get(kind, ()))


# ------------------------------------------------------------------------------ conv


def naive_conv_nhwc(x: np.ndarray, w: np.ndarray, strides, pads, dilations, groups: int) -> np.ndarray:
    """A direct, loop-by-loop NHWC/OHWI convolution in f64."""
    n, h, wd, c = x.shape
    k, kh, kw, cg = w.shape
    xp = np.zeros((n, h + pads[0] + pads[2], wd + pads[1] + pads[3], c))
    xp[:, pads[0] : pads[0] + h, pads[1] : pads[1] + wd, :] = x
    oh = (h + pads[0] + pads[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.zeros((n, oh, ow, k))
    per_group = k // groups
    for b in range(n):
        for y in range(oh):
            for z in range(ow):
                for o in range(k):
                    g = o // per_group
                    total = 0.0
                    for i in range(kh):
                        for j in range(kw):
                            pixel = xp[b, y * strides[0] + i * dilations[0], z * strides[1] + j * dilations[1]]
                            total += float(np.dot(pixel[g * cg : (g + 1) * cg], w[o, i, j]))
                    out[b, y, z, o] = total
    return out


def test_conv2d_nhwc_against_loops(rng):
    x = random_array(rng, (2, 5, 6, 4))
    w = random_array(rng, (6, 3, 2, 2))  # OHWI, 2 groups of 2 input channels
    window = dict(strides=(2, 1), pads=(1, 0, 1, 1), dilations=(1, 2), groups=2)
    got = run_one(lambda x, w: ops.Conv2dOp(x, w, **window), x=x, w=w)
    expected = naive_conv_nhwc(x.astype(f64), w.astype(f64), window["strides"], window["pads"], window["dilations"], 2)
    assert_matches(got, expected.astype(f32))


CONV_WINDOWS = {
    "plain": dict(cin=3, cout=5, k=(3, 3)),
    "strided-padded": dict(cin=4, cout=6, k=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
    "asymmetric": dict(cin=3, cout=4, k=(3, 2), strides=(1, 2), pads=(0, 1, 2, 0), dilations=(2, 1)),
    "grouped": dict(cin=6, cout=9, k=(3, 3), pads=(1, 1, 1, 1), groups=3),
    "depthwise": dict(cin=8, cout=8, k=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1), groups=8),
    "pointwise": dict(cin=8, cout=4, k=(1, 1)),
}


def conv_case(rng, cin, cout, k, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), groups=1):
    x = random_array(rng, (2, cin, 9, 8))  # NCHW
    w = random_array(rng, (cout, cin // groups, *k))  # OIHW
    window = dict(strides=strides, pads=pads, dilations=dilations)
    reference = run_one(lambda x, w: graph.Conv2dOp(x, w, group=groups, **window), x=x, w=w)
    return x, w, dict(groups=groups, **window), reference


@pytest.mark.parametrize("case", list(CONV_WINDOWS.values()), ids=list(CONV_WINDOWS))
def test_conv2d_nhwc_ohwi(case, rng):
    """NHWC / OHWI against graph.conv2d in NCHW / OIHW, the data transposed by numpy."""
    x, w, window, reference = conv_case(rng, **case)
    got = run_one(lambda x, w: ops.Conv2dOp(x, w, **window), x=nhwc(x), w=nhwc(w))
    assert_matches(nchw(got), reference)


@pytest.mark.parametrize("case", list(CONV_WINDOWS.values()), ids=list(CONV_WINDOWS))
def test_conv2d_nchw_oihw(case, rng):
    x, w, window, reference = conv_case(rng, **case)
    got = run_one(lambda x, w: ops.Conv2dOp(x, w, layout="NCHW", **window), x=x, w=w)
    assert_matches(got, reference)


@pytest.mark.parametrize(("layout", "filter_layout"), [("NHWC", "OIHW"), ("NCHW", "OHWI")])
def test_conv2d_mixed_layouts(layout, filter_layout, rng):
    x, w, window, reference = conv_case(rng, **CONV_WINDOWS["grouped"])
    x_in = nhwc(x) if layout == "NHWC" else x
    w_in = nhwc(w) if filter_layout == "OHWI" else w
    got = run_one(lambda x, w: ops.Conv2dOp(x, w, layout=layout, filter_layout=filter_layout, **window), x=x_in, w=w_in)
    assert_matches(nchw(got) if layout == "NHWC" else got, reference)


def test_conv2d_f16(rng):
    x, w, window, _ = conv_case(rng, **CONV_WINDOWS["strided-padded"])
    x, w = x.astype(f16), w.astype(f16)
    reference = run_one(lambda x, w: graph.Conv2dOp(x, w, strides=(2, 2), pads=(1, 1, 1, 1)), x=x, w=w)
    got = run_one(lambda x, w: ops.Conv2dOp(x, w, **window), x=nhwc(x), w=nhwc(w))
    assert_matches(nchw(got), reference)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_conv2d_epilogue(layout, rng):
    """bias (per output channel, wherever the layout puts it), an activation, a residual
    and a second activation, against graph.conv2d and a numpy formula."""
    x, w, window, reference = conv_case(rng, **CONV_WINDOWS["strided-padded"])
    bias = random_array(rng, (6,))
    residual = random_array(rng, reference.shape)  # NCHW
    epilogue = ops.EpilogueAttr.make(
        alpha=0.75, beta=-1.5, bias=True, activation=activation("hardswish"), residual="mul",
        activation2=activation("leaky_relu"),
    )
    to_layout = nhwc if layout == "NHWC" else (lambda a: a)
    got = run_one(
        lambda x, w, b, r: ops.Conv2dOp(x, w, bias=b, residual=r, layout=layout, epilogue=epilogue, **window),
        x=to_layout(x), w=nhwc(w) if layout == "NHWC" else w, b=bias, r=to_layout(residual),
    )
    acc = reference.astype(f64)
    expected = activate("leaky_relu", activate("hardswish", 0.75 * acc - 1.5 * bias.reshape(1, -1, 1, 1)) * residual)
    assert_matches(nchw(got) if layout == "NHWC" else got, expected.astype(f32))


TRANSPOSED_WINDOWS = {
    "stride2": dict(cin=4, cout=3, k=(2, 2), strides=(2, 2)),
    "padded-output-padding": dict(cin=3, cout=5, k=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1), output_padding=(1, 1)),
    "grouped-dilated": dict(cin=6, cout=4, k=(3, 2), strides=(1, 2), pads=(0, 1, 1, 0), dilations=(2, 1), groups=2),
}


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", list(TRANSPOSED_WINDOWS.values()), ids=list(TRANSPOSED_WINDOWS))
def test_conv_transpose2d(case, layout, rng):
    """NHWC / IHWO and NCHW / IOHW against graph.conv_transpose2d in NCHW / IOHW, with a
    bias + relu epilogue."""
    case = dict(case)
    cin, cout, k, groups = case.pop("cin"), case.pop("cout"), case.pop("k"), case.pop("groups", 1)
    x = random_array(rng, (2, cin, 5, 4))
    w = random_array(rng, (cin, cout // groups, *k))  # IOHW
    bias = random_array(rng, (cout,))
    reference = run_one(lambda x, w, b: graph.ConvTranspose2dOp(x, w, b, group=groups, **case), x=x, w=w, b=bias)
    epilogue = ops.EpilogueAttr.make(bias=True, activation=activation("relu"))
    if layout == "NHWC":
        got = nchw(
            run_one(lambda x, w, b: ops.ConvTranspose2dOp(x, w, bias=b, groups=groups, epilogue=epilogue, **case), x=nhwc(x), w=nhwc(w), b=bias)
        )
    else:
        got = run_one(
            lambda x, w, b: ops.ConvTranspose2dOp(x, w, bias=b, layout="NCHW", groups=groups, epilogue=epilogue, **case), x=x, w=w, b=bias
        )
    assert_matches(got, np.maximum(reference, 0))


# ------------------------------------------------------------------------------ GEMM


@pytest.mark.parametrize(
    ("a_batch", "b_batch"), [((), ()), ((3,), ()), ((), (2,)), ((2, 3), (3,)), ((4, 1), (1, 2))], ids=str
)
def test_gemm_layouts_and_batching(a_batch, b_batch, rng):
    """Every combination of row / col A and B, against numpy.matmul of the row-major
    matrices (the batch dimensions broadcast)."""
    m, n, k = 5, 7, 6
    for layout_a in ("row", "col"):
        for layout_b in ("row", "col"):
            a = random_array(rng, (*a_batch, *((m, k) if layout_a == "row" else (k, m))))
            b = random_array(rng, (*b_batch, *((k, n) if layout_b == "row" else (n, k))))
            got = run_one(lambda a, b: ops.GemmOp(a, b, layout_a=layout_a, layout_b=layout_b), a=a, b=b)
            a_rows = a if layout_a == "row" else np.swapaxes(a, -1, -2)
            b_rows = b if layout_b == "row" else np.swapaxes(b, -1, -2)
            expected = np.matmul(a_rows.astype(f64), b_rows.astype(f64))
            assert got.shape == (*np.broadcast_shapes(a_batch, b_batch), m, n)
            assert_matches(got, expected.astype(f32), what=f"A {layout_a}, B {layout_b}: ")


def test_gemm_f16_rounds_once(rng):
    """f16 operands accumulate in f32 and round once, to the nearest f16."""
    a, b = random_array(rng, (8, 64), f16), random_array(rng, (64, 4), f16)
    got = run_one(lambda a, b: ops.GemmOp(a, b), a=a, b=b)
    expected = (a.astype(f64) @ b.astype(f64)).astype(f16)
    assert got.dtype == f16
    np.testing.assert_allclose(got.astype(f64), expected.astype(f64), rtol=2e-3, atol=2e-3)


def test_gemm_integer(rng):
    a, b = random_array(rng, (3, 4), i32, low=-5, high=5), random_array(rng, (4, 2), i32, low=-5, high=5)
    assert_matches(run_one(lambda a, b: ops.GemmOp(a, b), a=a, b=b), a @ b)


EPILOGUE_STRUCTURES = {
    "acc": dict(),
    "alpha": dict(alpha=-0.5),
    "bias": dict(bias=True),
    "alpha-beta-bias": dict(alpha=1.5, beta=-2.0, bias=True),
    "residual-add": dict(residual="add"),
    "bias-residual-mul": dict(bias=True, residual="mul"),
    "residual-add-then-relu": dict(residual="add", activation2="relu"),
    "everything": dict(alpha=0.25, beta=3.0, bias=True, residual="mul", activation2="sigmoid"),
    "then-clip": dict(bias=True, residual="add", activation2="clip"),
}
ALL_ACTIVATIONS = [kind for kind in ops.ACTIVATION_ARITY]


@pytest.mark.parametrize("structure", list(EPILOGUE_STRUCTURES.values()), ids=list(EPILOGUE_STRUCTURES))
def test_gemm_epilogue(structure, rng):
    """`act2(act(alpha * acc + beta * bias) (+|*) residual)` against a numpy formula, with
    every activation as `act`."""
    alpha, beta = structure.get("alpha", 1.0), structure.get("beta", 1.0)
    with_bias, residual_kind = structure.get("bias", False), structure.get("residual", "none")
    second = structure.get("activation2", "none")
    m, n, k = 4, 6, 5
    for kind in ALL_ACTIVATIONS:
        epilogue = ops.EpilogueAttr.make(
            alpha=alpha, beta=beta, bias=with_bias, activation=activation(kind), residual=residual_kind,
            activation2=activation(second),
        )
        inputs = {"a": random_array(rng, (2, m, k)), "b": random_array(rng, (n, k))}
        if with_bias:
            inputs["bias"] = random_array(rng, (n,))
        if residual_kind != "none":
            inputs["residual"] = random_array(rng, (2, m, n))

        def build(a, b, *rest):
            rest = list(rest)
            bias = rest.pop(0) if with_bias else None
            residual = rest.pop(0) if residual_kind != "none" else None
            return ops.GemmOp(a, b, bias=bias, residual=residual, layout_b="col", epilogue=epilogue)

        got = run_one(build, **inputs)
        out = alpha * np.matmul(inputs["a"].astype(f64), inputs["b"].astype(f64).T)
        if with_bias:
            out = out + beta * inputs["bias"].astype(f64)
        out = activate(kind, out)
        if residual_kind == "add":
            out = out + inputs["residual"]
        elif residual_kind == "mul":
            out = out * inputs["residual"]
        assert_matches(got, activate(second, out).astype(f32), what=f"{epilogue}: ")


# ------------------------------------------------------------------- back-to-back


def test_b2b_gemm_against_two_gemms(rng):
    """In f16 the intermediate rounds to f16 in both, so they agree bit for bit."""
    x = random_array(rng, (2, 5, 8), f16)
    w0, c0 = random_array(rng, (12, 8), f16), random_array(rng, (12,), f16)
    w1, c1 = random_array(rng, (12, 6), f16), random_array(rng, (6,), f16)
    e0 = ops.EpilogueAttr.make(alpha=0.5, bias=True, activation=activation("gelu"))
    e1 = ops.EpilogueAttr.make(bias=True, activation=activation("clip"))

    def fused(x, w0, c0, w1, c1):
        out_type = TensorType(Float16Type(), (2, 5, 6))
        return ops.B2bGemmOp(x, w0, w1, bias0=c0, bias1=c1, layout_b0="col", epilogue0=e0, epilogue1=e1, result_type=out_type)

    def separate(x, w0, c0, w1, c1):
        first = ops.GemmOp(x, w0, bias=c0, layout_b="col", epilogue=e0)
        return ops.GemmOp(first.output, w1, bias=c1, epilogue=e1)

    inputs = dict(x=x, w0=w0, c0=c0, w1=w1, c1=c1)
    got, expected = run_one(fused, **inputs), run_one(separate, **inputs)
    assert got.dtype == f16
    np.testing.assert_array_equal(got, expected)


def test_b2b_gemm_col_a_and_no_bias(rng):
    at = random_array(rng, (8, 4))  # K x M
    w0, w1 = random_array(rng, (8, 16)), random_array(rng, (5, 16))
    e0 = ops.EpilogueAttr.make(activation=activation("relu"))
    got = run_one(
        lambda a, w0, w1: ops.B2bGemmOp(
            a, w0, w1, layout_a="col", layout_b1="col", epilogue0=e0, epilogue1=ops.IDENTITY_EPILOGUE,
            result_type=TensorType(Float32Type(), (4, 5)),
        ),
        a=at, w0=w0, w1=w1,
    )
    expected = np.maximum(at.T.astype(f64) @ w0, 0) @ w1.T.astype(f64)
    assert_matches(got, expected.astype(f32))


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_b2b_conv2d_against_two_convs(layout, rng):
    filters = "OHWI" if layout == "NHWC" else "OIHW"
    x = random_array(rng, (2, 9, 9, 4) if layout == "NHWC" else (2, 4, 9, 9))
    w0 = random_array(rng, (8, 3, 3, 4) if layout == "NHWC" else (8, 4, 3, 3))
    w1 = random_array(rng, (6, 1, 1, 8) if layout == "NHWC" else (6, 8, 1, 1))
    c0, c1 = random_array(rng, (8,)), random_array(rng, (6,))
    window = dict(strides=(2, 2), pads=(1, 1, 1, 1), dilations=(1, 1))
    e0 = ops.EpilogueAttr.make(bias=True, activation=activation("relu"))
    e1 = ops.EpilogueAttr.make(bias=True, activation=activation("sigmoid"))

    def separate(x, w0, c0, w1, c1):
        first = ops.Conv2dOp(x, w0, bias=c0, layout=layout, epilogue=e0, **window)
        return ops.Conv2dOp(first.output, w1, bias=c1, layout=layout, epilogue=e1)

    inputs = dict(x=x, w0=w0, c0=c0, w1=w1, c1=c1)
    expected = run_one(separate, **inputs)

    def fused(x, w0, c0, w1, c1):
        result_type = TensorType(Float32Type(), expected.shape)
        return ops.B2bConv2dOp(
            x, w0, w1, bias0=c0, bias1=c1, layout=layout, filter_layout=filters, epilogue0=e0, epilogue1=e1,
            result_type=result_type, **window,
        )

    assert_matches(run_one(fused, **inputs), expected)


# ---------------------------------------------------------------------------- pools


POOLS = {
    "max-3x3-s2-p1": ("max", dict(kernel_shape=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))),
    "max-dilated-ceil": ("max", dict(kernel_shape=(2, 3), strides=(2, 2), dilations=(2, 1), ceil_mode=True)),
    "avg-2x2": ("avg", dict(kernel_shape=(2, 2), strides=(2, 2))),
    "avg-pads-excluded": ("avg", dict(kernel_shape=(3, 3), strides=(2, 1), pads=(1, 0, 1, 2))),
    "avg-pads-counted-ceil": ("avg", dict(kernel_shape=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1), count_include_pad=True, ceil_mode=True)),
}


def graph_pool(kind: str, options: dict) -> Callable:
    options = dict(options)
    if kind == "max":
        return lambda x: graph.MaxPool2dOp(x, options.pop("kernel_shape"), **options)
    return lambda x: graph.AvgPool2dOp(x, options.pop("kernel_shape"), **options)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", list(POOLS.values()), ids=list(POOLS))
def test_pool2d(case, layout, rng):
    kind, options = case
    x = random_array(rng, (2, 3, 9, 10))
    reference = run_one(graph_pool(kind, options), x=x)
    if layout == "NHWC":
        got = nchw(run_one(lambda x: ops.Pool2dOp(x, kind, **options), x=nhwc(x)))
    else:
        got = run_one(lambda x: ops.Pool2dOp(x, kind, layout="NCHW", **options), x=x)
    assert_matches(got, reference)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_global_pools(layout, rng):
    x = random_array(rng, (2, 5, 7, 6))  # NCHW
    x_in = nhwc(x) if layout == "NHWC" else x
    back = nchw if layout == "NHWC" else (lambda a: a)
    average = back(run_one(lambda x: ops.Pool2dOp(x, "global_avg", layout=layout), x=x_in))
    assert_matches(average, run_one(lambda x: graph.GlobalAvgPoolOp(x), x=x))
    maximum = back(run_one(lambda x: ops.Pool2dOp(x, "global_max", layout=layout), x=x_in))
    assert_matches(maximum, x.max(axis=(2, 3), keepdims=True))


def test_max_pool_integer(rng):
    x = random_array(rng, (1, 6, 6, 3), np.int8, low=-100, high=100)
    got = run_one(lambda x: ops.Pool2dOp(x, "max", kernel_shape=(2, 2), strides=(2, 2)), x=x)
    expected = x.reshape(1, 3, 2, 3, 2, 3).max(axis=(2, 4))
    assert_matches(got, expected)


# -------------------------------------------------------- normalization and reduce


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax(axis, rng):
    x = random_array(rng, (3, 4, 5), low=-8, high=8)
    got = run_one(lambda x: ops.SoftmaxOp(x, axis), x=x)
    assert_matches(got, run_one(lambda x: graph.SoftmaxOp(x, axis), x=x))


@pytest.mark.parametrize(("axis", "with_bias"), [(-1, True), (1, False), (-2, True)])
def test_layer_norm(axis, with_bias, rng):
    x = random_array(rng, (2, 5, 8))
    normalized = x.shape[axis:]
    inputs = dict(x=x, g=random_array(rng, normalized))
    if with_bias:
        inputs["b"] = random_array(rng, normalized)
    got = run_one(lambda x, g, *b: ops.LayerNormOp(x, g, *b, axis=axis, epsilon=1e-5), **inputs)
    assert_matches(got, run_one(lambda x, g, *b: graph.LayerNormOp(x, g, *b, axis=axis, epsilon=1e-5), **inputs))


REDUCES = {"mean": graph.ReduceMeanOp, "sum": graph.ReduceSumOp, "max": graph.ReduceMaxOp}


@pytest.mark.parametrize("axes", [(1,), (0, -1), (2, 3)], ids=str)
@pytest.mark.parametrize("kind", list(REDUCES))
def test_reduce(kind, axes, rng):
    x = random_array(rng, (2, 3, 4, 5))
    for keepdims in (True, False):
        got = run_one(lambda x: ops.ReduceOp(x, kind, axes, keepdims), x=x)
        assert_matches(got, run_one(lambda x: REDUCES[kind](x, axes, keepdims), x=x), what=f"keepdims={keepdims}: ")


# ------------------------------------------------------------------- data movement


@pytest.mark.parametrize(
    "options",
    [
        dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        dict(mode="linear"),
        dict(mode="cubic", coordinate_transformation_mode="align_corners"),
    ],
    ids=lambda o: o["mode"],
)
def test_resize(options, rng):
    x = random_array(rng, (1, 3, 4, 5))
    reference = run_one(lambda x: graph.ResizeOp(x, (1.0, 1.0, 2.0, 1.5), **options), x=x)

    def build(x):  # NHWC: the scales follow the axes
        properties = dict(graph.ResizeOp(x, (1.0, 2.0, 1.5, 1.0), **options).properties)
        return ops.ResizeOp.build(operands=[x], properties=properties, result_types=[TensorType(Float32Type(), (1, 8, 7, 3))])

    assert_matches(nchw(run_one(build, x=nhwc(x))), reference)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather(axis, rng):
    data = random_array(rng, (6, 5, 4))
    indices = rng.integers(-data.shape[axis], data.shape[axis], (2, 3)).astype(i64)
    got = run_one(lambda d, i: ops.GatherOp(d, i, axis), d=data, i=indices)
    assert_matches(got, np.take(data, indices, axis=axis))


@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (0, 3, 1, 2), (3, 2, 1, 0), (0, 1, 2, 3)], ids=str)
def test_layout_transform(perm, rng):
    x = random_array(rng, (2, 3, 4, 5), f16)
    got = run_one(lambda x: ops.LayoutTransformOp(x, perm), x=x)
    assert got.flags["C_CONTIGUOUS"]
    assert_matches(got, np.transpose(x, perm))


def test_reshape(rng):
    x = random_array(rng, (2, 3, 4), i64, low=-9, high=9)
    assert_matches(run_one(lambda x: ops.ReshapeOp(x, (4, 6)), x=x), x.reshape(4, 6))
    assert_matches(run_one(lambda x: ops.ReshapeOp(x, (24,)), x=x), x.reshape(24))


@pytest.mark.parametrize(
    ("pads", "mode", "value"),
    [((1, 0, 2, 1, 0, 3), "constant", 0.0), ((0, 1, 1, 0, 2, 1), "constant", -2.5), ((1, 1, 0, 1, 1, 2), "reflect", 0.0),
     ((0, 2, 1, 1, 0, 2), "edge", 0.0), ((2, 0, 1, 0, 1, 3), "wrap", 0.0), ((0, -1, 1, 0, 1, -2), "constant", 1.0)],
    ids=["zeros", "value", "reflect", "edge", "wrap", "crop"],
)
def test_pad(pads, mode, value, rng):
    x = random_array(rng, (2, 4, 5))
    got = run_one(lambda x: ops.PadOp(x, pads, mode, value), x=x)
    assert_matches(got, run_one(lambda x: graph.PadOp(x, pads, mode, value), x=x))


def test_concat(rng):
    a, b, c = (random_array(rng, (2, n, 3)) for n in (1, 4, 2))
    assert_matches(run_one(lambda a, b, c: ops.ConcatOp([a, b, c], 1), a=a, b=b, c=c), np.concatenate([a, b, c], axis=1))
    assert_matches(run_one(lambda a, b: ops.ConcatOp([a, b], -1), a=a, b=a), np.concatenate([a, a], axis=-1))


@pytest.mark.parametrize(
    ("starts", "ends", "axes", "steps"),
    [((1,), (3,), (1,), (1,)), ((-1, 0), (-1000, 100), (1, 2), (-2, 2)), ((0, 2), (2, 5), (0, -1), (1, 3))],
    ids=["one-axis", "backwards-clamped", "two-axes"],
)
def test_slice(starts, ends, axes, steps, rng):
    x = random_array(rng, (3, 7, 6))
    got = run_one(lambda x: ops.SliceOp(x, starts, ends, axes, steps), x=x)
    assert_matches(got, run_one(lambda x: graph.SliceOp(x, starts, ends, axes, steps), x=x))


def test_constant():
    value = np.arange(24, dtype=f32).reshape(2, 3, 4) - 7.5
    module_text = boltir.print_module(_module_of(lambda: ops.ConstantOp(make_weight_attr("w", value))))
    (got,) = run_text(module_text)
    assert_matches(got, value)


def _module_of(build: Callable):
    from boltir.builder import ModelBuilder

    b = ModelBuilder()
    op = b.insert(build())
    return b.finish([op.results[0]])


# --------------------------------------------------------------------- elementwise

UNARY_GRAPH: dict[str, Callable] = {
    "relu": lambda x: graph.ReluOp(x),
    "clip": lambda x: graph.ClipOp(x, *ACTIVATION_ARGS["clip"]),
    "gelu": lambda x: graph.GeluOp(x),
    "gelu_tanh": lambda x: graph.GeluOp(x, "tanh"),
    "sigmoid": lambda x: graph.SigmoidOp(x),
    "silu": lambda x: graph.SiluOp(x),
    "hardswish": lambda x: graph.HardSwishOp(x),
    "tanh": lambda x: graph.TanhOp(x),
    "leaky_relu": lambda x: graph.LeakyReluOp(x, *ACTIVATION_ARGS["leaky_relu"]),
    "hardsigmoid": lambda x: graph.HardSigmoidOp(x, *ACTIVATION_ARGS["hardsigmoid"]),
    "erf": lambda x: graph.ErfOp(x),
    "sqrt": lambda x: graph.SqrtOp(x),
    "exp": lambda x: graph.ExpOp(x),
    "neg": lambda x: graph.NegOp(x),
    "reciprocal": lambda x: graph.ReciprocalOp(x),
}


@pytest.mark.parametrize("dtype", [f32, f16])
@pytest.mark.parametrize("fn", [fn for fn in ops.UNARY_ARITY if fn not in ("identity", "not")])
def test_unary(fn, dtype, rng):
    """Each function against the graph op it stands for (and the numpy formula)."""
    options = {"sqrt": dict(low=0.0), "reciprocal": dict(nonzero=True)}.get(fn, {})
    x = random_array(rng, (3, 7), dtype, low=options.get("low", -4.0), high=4.0, nonzero=options.get("nonzero", False))
    got = run_one(lambda x: ops.UnaryOp(fn, x, ACTIVATION_ARGS.get(fn, ())), x=x)
    assert_matches(got, run_one(UNARY_GRAPH[fn], x=x))
    rtol = 1e-5 if dtype == f32 else 1e-3
    np.testing.assert_allclose(got.astype(f64), activate(fn, x.astype(f64)), rtol=rtol, atol=rtol)


def test_unary_identity(rng):
    x = random_array(rng, (2, 5), f16)
    assert_matches(run_one(lambda x: ops.UnaryOp("identity", x), x=x), x)


@pytest.mark.parametrize("fn", ["relu", "neg", "clip", "identity"])
@pytest.mark.parametrize("dtype", [i32, i64])
def test_unary_integer(fn, dtype, rng):
    x = random_array(rng, (4, 5), dtype, low=-9, high=9)
    got = run_one(lambda x: ops.UnaryOp(fn, x, (-3.5, 4.5) if fn == "clip" else ()), x=x)
    if fn == "identity":
        expected = x
    elif fn == "clip":
        expected = run_one(lambda x: graph.ClipOp(x, -3.5, 4.5), x=x)
    else:
        expected = run_one(UNARY_GRAPH[fn], x=x)
    assert_matches(got, expected)


def test_unary_not(rng):
    x = random_array(rng, (3, 4), np.bool_)
    got = run_one(lambda x: ops.UnaryOp("not", x), x=x)
    assert_matches(got, run_one(lambda x: graph.NotOp(x), x=x))
    assert_matches(got, ~x)


BINARY_GRAPH = {
    "add": graph.AddOp, "sub": graph.SubOp, "mul": graph.MulOp, "div": graph.DivOp, "pow": graph.PowOp, "equal": graph.EqualOp,
    "greater": graph.GreaterOp, "greater_equal": graph.GreaterOrEqualOp, "less": graph.LessOp, "less_equal": graph.LessOrEqualOp,
}
COMPARISONS = {"equal": np.equal, "greater": np.greater, "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal}
LOGICAL_GRAPH = {"and": (graph.AndOp, np.logical_and), "or": (graph.OrOp, np.logical_or), "xor": (graph.XorOp, np.logical_xor)}


@pytest.mark.parametrize("dtype", [f32, f16, i64])
@pytest.mark.parametrize("fn", list(BINARY_GRAPH))
def test_binary(fn, dtype, rng):
    """Against the graph op, with and without broadcasting."""
    for shapes in [((2, 3), (2, 3)), ((4, 1, 3), (2, 1)), ((), (3,))]:
        low, high = (0.5, 3.0) if fn == "pow" else (-5.0, 5.0)
        a = random_array(rng, shapes[0], dtype, low=low, high=high)
        b = random_array(rng, shapes[1], dtype, low=0 if fn == "pow" else -5, high=3 if fn == "pow" else 5, nonzero=fn == "div")
        if fn in COMPARISONS:  # few distinct values, so that some elements are equal
            a, b = np.round(a / 4).astype(dtype), np.round(b / 4).astype(dtype)
        got = run_one(lambda a, b: ops.BinaryOp(fn, a, b), a=a, b=b)
        assert_matches(got, run_one(lambda a, b: BINARY_GRAPH[fn](a, b), a=a, b=b), what=f"{shapes}: ")
        if fn in COMPARISONS:
            assert_matches(got, COMPARISONS[fn](a, b), what=f"{shapes}: ")


@pytest.mark.parametrize("fn", list(LOGICAL_GRAPH))
def test_binary_logical(fn, rng):
    graph_op, reference = LOGICAL_GRAPH[fn]
    a, b = random_array(rng, (4, 1, 3), np.bool_), random_array(rng, (2, 1), np.bool_)
    got = run_one(lambda a, b: ops.BinaryOp(fn, a, b), a=a, b=b)
    assert_matches(got, run_one(lambda a, b: graph_op(a, b), a=a, b=b))
    assert_matches(got, reference(a, b))


def test_select(rng):
    condition = random_array(rng, (2, 1, 4), np.bool_)
    a, b = random_array(rng, (3, 4)), random_array(rng, (1,))
    got = run_one(lambda c, a, b: ops.SelectOp(c, a, b), c=condition, a=a, b=b)
    assert_matches(got, run_one(lambda c, a, b: graph.WhereOp(c, a, b), c=condition, a=a, b=b))
    assert_matches(got, np.where(condition, a, b))


@pytest.mark.parametrize(
    ("source", "target", "options"),
    [
        (f32, f16, {}),
        (f32, i32, {}),
        (f16, i64, {}),
        (i64, f32, {}),
        (f32, np.bool_, {}),
        (f32, "float8_e4m3fn", dict(saturate=False)),
        (f32, "float8_e4m3fn", dict(saturate=True)),
        (f32, "float8_e8m0fnu", dict(round_mode="nearest")),
    ],
    ids=str,
)
def test_cast(source, target, options, rng):
    target = np.dtype(getattr(ml_dtypes, target)) if isinstance(target, str) else np.dtype(target)
    x = random_array(rng, (4, 6), source, low=-600 if source == f32 else -9, high=600 if source == f32 else 9)
    element_type = element_type_for(target)
    got = run_one(lambda x: ops.CastOp(x, element_type, **options), x=x)
    expected = run_one(lambda x: graph.CastOp(x, element_type, **options), x=x)
    assert got.dtype == expected.dtype == target
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


# ------------------------------------------------------------- op.elementwise bodies


def elementwise_module(inputs: dict[str, str], body: str, result: str) -> str:
    """`@main` whose only op is an op.elementwise over `inputs` (name -> tensor type)."""
    arguments = ", ".join(f"%{name}: {t}" for name, t in inputs.items())
    operands = ", ".join(f"%{name}" for name in inputs)
    types = ", ".join(inputs.values())
    element_args = ", ".join(f"%{name}e: {t.rsplit('x', 1)[-1][:-1] if 'x' in t else t[7:-1]}" for name, t in inputs.items())
    return f"""
func.func @main({arguments}) -> {result} {{
  %0 = op.elementwise ({operands}) {{
  ^bb0({element_args}):
{body}
  }} : ({types}) -> {result}
  func.return %0 : {result}
}}
"""


def test_elementwise_bias_relu6_residual(rng):
    text = elementwise_module(
        {"x": "tensor<2x3x4xf32>", "b": "tensor<4xf32>", "r": "tensor<3x1xf32>"},
        """
    %s = arith.addf %xe, %be : f32
    %zero = arith.constant 0.0 : f32
    %six = arith.constant 6.0 : f32
    %lo = arith.maximumf %s, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %out = arith.addf %hi, %re : f32
    op.yield %out : f32""",
        "tensor<2x3x4xf32>",
    )
    x, b, r = random_array(rng, (2, 3, 4), low=-8, high=8), random_array(rng, (4,)), random_array(rng, (3, 1))
    (got,) = run_text(text, x=x, b=b, r=r)
    assert_matches(got, (np.clip(x.astype(f64) + b, 0, 6) + r).astype(f32))


def test_elementwise_leaky_relu_cmpf_select_f16(rng):
    text = elementwise_module(
        {"x": "tensor<5x6xf16>"},
        """
    %w = arith.extf %xe : f16 to f32
    %zero = arith.constant 0.0 : f32
    %slope = arith.constant 0.125 : f32
    %scaled = arith.mulf %w, %slope : f32
    %positive = arith.cmpf ogt, %w, %zero : f32
    %selected = arith.select %positive, %w, %scaled : f32
    %down = arith.truncf %selected : f32 to f16
    op.yield %down : f16""",
        "tensor<5x6xf16>",
    )
    x = random_array(rng, (5, 6), f16)
    (got,) = run_text(text, x=x)
    assert got.dtype == f16
    np.testing.assert_array_equal(got, np.where(x > 0, x, x.astype(f32) * 0.125).astype(f16))


def test_elementwise_gelu_math_f16(rng):
    text = elementwise_module(
        {"x": "tensor<64xf16>"},
        """
    %w = arith.extf %xe : f16 to f32
    %two = arith.constant 2.0 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %root = math.sqrt %two : f32
    %scaled = arith.divf %w, %root : f32
    %erf = math.erf %scaled : f32
    %sum = arith.addf %erf, %one : f32
    %halfx = arith.mulf %w, %half : f32
    %y = arith.mulf %halfx, %sum : f32
    %down = arith.truncf %y : f32 to f16
    op.yield %down : f16""",
        "tensor<64xf16>",
    )
    x = random_array(rng, (64,), f16, low=-4, high=4)
    (got,) = run_text(text, x=x)
    np.testing.assert_allclose(got.astype(f64), activate("gelu", x.astype(f64)), rtol=2e-3, atol=2e-3)
    assert_matches(got, run_one(lambda x: ops.UnaryOp("gelu", x), x=x), rtol=2e-3)


def test_elementwise_math_functions(rng):
    text = elementwise_module(
        {"x": "tensor<4x8xf32>", "y": "tensor<8xf32>"},
        """
    %a = math.absf %xe : f32
    %one = arith.constant 1.0 : f32
    %p = arith.addf %a, %one : f32
    %l = math.log %p : f32
    %r = math.rsqrt %p : f32
    %t = math.tanh %ye : f32
    %e = math.exp %t : f32
    %f = math.floor %xe : f32
    %c = math.ceil %ye : f32
    %q = math.powf %p, %t : f32
    %n = arith.negf %f : f32
    %s1 = arith.addf %l, %r : f32
    %s2 = arith.subf %s1, %e : f32
    %s3 = arith.mulf %s2, %c : f32
    %s4 = arith.divf %s3, %q : f32
    %s5 = arith.addf %s4, %n : f32
    op.yield %s5 : f32""",
        "tensor<4x8xf32>",
    )
    x, y = random_array(rng, (4, 8), low=-3, high=3), random_array(rng, (8,), low=-3, high=3)
    (got,) = run_text(text, x=x, y=y)
    x64, y64 = x.astype(f64), y.astype(f64)
    p, t = np.abs(x64) + 1, np.tanh(y64)
    expected = (np.log(p) + 1 / np.sqrt(p) - np.exp(t)) * np.ceil(y64) / p**t - np.floor(x64)
    assert_matches(got, expected.astype(f32))


def test_elementwise_integer_body(rng):
    text = elementwise_module(
        {"x": "tensor<3x5xi32>", "y": "tensor<5xi32>"},
        """
    %zero = arith.constant 0 : i32
    %three = arith.constant 3 : i32
    %same = arith.cmpi sge, %xe, %ye : i32
    %m = arith.muli %xe, %three : i32
    %q = arith.divsi %m, %ye : i32
    %d = arith.subi %q, %ye : i32
    %big = arith.maxsi %d, %zero : i32
    %out = arith.select %same, %big, %xe : i32
    op.yield %out : i32""",
        "tensor<3x5xi32>",
    )
    x = random_array(rng, (3, 5), i32, low=-20, high=20)
    y = random_array(rng, (5,), i32, low=-7, high=7, nonzero=True)
    (got,) = run_text(text, x=x, y=y)
    quotient = np.trunc((3 * x.astype(f64)) / y).astype(i32)  # divsi rounds toward zero
    assert_matches(got, np.where(x >= y, np.maximum(quotient - y, 0), x).astype(i32))


def test_elementwise_conversions(rng):
    text = elementwise_module(
        {"x": "tensor<10xf32>", "i": "tensor<10xi32>"},
        """
    %t = arith.fptosi %xe : f32 to i32
    %s = arith.addi %t, %ie : i32
    %w = arith.extsi %s : i32 to i64
    %f = arith.sitofp %w : i64 to f64
    %h = arith.truncf %f : f64 to f16
    op.yield %h : f16""",
        "tensor<10xf16>",
    )
    x = random_array(rng, (10,), low=-50, high=50)
    i = random_array(rng, (10,), i32, low=-50, high=50)
    (got,) = run_text(text, x=x, i=i)
    assert_matches(got, (np.trunc(x).astype(i64) + i).astype(f16))


CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def test_elementwise_cmpf_predicates_with_nan(rng):
    """Every predicate. IEEE 754 (and MLIR): an ordered predicate is false, an unordered
    one true, where an operand is NaN."""
    x = rng.integers(-2, 3, 24).astype(f32)
    y = rng.integers(-2, 3, 24).astype(f32)
    x[:4], y[:4] = [np.nan, 1.0, np.nan, 0.0], [1.0, np.nan, np.nan, 0.0]
    unordered = np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        compare = {"eq": x == y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y, "ne": (x != y) & ~unordered}
    for predicate in CMPF:
        text = elementwise_module(
            {"x": "tensor<24xf32>", "y": "tensor<24xf32>"},
            f"""
    %c = arith.cmpf {predicate}, %xe, %ye : f32
    op.yield %c : i1""",
            "tensor<24xi1>",
        )
        (got,) = run_text(text, x=x, y=y)
        if predicate in ("false", "true"):
            expected = np.full(24, predicate == "true")
        elif predicate == "ord":
            expected = ~unordered
        elif predicate == "uno":
            expected = unordered
        elif predicate.startswith("o"):
            expected = compare[predicate[1:]] & ~unordered
        else:
            expected = compare[predicate[1:]] | unordered
        assert_matches(got, expected, what=f"cmpf {predicate}: ")


def test_elementwise_cmpi_predicates(rng):
    """Every predicate; the u* ones compare the bits as unsigned numbers."""
    x, y = rng.integers(-3, 4, 30).astype(i32), rng.integers(-3, 4, 30).astype(i32)
    for predicate in ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]:
        text = elementwise_module(
            {"x": "tensor<30xi32>", "y": "tensor<30xi32>"},
            f"""
    %c = arith.cmpi {predicate}, %xe, %ye : i32
    op.yield %c : i1""",
            "tensor<30xi1>",
        )
        (got,) = run_text(text, x=x, y=y)
        a, b = (x, y) if predicate[0] != "u" else (x.view(np.uint32), y.view(np.uint32))
        compare = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
        assert_matches(got, compare[predicate if predicate in ("eq", "ne") else predicate[1:]], what=f"cmpi {predicate}: ")


def test_elementwise_identity_broadcasts(rng):
    x = random_array(rng, (3, 1))
    result = TensorType(Float32Type(), (2, 3, 4))

    def build(x):
        from boltir.passes.lower_graph_to_op import identity_body

        return ops.ElementwiseOp([x], identity_body(x.type.element_type), result)

    got = run_one(build, x=x)
    assert got.flags["C_CONTIGUOUS"]
    assert_matches(got, np.broadcast_to(x, (2, 3, 4)))


def test_elementwise_i1_inputs(rng):
    text = elementwise_module(
        {"c": "tensor<6xi1>", "x": "tensor<6xf32>"},
        """
    %zero = arith.constant 0.0 : f32
    %y = arith.select %ce, %xe, %zero : f32
    op.yield %y : f32""",
        "tensor<6xf32>",
    )
    c, x = random_array(rng, (6,), np.bool_), random_array(rng, (6,))
    (got,) = run_text(text, c=c, x=x)
    assert_matches(got, np.where(c, x, 0).astype(f32))
