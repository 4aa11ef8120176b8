"""NHWC convs and pools in the interpreter: an NHWC op (with either filter layout)
computes what transpose -> the NCHW op -> transpose computes, on fresh random inputs
(to the dtype's tolerance: a mean over other axes may round differently).

The NCHW ops themselves are checked against ONNX's reference in test_graph_ops.py."""

from __future__ import annotations

import numpy as np
import pytest
from graph_oracle import assert_matches, random_array, run_boltir

from boltir.dialects import graph

TO_NHWC = (0, 2, 3, 1)
"""NCHW -> NHWC; also OIHW -> OHWI and IOHW -> IHWO."""
TO_NCHW = (0, 3, 1, 2)
"""NHWC -> NCHW; also OHWI -> OIHW and IHWO -> IOHW."""


def transpose(value, perm):
    return graph.TransposeOp(value, perm).output


def nhwc_shape(nchw: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(nchw[p] for p in TO_NHWC)


def check_layouts(make, x_nchw, w_onnx=None, bias=None, *, dtype=np.float32, filter_layouts, rng):
    """`make(x, w, b, layout=..., filter_layout=...)` builds the op; it runs NHWC (with
    each of `filter_layouts`) and is compared with the transposed NCHW op."""
    inputs = {"x": random_array(rng, nhwc_shape(x_nchw), dtype)}
    if w_onnx is not None:
        inputs["w"] = random_array(rng, w_onnx, dtype)
    if bias is not None:
        inputs["b"] = random_array(rng, (bias,), dtype)

    def reference(x, w=None, b=None):
        y = make(transpose(x, TO_NCHW), w, b)
        return transpose(y.output, TO_NHWC)

    (expected,) = run_boltir(reference, inputs)
    for filter_layout in filter_layouts:
        def channels_last(x, w=None, b=None, filter_layout=filter_layout):
            if w is not None and filter_layout in ("OHWI", "IHWO"):
                w = transpose(w, TO_NHWC)
            kwargs = {"filter_layout": filter_layout} if filter_layout else {}
            return make(x, w, b, layout="NHWC", **kwargs)

        (got,) = run_boltir(channels_last, inputs)
        assert_matches(got, expected, what=f"NHWC with filter layout {filter_layout}: ")


def conv(**attrs):
    return lambda x, w, b, **layout: graph.Conv2dOp(x, w, b, **attrs, **layout)


CONV_CASES = [
    pytest.param((1, 3, 8, 8), (4, 3, 3, 3), None, {}, id="plain"),
    pytest.param((2, 3, 9, 10), (5, 3, 3, 3), 5, {"strides": (2, 3), "pads": (1, 0, 2, 1)}, id="strides-pads-bias"),
    pytest.param((1, 3, 8, 9), (4, 3, 2, 5), 4, {"pads": (0, 2, 1, 2)}, id="kernel-rectangular"),
    pytest.param((1, 3, 9, 11), (4, 3, 3, 3), None, {"dilations": (1, 3), "pads": (1, 2, 1, 2)}, id="dilations"),
    pytest.param((1, 6, 7, 7), (4, 3, 3, 3), None, {"group": 2}, id="grouped"),
    pytest.param((2, 5, 7, 7), (5, 1, 3, 3), 5, {"group": 5, "pads": (1, 1, 1, 1)}, id="depthwise-odd"),
    pytest.param((1, 4, 7, 7), (8, 1, 3, 3), None, {"group": 4, "strides": (2, 2)}, id="depthwise-multiplier"),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "bias", "attrs"), CONV_CASES)
def test_conv2d_nhwc(x_shape, w_shape, bias, attrs, rng):
    check_layouts(conv(**attrs), x_shape, w_shape, bias, filter_layouts=["OIHW", "OHWI"], rng=rng)


def test_conv2d_nhwc_f16(rng):
    check_layouts(conv(pads=(1, 1, 1, 1)), (1, 3, 6, 6), (4, 3, 3, 3), 4, dtype=np.float16, filter_layouts=["OHWI"], rng=rng)


def test_conv2d_nchw_with_ohwi_filter(rng):
    """The filter layout alone: NCHW data, OHWI filter."""
    x = random_array(rng, (2, 3, 7, 6))
    w = random_array(rng, (4, 3, 3, 2))
    (expected,) = run_boltir(lambda x, w: graph.Conv2dOp(x, w, pads=(1, 1, 1, 1)), {"x": x, "w": w})
    (got,) = run_boltir(
        lambda x, w: graph.Conv2dOp(x, transpose(w, TO_NHWC), pads=(1, 1, 1, 1), filter_layout="OHWI"),
        {"x": x, "w": w},
    )
    np.testing.assert_array_equal(got, expected)


def conv_transpose(**attrs):
    return lambda x, w, b, **layout: graph.ConvTranspose2dOp(x, w, b, **attrs, **layout)


CONV_TRANSPOSE_CASES = [
    pytest.param((1, 4, 4, 4), (4, 3, 4, 4), 3, {"strides": (2, 2), "pads": (1, 1, 1, 1)}, id="upsample"),
    pytest.param((1, 4, 5, 5), (4, 2, 3, 3), None, {"group": 2}, id="grouped"),
    pytest.param(
        (2, 3, 4, 5), (3, 5, 3, 3), 5, {"strides": (2, 3), "pads": (1, 0, 1, 1), "output_padding": (1, 2)}, id="output-padding"
    ),
    pytest.param((1, 2, 3, 3), (2, 2, 3, 3), None, {"dilations": (2, 2), "output_padding": (1, 0)}, id="dilations"),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "bias", "attrs"), CONV_TRANSPOSE_CASES)
def test_conv_transpose2d_nhwc(x_shape, w_shape, bias, attrs, rng):
    check_layouts(conv_transpose(**attrs), x_shape, w_shape, bias, filter_layouts=["IOHW", "IHWO"], rng=rng)


def pool(op_type, kernel, **attrs):
    return lambda x, w, b, **layout: op_type(x, kernel, **attrs, **layout)


POOL_CASES = [
    pytest.param(pool(graph.MaxPool2dOp, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)), (2, 3, 9, 9), id="max-pads"),
    pytest.param(pool(graph.MaxPool2dOp, (2, 2), strides=(2, 2), ceil_mode=True), (1, 5, 7, 6), id="max-ceil"),
    pytest.param(pool(graph.MaxPool2dOp, (2, 3), dilations=(2, 1), pads=(1, 0, 0, 2)), (1, 3, 9, 10), id="max-dilations"),
    pytest.param(pool(graph.AvgPool2dOp, (3, 3), pads=(1, 1, 1, 1)), (1, 3, 7, 7), id="avg-pads-exclude"),
    pytest.param(
        pool(graph.AvgPool2dOp, (3, 3), strides=(2, 2), pads=(0, 0, 1, 1), ceil_mode=True, count_include_pad=True),
        (2, 3, 7, 8),
        id="avg-ceil-include-pad",
    ),
]


@pytest.mark.parametrize(("make", "x_shape"), POOL_CASES)
def test_pool2d_nhwc(make, x_shape, rng):
    check_layouts(make, x_shape, filter_layouts=[None], rng=rng)


def test_global_avg_pool_nhwc(rng):
    check_layouts(lambda x, w, b, **layout: graph.GlobalAvgPoolOp(x, **layout), (2, 5, 7, 6), filter_layouts=[None], rng=rng)


@pytest.mark.parametrize("shape", [(2, 10, 4), (1, 3, 4, 5, 2)])
def test_global_avg_pool_nhwc_any_rank(shape, rng):
    """Channels last at any rank: the mean over every axis between N and C."""
    x = random_array(rng, shape)
    (got,) = run_boltir(lambda x: graph.GlobalAvgPoolOp(x, layout="NHWC"), {"x": x})
    expected = x.mean(axis=tuple(range(1, len(shape) - 1)), keepdims=True, dtype=np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
