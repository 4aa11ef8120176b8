"""fold-batchnorm: BNs folded into convs and gemms, or turned into scale and shift; the
module computes the same outputs on fresh random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.passes import statistics
from boltir.passes.fold_batchnorm import FoldBatchNormPass
from tests.passes.equivalence import assert_equivalent

PASS = FoldBatchNormPass()


def batch_norm(b: ModelBuilder, x: SSAValue, rng: np.random.Generator, name: str = "bn", epsilon: float = 1e-5):
    channels = x.type.get_shape()[1]
    params = [
        rng.uniform(0.5, 1.5, channels),  # scale
        rng.normal(0.0, 0.5, channels),  # bias
        rng.normal(0.0, 0.5, channels),  # mean
        rng.uniform(0.5, 2.0, channels),  # variance
    ]
    values = [b.constant(f"{name}.{part}", p.astype(np.float32)) for part, p in zip(("weight", "bias", "mean", "var"), params)]
    return b.insert(graph.BatchNormOp(x, *values, epsilon=epsilon)).output


def weight(b: ModelBuilder, name: str, shape, rng: np.random.Generator) -> SSAValue:
    return b.constant(name, rng.standard_normal(shape).astype(np.float32))


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.") and op.name != "graph.constant"]


def run_pass(module: ModuleOp, rng: np.random.Generator) -> tuple[ModuleOp, statistics.PassStatistics]:
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    return after, collected


def stat(collected: statistics.PassStatistics, what: str) -> int:
    return collected.get(PASS.name, what)


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize(
    ("in_channels", "out_channels", "group", "strides"),
    [(3, 5, 1, (1, 1)), (6, 9, 3, (2, 1)), (7, 7, 7, (1, 1))],  # odd, grouped, depthwise
)
def test_conv2d(rng, with_bias, in_channels, out_channels, group, strides):
    b = ModelBuilder()
    x = b.input("x", (2, in_channels, 9, 7))
    w = weight(b, "conv.weight", (out_channels, in_channels // group, 3, 3), rng)
    bias = weight(b, "conv.bias", (out_channels,), rng) if with_bias else None
    y = b.insert(graph.Conv2dOp(x, w, bias, strides=strides, pads=(1, 0, 1, 2), group=group)).output
    module = b.finish([b.insert(graph.ReluOp(batch_norm(b, y, rng, epsilon=1e-3))).output])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.conv2d", "graph.relu"]
    (conv,) = [op for op in after.walk() if isinstance(op, graph.Conv2dOp)]
    assert conv.bias is not None and conv.prop_value("group") == group and conv.prop_value("strides") == strides
    assert stat(collected, "batchnorms folded into conv") == 1


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize(("in_channels", "out_channels", "group"), [(3, 5, 1), (4, 6, 2), (5, 5, 5)])
def test_conv_transpose2d(rng, with_bias, in_channels, out_channels, group):
    b = ModelBuilder()
    x = b.input("x", (1, in_channels, 5, 6))
    w = weight(b, "up.weight", (in_channels, out_channels // group, 3, 3), rng)
    bias = weight(b, "up.bias", (out_channels,), rng) if with_bias else None
    y = b.insert(graph.ConvTranspose2dOp(x, w, bias, strides=(2, 2), pads=(1, 1, 1, 1), group=group)).output
    module = b.finish([batch_norm(b, y, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.conv_transpose2d"]
    assert stat(collected, "batchnorms folded into conv") == 1


@pytest.mark.parametrize(
    ("trans_a", "trans_b", "alpha", "beta", "c_shape"),
    [
        (False, False, 1.0, 1.0, None),
        (False, True, 1.0, 1.0, (7,)),
        (True, False, 0.5, 2.0, (3, 1)),
        (True, True, 1.5, 0.0, (3, 7)),
        (False, True, 1.0, 0.5, ()),
    ],
)
def test_gemm(rng, trans_a, trans_b, alpha, beta, c_shape):
    b = ModelBuilder()
    a = b.input("a", (5, 3) if trans_a else (3, 5))
    matrix = weight(b, "fc.weight", (7, 5) if trans_b else (5, 7), rng)
    c = weight(b, "fc.bias", c_shape, rng) if c_shape is not None else None
    y = b.insert(graph.GemmOp(a, matrix, c, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b)).output
    module = b.finish([batch_norm(b, y, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.gemm"]
    assert stat(collected, "batchnorms folded into gemm") == 1


def test_matmul_becomes_gemm(rng):
    b = ModelBuilder()
    a = b.input("a", (4, 6))
    y = b.insert(graph.MatMulOp(a, weight(b, "fc.weight", (6, 3), rng))).output
    module = b.finish([batch_norm(b, y, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.gemm"]
    assert stat(collected, "batchnorms folded into gemm") == 1


def test_batched_matmul_gets_scale_and_shift(rng):
    """BN over axis 1 of a batched matmul normalizes rows of each batch: no fold."""
    b = ModelBuilder()
    a = b.input("a", (2, 5, 6))
    y = b.insert(graph.MatMulOp(a, weight(b, "fc.weight", (6, 3), rng))).output
    module = b.finish([batch_norm(b, y, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.matmul", "graph.mul", "graph.add"]
    assert stat(collected, "batchnorms turned into scale and shift") == 1


@pytest.mark.parametrize("shape", [(2, 5, 4, 3), (3, 7), (2, 3, 5)])
def test_lone_batch_norm_on_input(rng, shape):
    b = ModelBuilder()
    x = b.input("x", shape)
    module = b.finish([batch_norm(b, x, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.mul", "graph.add"]
    (scale,) = [op for op in after.walk() if isinstance(op, graph.MulOp)]
    assert scale.rhs.type.get_shape() == (shape[1],) + (1,) * (len(shape) - 2)
    assert stat(collected, "batchnorms turned into scale and shift") == 1


def test_conv_with_other_users_is_kept(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    y = b.insert(graph.Conv2dOp(x, weight(b, "conv.weight", (5, 3, 1, 1), rng))).output
    module = b.finish([batch_norm(b, y, rng), y])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.conv2d", "graph.mul", "graph.add"]
    assert stat(collected, "batchnorms turned into scale and shift") == 1
    assert any("other users" in note for note in collected.notes[PASS.name])


def test_non_constant_weight_gets_scale_and_shift(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    w = b.input("w", (5, 3, 3, 3))
    y = b.insert(graph.Conv2dOp(x, w, pads=(1, 1, 1, 1))).output
    module = b.finish([batch_norm(b, y, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.conv2d", "graph.mul", "graph.add"]
    assert any("not a constant" in note for note in collected.notes[PASS.name])


def test_nhwc_conv_is_not_folded(rng):
    """A BN normalizes axis 1, which is H after an NHWC conv: it becomes scale and shift."""
    b = ModelBuilder()
    x = b.input("x", (1, 6, 5, 3))
    y = b.insert(graph.Conv2dOp(x, weight(b, "conv.weight", (4, 3, 3, 3), rng), pads=(1, 1, 1, 1), layout="NHWC")).output
    module = b.finish([batch_norm(b, y, rng)])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.conv2d", "graph.mul", "graph.add"]
    assert stat(collected, "batchnorms turned into scale and shift") == 1
    assert any("its layout is not NCHW" in note for note in collected.notes[PASS.name])


@pytest.mark.parametrize("transposed", [False, True])
def test_channels_last_filters(rng, transposed):
    """OHWI (conv2d) and IHWO (conv_transpose2d) weights fold like ONNX-ordered ones."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    if transposed:  # C x kH x kW x M/group
        w = weight(b, "up.weight", (4, 3, 3, 3), rng)
        conv = graph.ConvTranspose2dOp(x, w, group=2, filter_layout="IHWO")
    else:  # M x kH x kW x C/group
        w = weight(b, "conv.weight", (6, 3, 3, 2), rng)
        conv = graph.Conv2dOp(x, w, group=2, pads=(1, 1, 1, 1), filter_layout="OHWI")
    module = b.finish([batch_norm(b, b.insert(conv).output, rng)])

    after, collected = run_pass(module, rng)
    assert len(op_names(after)) == 1
    assert stat(collected, "batchnorms folded into conv") == 1


def test_non_constant_statistics_stay(rng):
    b = ModelBuilder()
    x = b.input("x", (2, 3, 4, 4))
    mean = b.input("mean", (3,))
    ones = b.constant("ones", np.ones(3, np.float32))
    module = b.finish([b.insert(graph.BatchNormOp(x, ones, ones, mean, ones)).output])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.batch_norm"]
    assert collected.notes[PASS.name] == ["left graph.batch_norm alone: its statistics are not constants"]


def test_unused_weights_are_removed(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    y = b.insert(graph.Conv2dOp(x, weight(b, "conv.weight", (4, 3, 3, 3), rng))).output
    module = b.finish([batch_norm(b, batch_norm(b, y, rng, "bn1"), rng, "bn2")])

    after, collected = run_pass(module, rng)
    constants = [op for op in after.walk() if isinstance(op, graph.ConstantOp)]
    assert len(constants) == 2  # the folded weight and bias
    assert stat(collected, "batchnorms folded into conv") == 2
