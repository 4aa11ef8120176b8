"""Every `cutlass` op in the interpreter, on fresh random inputs, against the op-level op
it comes from: a template instance computes what its `op.gemm` / `op.conv2d` /
`op.b2b_*` computes. Its tiling, alignment, swizzle and iterator change nothing; split-k
sums K in slices (equal within f32 rounding); a b2b op equals its two halves, the
intermediate rounded to the element type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr, TensorType, f32
from xdsl.ir import SSAValue

from boltir import interp, verify_module
from boltir.builder import ModelBuilder
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.dialects.graph import i64_array, i64_attr
from boltir.dtypes import element_type_for
from tests.passes.equivalence import relative_error

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)

# The interpreter of a template and of its op-level op round the same f32 result once:
# they agree to f32 rounding, whatever the element type.
SAME = 1e-6
ROUNDING = {F32: 1e-5, F16: 2e-3, BF16: 1e-2}
"""Tolerance where the f32 sums are reordered (split-k) before the one rounding to the
element type: a few elements may land one unit in the last place apart."""

TILE_16 = cutlass.Tile((64, 64, 32), (32, 32, 32), (16, 8, 16), 3)
TILE_32 = cutlass.Tile((64, 64, 16), (32, 32, 16), (16, 8, 8), 3)
DEPTHWISE_TILE = cutlass.Tile((64, 8, 9), (16, 8, 9), (1, 1, 1), 2)


def tile_for(dtype: np.dtype) -> cutlass.Tile:
    return TILE_32 if dtype == F32 else TILE_16


def template(op_type: type, operands: Sequence, result_type: TensorType, *, tile: cutlass.Tile, alignment=(1, 1, 1), **props):
    """A cutlass op of `op_type`: operands in the op's segments (a list for an optional
    one, empty when absent), sm80 tensor-op parameters, `props` as property attributes."""
    properties = {
        "arch": StringAttr("sm80"),
        "accumulator": f32,
        "tile": cutlass.TileAttr.make(tile),
        "alignment": i64_array(alignment),
        **props,
    }
    return op_type.build(operands=list(operands), properties=properties, result_types=[result_type])


def optional(value: SSAValue | None) -> list[SSAValue]:
    return [] if value is None else [value]


def run_built(build: Callable[..., SSAValue], inputs: dict[str, np.ndarray]) -> np.ndarray:
    """`build(*arguments)` in `@main` (verified), run on `inputs`."""
    b = ModelBuilder()
    args = [b.input(name, value.shape, value.dtype) for name, value in inputs.items()]
    result = build(b, *args)
    module = b.finish([result])
    verify_module(module)
    (out,) = interp.run(module, inputs)
    return out


def randn(rng: np.random.Generator, shape, dtype, scale: float = 1.0) -> np.ndarray:
    return (scale * rng.standard_normal(shape)).astype(dtype)


def assert_close(got: np.ndarray, expected: np.ndarray, tolerance: float) -> None:
    assert got.shape == expected.shape and got.dtype == expected.dtype
    error = relative_error(got, expected)
    assert error <= tolerance, f"‖Δ‖/‖ref‖ = {error:.3g} > {tolerance}"


# ----------------------------------------------------------------------------- GEMM

EPILOGUES = {
    "none": dict(),
    "bias_relu": dict(bias=True, activation=ops.Activation("relu")),
    "alpha_beta_gelu": dict(alpha=0.5, beta=2.0, bias=True, activation=ops.Activation("gelu")),
    "residual_block": dict(bias=True, activation=ops.Activation("relu"), residual="add", activation2=ops.Activation("relu")),
    "residual_mul": dict(residual="mul", activation2=ops.Activation("sigmoid")),
}


def gemm_pair(rng, dtype, *, m=24, n=16, k=40, batch_a=(), batch_b=(), layout_a="row", layout_b="row", epilogue="bias_relu", split_k=1):
    """Inputs, the op.gemm builder and the cutlass.gemm builder of one GEMM."""
    attr = ops.EpilogueAttr.make(**EPILOGUES[epilogue])
    a_shape = (*batch_a, m, k) if layout_a == "row" else (*batch_a, k, m)
    b_shape = (*batch_b, k, n) if layout_b == "row" else (*batch_b, n, k)
    out_shape = (*np.broadcast_shapes(batch_a, batch_b), m, n)
    inputs = {"a": randn(rng, a_shape, dtype), "b": randn(rng, b_shape, dtype, 1 / np.sqrt(k))}
    if attr.has_bias:
        inputs["bias"] = randn(rng, (n,), dtype)
    if attr.residual_kind != "none":
        inputs["residual"] = randn(rng, out_shape, dtype)

    def split(args):
        a, b, *rest = args
        bias = rest.pop(0) if attr.has_bias else None
        residual = rest.pop(0) if attr.residual_kind != "none" else None
        return a, b, bias, residual

    def op_level(builder, *args):
        a, b, bias, residual = split(args)
        gemm = ops.GemmOp(a, b, bias=bias, residual=residual, layout_a=layout_a, layout_b=layout_b, epilogue=attr)
        return builder.insert(gemm).output

    def kernel(builder, *args):
        a, b, bias, residual = split(args)
        result_type = TensorType(element_type_for(dtype), out_shape)
        op = template(
            cutlass.GemmOp, [a, b, optional(bias), optional(residual)], result_type, tile=tile_for(dtype),
            layout_a=StringAttr(layout_a), layout_b=StringAttr(layout_b), split_k=i64_attr(split_k), epilogue=attr,
        )
        return builder.insert(op).output

    return inputs, op_level, kernel


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("epilogue", list(EPILOGUES))
def test_gemm_equals_op_gemm(rng, dtype, epilogue):
    inputs, op_level, kernel = gemm_pair(rng, dtype, epilogue=epilogue)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), SAME)


@pytest.mark.parametrize("layout_a", ["row", "col"])
@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_gemm_layouts(rng, layout_a, layout_b):
    inputs, op_level, kernel = gemm_pair(rng, F16, m=20, n=12, k=36, layout_a=layout_a, layout_b=layout_b)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), SAME)


@pytest.mark.parametrize(
    ("batch_a", "batch_b"),
    [((3,), ()), ((), (3,)), ((3,), (3,)), ((2, 3), (1, 3))],
    ids=["a", "b", "both", "broadcast"],
)
def test_batched_gemm(rng, batch_a, batch_b):
    inputs, op_level, kernel = gemm_pair(rng, F32, m=8, n=12, k=16, batch_a=batch_a, batch_b=batch_b, epilogue="residual_block")
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), SAME)


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("epilogue", ["none", "bias_relu", "residual_block"])
def test_split_k_sums_slices(rng, dtype, epilogue):
    """Three slices of K = 301 (uneven): the same GEMM as one slice and as op.gemm, up to
    the order of the f32 sums."""
    inputs, op_level, one_slice = gemm_pair(rng, dtype, m=12, n=16, k=301, epilogue=epilogue)
    _, _, three_slices = gemm_pair(rng, dtype, m=12, n=16, k=301, epilogue=epilogue, split_k=3)
    reference = run_built(op_level, inputs)
    single = run_built(one_slice, inputs)
    assert_close(single, reference, SAME)
    assert_close(run_built(three_slices, inputs), single, ROUNDING[dtype])


def test_split_k_equals_k_slices(rng):
    """As many slices as K has elements (the verifier's limit): each slice is one product."""
    inputs, op_level, _ = gemm_pair(rng, F32, m=4, n=8, k=5, epilogue="none")
    _, _, kernel = gemm_pair(rng, F32, m=4, n=8, k=5, epilogue="none", split_k=5)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), ROUNDING[F32])


# ---------------------------------------------------------------------------- convs


def conv_pair(rng, dtype, *, n=2, hw=(9, 7), c=8, k=16, kernel=(3, 3), strides=(1, 1), pads=(1, 1, 1, 1), dilations=(1, 1),
              epilogue="bias_relu", depthwise=False, iterator="optimized", alignment=(1, 1, 1), split_k=1):
    attr = ops.EpilogueAttr.make(**EPILOGUES[epilogue])
    k = c if depthwise else k
    x_shape = (n, *hw, c)
    w_shape = (k, *kernel, 1 if depthwise else c)
    out_shape, _ = ops.conv_output_shape(x_shape, w_shape, "NHWC", "OHWI", strides, pads, dilations, c if depthwise else 1)
    fan_in = kernel[0] * kernel[1] * (1 if depthwise else c)
    inputs = {"x": randn(rng, x_shape, dtype), "w": randn(rng, w_shape, dtype, 1 / np.sqrt(fan_in))}
    if attr.has_bias:
        inputs["bias"] = randn(rng, (k,), dtype)
    if attr.residual_kind != "none":
        inputs["residual"] = randn(rng, out_shape, dtype)
    window = {"strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations)}

    def split(args):
        x, w, *rest = args
        bias = rest.pop(0) if attr.has_bias else None
        residual = rest.pop(0) if attr.residual_kind != "none" else None
        return x, w, bias, residual

    def op_level(builder, *args):
        x, w, bias, residual = split(args)
        conv = ops.Conv2dOp(x, w, bias=bias, residual=residual, strides=strides, pads=pads, dilations=dilations,
                            groups=c if depthwise else 1, epilogue=attr)
        return builder.insert(conv).output

    def kernel_op(builder, *args):
        x, w, bias, residual = split(args)
        result_type = TensorType(element_type_for(dtype), out_shape)
        operands = [x, w, optional(bias), optional(residual)]
        if depthwise:
            op = template(cutlass.DepthwiseConv2dFpropOp, operands, result_type, tile=DEPTHWISE_TILE,
                          op_class=StringAttr("simt"), epilogue=attr, **window)
        else:
            op = template(cutlass.Conv2dFpropOp, operands, result_type, tile=tile_for(dtype), alignment=alignment, epilogue=attr,
                          iterator_algorithm=StringAttr(iterator), split_k=i64_attr(split_k), **window)
        return builder.insert(op).output

    return inputs, op_level, kernel_op


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("epilogue", ["none", "bias_relu", "alpha_beta_gelu", "residual_block"])
def test_conv2d_fprop_equals_op_conv2d(rng, dtype, epilogue):
    inputs, op_level, kernel = conv_pair(rng, dtype, epilogue=epilogue)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), SAME)


@pytest.mark.parametrize(
    ("iterator", "c", "window"),
    [
        ("analytic", 5, dict(strides=(2, 2), pads=(0, 1, 2, 1), dilations=(1, 2))),
        ("optimized", 16, dict(kernel=(1, 1), pads=(0, 0, 0, 0))),
        ("fixed_channels", 4, dict(kernel=(7, 7), strides=(2, 2), pads=(3, 3, 3, 3), hw=(15, 16), alignment=(4, 4, 8))),
        ("few_channels", 3, dict(kernel=(3, 5), pads=(1, 2, 1, 2))),
    ],
)
def test_conv2d_fprop_windows(rng, iterator, c, window):
    """The iterator changes how the input is read, never what is computed; the window
    (strides, asymmetric pads, dilations, rectangular filters) is the op's."""
    inputs, op_level, kernel = conv_pair(rng, F16, c=c, iterator=iterator, epilogue="residual_block", **window)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), SAME)


def test_conv2d_fprop_split_k(rng):
    inputs, op_level, kernel = conv_pair(rng, F32, c=32, split_k=3)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), ROUNDING[F32])


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize(
    "window",
    [
        dict(),
        dict(strides=(2, 2), pads=(1, 1, 1, 1)),
        dict(kernel=(5, 5), pads=(4, 4, 4, 4), dilations=(2, 2), epilogue="residual_mul"),
    ],
    ids=["3x3", "strided", "5x5_dilated_residual"],
)
def test_depthwise_equals_grouped_op_conv2d(rng, dtype, window):
    """A depthwise template computes the op.conv2d with groups = C = K."""
    window = {"epilogue": "bias_relu", **window}
    inputs, op_level, kernel = conv_pair(rng, dtype, c=8, depthwise=True, **window)
    assert_close(run_built(kernel, inputs), run_built(op_level, inputs), SAME)


# ---------------------------------------------------------------------- back-to-back

B2B_TILES = (
    cutlass.Tile((64, 32, 32), (32, 32, 32), (16, 8, 16), 3),
    cutlass.Tile((64, 16, 32), (32, 16, 32), (16, 8, 16), 3),
)


def b2b_epilogues():
    return (
        ops.EpilogueAttr.make(alpha=0.5, bias=True, activation=ops.Activation("relu")),
        ops.EpilogueAttr.make(bias=True, activation=ops.Activation("gelu")),
    )


@pytest.mark.parametrize("dtype", [F16, F32], ids=["f16", "f32"])
@pytest.mark.parametrize("batch", [(), (2,)], ids=["matrix", "batched"])
def test_b2b_gemm_equals_two_gemms(rng, dtype, batch):
    """cutlass.b2b_gemm = the two op.gemm it fuses (the first one's output, in the
    element type, is the intermediate) = op.b2b_gemm."""
    m, k0, n0, n1 = 24, 40, 32, 16
    epilogue0, epilogue1 = b2b_epilogues()
    inputs = {
        "a": randn(rng, (*batch, m, k0), dtype),
        "b0": randn(rng, (n0, k0), dtype, 1 / np.sqrt(k0)),
        "b1": randn(rng, (n1, n0), dtype, 1 / np.sqrt(n0)),
        "c0": randn(rng, (n0,), dtype),
        "c1": randn(rng, (n1,), dtype),
    }
    result_type = TensorType(element_type_for(dtype), (*batch, m, n1))

    def two_gemms(builder, a, b0, b1, c0, c1):
        first = builder.insert(ops.GemmOp(a, b0, bias=c0, layout_b="col", epilogue=epilogue0)).output
        return builder.insert(ops.GemmOp(first, b1, bias=c1, layout_b="col", epilogue=epilogue1)).output

    def op_b2b(builder, a, b0, b1, c0, c1):
        op = ops.B2bGemmOp(a, b0, b1, bias0=c0, bias1=c1, layout_b0="col", layout_b1="col", epilogue0=epilogue0,
                           epilogue1=epilogue1, result_type=result_type)
        return builder.insert(op).output

    def kernel(builder, a, b0, b1, c0, c1):
        op = template(cutlass.B2bGemmOp, [a, b0, b1, [c0], [c1]], result_type, tile=B2B_TILES[0],
                      tile1=cutlass.TileAttr.make(B2B_TILES[1]), residency=StringAttr("register"),
                      epilogue0=epilogue0, epilogue1=epilogue1)
        return builder.insert(op).output

    expected = run_built(two_gemms, inputs)
    assert_close(run_built(kernel, inputs), expected, SAME)
    assert_close(run_built(op_b2b, inputs), expected, SAME)


def test_b2b_gemm_rounds_the_intermediate(rng):
    """In f16 the intermediate is rounded to f16 between the GEMMs: the kernel is not the
    same as a GEMM chain kept in f32."""
    m, k0, n0, n1 = 16, 64, 32, 16
    inputs = {
        "a": randn(rng, (m, k0), F16),
        "b0": randn(rng, (n0, k0), F16, 1 / np.sqrt(k0)),
        "b1": randn(rng, (n1, n0), F16, 1 / np.sqrt(n0)),
    }
    identity = ops.EpilogueAttr.make()

    def kernel(builder, a, b0, b1):
        op = template(cutlass.B2bGemmOp, [a, b0, b1, [], []], TensorType(element_type_for(F16), (m, n1)), tile=B2B_TILES[0],
                      tile1=cutlass.TileAttr.make(B2B_TILES[1]), residency=StringAttr("shared"),
                      epilogue0=identity, epilogue1=identity)
        return builder.insert(op).output

    got = run_built(kernel, inputs)
    a, b0, b1 = (inputs[name].astype(np.float32) for name in ("a", "b0", "b1"))
    rounded = (a @ b0.T).astype(np.float16).astype(np.float32)
    assert np.array_equal(got, (rounded @ b1.T).astype(np.float16))
    assert not np.array_equal(got, ((a @ b0.T) @ b1.T).astype(np.float16))


@pytest.mark.parametrize("dtype", [F16, F32], ids=["f16", "f32"])
@pytest.mark.parametrize(
    "window",
    [dict(pads=(1, 1, 1, 1)), dict(strides=(2, 2), pads=(0, 1, 1, 0), dilations=(1, 1)), dict(pads=(2, 2, 2, 2), dilations=(2, 2))],
    ids=["same", "strided", "dilated"],
)
def test_b2b_conv2d_equals_two_convs(rng, dtype, window):
    """cutlass.b2b_conv2d = a 3x3 op.conv2d then a 1x1 op.conv2d = op.b2b_conv2d."""
    n, hw, c, k0, k1 = 2, (8, 9), 8, 16, 24
    epilogue0, epilogue1 = b2b_epilogues()
    strides, pads, dilations = window.get("strides", (1, 1)), window["pads"], window.get("dilations", (1, 1))
    inputs = {
        "x": randn(rng, (n, *hw, c), dtype),
        "w0": randn(rng, (k0, 3, 3, c), dtype, 1 / np.sqrt(9 * c)),
        "w1": randn(rng, (k1, 1, 1, k0), dtype, 1 / np.sqrt(k0)),
        "c0": randn(rng, (k0,), dtype),
        "c1": randn(rng, (k1,), dtype),
    }

    def first_conv(builder, x, w0, c0):
        return builder.insert(ops.Conv2dOp(x, w0, bias=c0, strides=strides, pads=pads, dilations=dilations, epilogue=epilogue0)).output

    def two_convs(builder, x, w0, w1, c0, c1):
        return builder.insert(ops.Conv2dOp(first_conv(builder, x, w0, c0), w1, bias=c1, epilogue=epilogue1)).output

    expected = run_built(two_convs, inputs)
    result_type = TensorType(element_type_for(dtype), expected.shape)
    window_props = {"strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations)}

    def op_b2b(builder, x, w0, w1, c0, c1):
        op = ops.B2bConv2dOp(x, w0, w1, bias0=c0, bias1=c1, strides=strides, pads=pads, dilations=dilations,
                             epilogue0=epilogue0, epilogue1=epilogue1, result_type=result_type)
        return builder.insert(op).output

    def kernel(builder, x, w0, w1, c0, c1):
        # K0 = 16 as the first N, K1 = 24 under the second tile's 32.
        op = template(cutlass.B2bConv2dOp, [x, w0, w1, [c0], [c1]], result_type, tile=B2B_TILES[1],
                      tile1=cutlass.TileAttr.make(B2B_TILES[0]), residency=StringAttr("register"),
                      epilogue0=epilogue0, epilogue1=epilogue1, **window_props)
        return builder.insert(op).output

    assert_close(run_built(kernel, inputs), expected, SAME)
    assert_close(run_built(op_b2b, inputs), expected, SAME)
