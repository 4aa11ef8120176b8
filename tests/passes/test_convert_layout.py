"""convert-layout: convs and pools go NHWC, the transposes around them cancel, and the
module computes the same outputs on fresh random inputs."""

from __future__ import annotations

import os

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue

import boltir
from boltir.builder import ModelBuilder
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.passes import statistics
from boltir.passes.convert_layout import ConvertLayoutPass
from tests.passes.equivalence import assert_equivalent

PASS = ConvertLayoutPass()


# ------------------------------------------------------------------------- helpers


def weight(b: ModelBuilder, name: str, shape, rng: np.random.Generator, scale: float | None = None) -> SSAValue:
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    scale = scale if scale is not None else 1.0 / np.sqrt(fan_in)
    return b.constant(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def conv(b: ModelBuilder, x: SSAValue, out_channels: int, rng, name: str, kernel: int = 3, group: int = 1, bias=True, **attrs):
    in_channels = x.type.get_shape()[1]
    w = weight(b, f"{name}.weight", (out_channels, in_channels // group, kernel, kernel), rng)
    bias_value = weight(b, f"{name}.bias", (out_channels,), rng, 0.1) if bias else None
    pads = attrs.pop("pads", (kernel // 2,) * 4)
    return b.insert(graph.Conv2dOp(x, w, bias_value, pads=pads, group=group, **attrs)).output


def relu(b: ModelBuilder, x: SSAValue) -> SSAValue:
    return b.insert(graph.ReluOp(x)).output


def batch_norm(b: ModelBuilder, x: SSAValue, rng, name: str = "bn") -> SSAValue:
    channels = x.type.get_shape()[1]
    params = [rng.uniform(0.5, 1.5, channels), rng.normal(0, 0.5, channels), rng.normal(0, 0.5, channels), rng.uniform(0.5, 2, channels)]
    values = [b.constant(f"{name}.{p}", v.astype(np.float32)) for p, v in zip(("weight", "bias", "mean", "var"), params)]
    return b.insert(graph.BatchNormOp(x, *values)).output


def ops_named(module: ModuleOp, name: str) -> list:
    return [op for op in module.walk() if op.name == name]


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.") and op.name != "graph.constant"]


def run_pass(module: ModuleOp, rng, pass_: ConvertLayoutPass = PASS, tolerance: float = 1e-5):
    with statistics.collecting() as collected:
        after = assert_equivalent(module, pass_, rng, tolerance=tolerance)
    return after, collected


def stats(collected: statistics.PassStatistics) -> dict[str, int]:
    return dict(collected.counters.get(PASS.name, {}))


def assert_all_nhwc(module: ModuleOp) -> None:
    for op in module.walk():
        if isinstance(op, graph.Conv2dOp | graph.ConvTranspose2dOp | graph.MaxPool2dOp | graph.AvgPool2dOp | graph.GlobalAvgPoolOp):
            assert op.prop_value("layout") == "NHWC", op
        if isinstance(op, graph.Conv2dOp):
            assert op.prop_value("filter_layout") == "OHWI"
        if isinstance(op, graph.ConvTranspose2dOp):
            assert op.prop_value("filter_layout") == "IHWO"


def transposes_read_inputs(module: ModuleOp) -> bool:
    return all(isinstance(op.input, BlockArgument) for op in ops_named(module, "graph.transpose"))


# --------------------------------------------------------------------------- convs


def test_single_conv_odd_channels(rng):
    """Nothing to cancel around one conv: NCHW in and out needs both transposes."""
    b = ModelBuilder()
    x = b.input("x", (2, 3, 9, 7))
    module = b.finish([conv(b, x, 5, rng, "conv", strides=(2, 1), pads=(1, 0, 2, 1))])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    (weight_op,) = [op for op in after.walk() if isinstance(op, graph.ConstantOp) and op.output.type.get_shape() == (5, 3, 3, 3)]
    assert op_names(after) == ["graph.transpose", "graph.conv2d", "graph.transpose"]
    assert stats(collected) == {
        "transposes inserted": 2,
        "weights transposed": 1,
        "convs converted": 1,
        "transposes cancelled": 0,
        "transposes left": 2,
    }
    assert weight_op.output.uses.get_length() == 1


def test_conv_chain_cancels(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 8, 8))
    y = relu(b, conv(b, x, 5, rng, "conv1"))
    y = b.insert(graph.ClipOp(conv(b, y, 7, rng, "conv2"), 0.0, 6.0)).output
    module = b.finish([conv(b, y, 3, rng, "conv3", kernel=1)])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    assert op_names(after) == [
        "graph.transpose", "graph.conv2d", "graph.relu", "graph.conv2d", "graph.clip", "graph.conv2d", "graph.transpose",
    ]
    counts = stats(collected)
    assert counts["transposes inserted"] == 6
    assert counts["transposes cancelled"] == 4
    assert counts["transposes left"] == 2


def test_depthwise_separable(rng):
    """MobileNet's block: depthwise (odd channels, with a multiplier) then pointwise."""
    b = ModelBuilder()
    x = b.input("x", (2, 7, 9, 9))
    y = b.insert(graph.ClipOp(conv(b, x, 7, rng, "dw", group=7, strides=(2, 2)), 0.0, 6.0)).output
    y = relu(b, conv(b, y, 14, rng, "dw2", group=7))
    module = b.finish([conv(b, y, 5, rng, "pw", kernel=1, bias=False)])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    dw = ops_named(after, "graph.conv2d")[0]
    assert dw.weight.type.get_shape() == (7, 3, 3, 1)  # OHWI: M x kH x kW x C/group
    assert stats(collected)["transposes left"] == 2
    assert stats(collected)["convs converted"] == 3


def test_non_constant_weight_gets_a_transpose(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    w = b.input("w", (4, 3, 3, 3))
    module = b.finish([b.insert(graph.Conv2dOp(x, w, pads=(1, 1, 1, 1))).output])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    assert stats(collected)["transposes inserted"] == 3
    assert "weights transposed" not in stats(collected)
    assert stats(collected)["transposes left"] == 3


def test_conv_transpose(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 6, 5, 5))
    y = relu(b, conv(b, x, 4, rng, "conv"))
    w = weight(b, "up.weight", (4, 3, 4, 4), rng)
    up = b.insert(graph.ConvTranspose2dOp(y, w, strides=(2, 2), pads=(1, 1, 1, 1))).output
    up6 = b.insert(graph.ConvTranspose2dOp(up, weight(b, "up2.weight", (3, 3, 3, 3), rng), group=3, output_padding=(0, 0))).output
    module = b.finish([relu(b, up6)])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    first = ops_named(after, "graph.conv_transpose2d")[0]
    assert first.weight.type.get_shape() == (4, 4, 4, 3)  # IHWO: C x kH x kW x M/group
    assert stats(collected)["transposes left"] == 2


# --------------------------------------------------------------------------- pools


def test_pools_with_padding_and_ceil_mode(rng):
    b = ModelBuilder()
    x = b.input("x", (2, 3, 11, 10))
    y = relu(b, conv(b, x, 5, rng, "conv1"))
    y = b.insert(graph.MaxPool2dOp(y, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True)).output
    y = b.insert(graph.AvgPool2dOp(y, (3, 2), strides=(2, 2), pads=(1, 0, 1, 1), ceil_mode=True, count_include_pad=True)).output
    y = b.insert(graph.MaxPool2dOp(y, (2, 2), dilations=(1, 1))).output
    module = b.finish([conv(b, y, 3, rng, "conv2")])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    counts = stats(collected)
    assert counts["pools converted"] == 3
    assert counts["transposes left"] == 2
    assert counts["transposes cancelled"] == 8


@pytest.mark.parametrize("pool", ["max", "global"])
def test_pool_feeding_flatten_gemm_classifier(rng, pool):
    """No transpose before the classifier: after a global pool the flatten of the
    channels-last N×1×1×C needs none; after a 2x2 pool the gemm's weight rows are
    permuted at compile time instead."""
    b = ModelBuilder()
    x = b.input("x", (2, 3, 8, 8))
    y = relu(b, conv(b, x, 5, rng, "conv", strides=(2, 2)))
    if pool == "max":
        y = b.insert(graph.MaxPool2dOp(y, (2, 2), strides=(2, 2))).output  # 2x5x2x2
    else:
        y = b.insert(graph.GlobalAvgPoolOp(y)).output  # 2x5x1x1
    flat = b.insert(graph.FlattenOp(y, 1)).output
    features = flat.type.get_shape()[1]
    logits = b.insert(graph.GemmOp(flat, weight(b, "fc.weight", (10, features), rng), weight(b, "fc.bias", (10,), rng), trans_b=True)).output
    module = b.finish([b.insert(graph.SoftmaxOp(logits)).output])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    counts = stats(collected)
    assert counts["transposes left"] == 1
    assert transposes_read_inputs(after)
    assert "graph.reshape" not in op_names(after)
    assert op_names(after)[-3:] == ["graph.flatten", "graph.gemm", "graph.softmax"]
    assert counts["transposes cancelled"] == 3
    assert ("classifier weights permuted" in counts) == (pool == "max")
    assert "transposes turned into reshapes" not in counts


def test_flatten_matmul_classifier(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    y = b.insert(graph.AvgPool2dOp(conv(b, x, 4, rng, "conv"), (3, 3), strides=(3, 3))).output
    flat = b.insert(graph.ReshapeOp(y, (1, 16))).output
    module = b.finish([b.insert(graph.MatMulOp(flat, weight(b, "fc.weight", (16, 6), rng))).output])

    after, collected = run_pass(module, rng)
    assert stats(collected)["transposes left"] == 1
    assert stats(collected)["classifier weights permuted"] == 1


# ------------------------------------------------------------ through other ops


def test_residual_adds_with_broadcast_constants(rng):
    """Constants broadcast from the right: [C,1,1] becomes [1,1,C], [1,C,1,1] becomes
    [1,1,1,C], [W] becomes [W,1]; a scalar stays; a broadcast input is reshaped."""
    b = ModelBuilder()
    x = b.input("x", (2, 5, 6, 7))
    gate = b.input("gate", (5, 1, 1))
    h = relu(b, conv(b, x, 5, rng, "conv1"))
    h = conv(b, h, 5, rng, "conv2")
    h = b.insert(graph.MulOp(h, b.constant("scale", rng.uniform(0.5, 1.5, (5, 1, 1)).astype(np.float32)))).output
    h = b.insert(graph.AddOp(b.constant("shift", rng.normal(size=(1, 5, 1, 1)).astype(np.float32)), h)).output
    h = b.insert(graph.SubOp(h, b.constant("ramp", rng.normal(size=(7,)).astype(np.float32)))).output
    h = b.insert(graph.DivOp(h, b.constant("two", np.array(2.0, np.float32)))).output
    h = b.insert(graph.MulOp(h, gate)).output
    y = relu(b, b.insert(graph.AddOp(h, x)).output)  # the residual: x is the block input
    y = b.insert(graph.SumOp([y, conv(b, y, 5, rng, "conv3"), b.constant("bias", rng.normal(size=(5, 1, 1)).astype(np.float32))])).output
    module = b.finish([conv(b, y, 3, rng, "conv4")])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    shapes = {op.output.type.get_shape() for op in after.walk() if isinstance(op, graph.ConstantOp)}
    assert {(1, 1, 5), (1, 1, 1, 5), (7, 1), ()} <= shapes
    transposes = ops_named(after, "graph.transpose")
    assert [t.input.name_hint for t in transposes[:1]] == ["x"]
    # x feeds conv1 and the residual add: one transpose serves both; one more at the output.
    assert stats(collected)["transposes left"] == 2
    assert len(ops_named(after, "graph.reshape")) == 1  # the gate, [5,1,1] -> [1,1,5]


def test_elementwise_with_an_unrelated_operand_stays(rng):
    """An operand that would need a real transpose keeps the op where it is."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 6))
    other = b.input("other", (1, 4, 5, 6))
    y = b.insert(graph.AddOp(conv(b, x, 4, rng, "conv"), other)).output
    module = b.finish([y])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.transpose", "graph.conv2d", "graph.transpose", "graph.add"]
    assert stats(collected)["transposes left"] == 2


def test_concat_along_channels(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 8, 8))
    left = relu(b, conv(b, x, 5, rng, "left"))
    right = relu(b, conv(b, x, 3, rng, "right", kernel=1))
    y = b.insert(graph.ConcatOp([left, right], 1)).output
    z = b.insert(graph.ConcatOp([y, b.constant("extra", rng.normal(size=(1, 2, 8, 8)).astype(np.float32))], -3)).output
    module = b.finish([conv(b, z, 4, rng, "fuse")])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    assert [op.prop_value("axis") for op in ops_named(after, "graph.concat")] == [3, 3]
    assert stats(collected)["transposes left"] == 2  # one of x (for both convs), one out


def test_split_slice_pad_resize(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 7))
    y = conv(b, x, 6, rng, "conv1")
    a, c = b.insert(graph.SplitOp(y, (2, 4), axis=1)).outputs
    c = b.insert(graph.SliceOp(c, [1, 0], [3, 5], [1, -1], [1, 2])).output  # 1x2x6x3
    a = b.insert(graph.PadOp(a, (0, 0, 1, 0, 0, 0, 1, 2), mode="reflect")).output  # 1x2x8x9
    a = b.insert(graph.ResizeOp(a, (1.0, 1.0, 0.5, 0.5), mode="linear")).output  # 1x2x4x4
    c = b.insert(graph.ResizeOp(c, (1.0, 1.0, 2.0 / 3.0, 4.0 / 3.0), mode="nearest", sizes=(1, 2, 4, 4))).output
    module = b.finish([conv(b, b.insert(graph.ConcatOp([a, c], 1)).output, 3, rng, "conv2")])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    assert stats(collected)["transposes left"] == 2
    assert ops_named(after, "graph.split")[0].prop_value("axis") == 3
    assert ops_named(after, "graph.pad")[0].prop_value("pads") == (0, 1, 0, 0, 0, 1, 2, 0)


@pytest.mark.parametrize("groups", [2, 3])
def test_channel_shuffle(rng, groups):
    """ShuffleNet's shuffle, reshape -> transpose -> reshape between grouped convs: in
    NHWC it keeps its own transpose (of the two channel factors) and nothing more."""
    b = ModelBuilder()
    x = b.input("x", (2, 6, 5, 4))
    y = relu(b, conv(b, x, 6, rng, "gconv1", kernel=1, group=groups))
    y = b.insert(graph.ReshapeOp(y, (2, groups, 6 // groups, 5, 4))).output
    y = b.insert(graph.TransposeOp(y, (0, 2, 1, 3, 4))).output
    y = b.insert(graph.ReshapeOp(y, (2, 6, 5, 4))).output
    module = b.finish([conv(b, y, 6, rng, "dw", group=6)])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    shuffle = [op for op in ops_named(after, "graph.transpose") if len(op.prop_value("perm")) == 5]
    assert [op.prop_value("perm") for op in shuffle] == [(0, 1, 2, 4, 3)]
    assert stats(collected)["transposes left"] == 3  # in, the shuffle, out


def test_reshape_that_mixes_layouts_stays(rng):
    """A reshape whose result is layout-sensitive (rows of C, then H·W) keeps the
    transpose before it."""
    b = ModelBuilder()
    x = b.input("x", (1, 3, 4, 6))
    rows = b.insert(graph.ReshapeOp(conv(b, x, 4, rng, "conv"), (4, 24))).output
    module = b.finish([b.insert(graph.SoftmaxOp(rows)).output])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["graph.transpose", "graph.conv2d", "graph.transpose", "graph.reshape", "graph.softmax"]


def test_softmax_and_reductions_over_channels(rng):
    b = ModelBuilder()
    x = b.input("x", (2, 5, 4, 3))
    y = b.insert(graph.SoftmaxOp(conv(b, x, 5, rng, "conv"), axis=1)).output
    pooled = b.insert(graph.ReduceMeanOp(y, (2, -1), keepdims=False)).output  # 2x5
    peak = b.insert(graph.ReduceMaxOp(y, (1,), keepdims=True)).output  # 2x1x4x3
    module = b.finish([pooled, peak])

    after, collected = run_pass(module, rng)
    assert ops_named(after, "graph.softmax")[0].prop_value("axis") == 3
    assert ops_named(after, "graph.reduce_mean")[0].prop_value("axes") == (1, 2)
    # The mean's result is N x C either way; the max's N x H x W x 1 is a reshape away.
    assert stats(collected)["transposes left"] == 1
    assert stats(collected)["transposes turned into reshapes"] == 1


def test_batch_norm_becomes_scale_and_shift(rng):
    b = ModelBuilder()
    x = b.input("x", (2, 3, 6, 6))
    y = relu(b, batch_norm(b, conv(b, x, 5, rng, "conv1", bias=False), rng))
    module = b.finish([conv(b, y, 4, rng, "conv2")])

    after, collected = run_pass(module, rng)
    assert "graph.batch_norm" not in op_names(after)
    assert stats(collected)["batchnorms rewritten"] == 1
    assert stats(collected)["transposes left"] == 2
    (scale,) = [op for op in ops_named(after, "graph.mul")]
    assert scale.rhs.type.get_shape() == (5,)


def test_batch_norm_with_runtime_statistics_stays_behind_a_transpose(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 5, 5))
    mean = b.input("mean", (4,))
    ones = b.constant("ones", np.ones(4, np.float32))
    y = b.insert(graph.BatchNormOp(conv(b, x, 4, rng, "conv"), ones, ones, mean, ones)).output
    module = b.finish([y])

    after, _ = run_pass(module, rng)
    assert op_names(after) == ["graph.transpose", "graph.conv2d", "graph.transpose", "graph.batch_norm"]


def test_squeeze_excitation(rng):
    """SE block: global pool, two 1x1 convs, a sigmoid gate multiplied back in."""
    b = ModelBuilder()
    x = b.input("x", (2, 3, 6, 6))
    y = relu(b, conv(b, x, 6, rng, "conv"))
    s = b.insert(graph.GlobalAvgPoolOp(y)).output
    s = relu(b, conv(b, s, 3, rng, "fc1", kernel=1))
    s = b.insert(graph.SigmoidOp(conv(b, s, 6, rng, "fc2", kernel=1))).output
    module = b.finish([conv(b, b.insert(graph.MulOp(y, s)).output, 4, rng, "out")])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    assert stats(collected)["transposes left"] == 2
    assert "graph.reshape" not in op_names(after)


def test_feature_map_output_keeps_one_transpose(rng):
    """A conv result that is also a model output keeps its transpose for that output."""
    b = ModelBuilder()
    x = b.input("x", (1, 3, 5, 5))
    y = conv(b, x, 4, rng, "conv1")
    module = b.finish([y, conv(b, relu(b, y), 2, rng, "conv2")])

    after, collected = run_pass(module, rng)
    assert stats(collected)["transposes left"] == 3


def test_transpose_not_duplicated_where_nothing_cancels(rng):
    """The conv's result feeds a layout-sensitive reshape and, through a relu chain, a
    model output: moving the transpose past the relus cancels nothing, so it is taken
    back and the one transpose serves both."""
    b = ModelBuilder()
    x = b.input("x", (1, 3, 4, 6))
    y = conv(b, x, 4, rng, "conv")
    rows = b.insert(graph.ReshapeOp(y, (4, 24))).output
    z = b.insert(graph.SigmoidOp(relu(b, y))).output
    module = b.finish([rows, z])

    after, collected = run_pass(module, rng)
    assert stats(collected)["transposes left"] == 2
    assert op_names(after) == ["graph.transpose", "graph.conv2d", "graph.transpose", "graph.reshape", "graph.relu", "graph.sigmoid"]


def test_global_avg_pool_other_ranks(rng):
    """global_avg_pool goes channels last at any rank."""
    b = ModelBuilder()
    x = b.input("x", (2, 5, 7))
    y = b.input("y", (1, 3, 2, 4, 5))
    px = b.insert(graph.GlobalAvgPoolOp(b.insert(graph.ExpOp(x)).output)).output
    py = b.insert(graph.GlobalAvgPoolOp(y)).output
    module = b.finish([px, py])

    after, collected = run_pass(module, rng)
    assert_all_nhwc(after)
    assert stats(collected)["pools converted"] == 2
    # Their N x 1 x C results are reshapes away from N x C x 1.
    assert stats(collected)["transposes left"] == 2
    assert stats(collected)["transposes turned into reshapes"] == 2


def test_back_to_nchw(rng):
    """layout=NCHW undoes NHWC: the transposes cancel again, none is left."""
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    y = b.insert(graph.MaxPool2dOp(relu(b, conv(b, x, 5, rng, "conv1")), (2, 2), strides=(2, 2))).output
    module = b.finish([conv(b, y, 4, rng, "conv2")])

    nhwc = assert_equivalent(module, PASS, rng)
    back = assert_equivalent(nhwc, ConvertLayoutPass(layout="NCHW"), rng)
    for op in back.walk():
        if isinstance(op, graph.Conv2dOp | graph.MaxPool2dOp):
            assert op.prop_value("layout") == "NCHW"
        if isinstance(op, graph.Conv2dOp):
            assert op.prop_value("filter_layout") == "OIHW"
    assert "graph.transpose" not in op_names(back)
    assert_equivalent(module, lambda m: None, rng)  # (the original still runs)


def test_second_run_changes_nothing(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    module = b.finish([relu(b, conv(b, relu(b, conv(b, x, 5, rng, "c1")), 4, rng, "c2"))])
    once = assert_equivalent(module, PASS, rng)
    with statistics.collecting() as collected:
        twice = assert_equivalent(once, PASS, rng)
    assert stats(collected) == {"transposes cancelled": 0, "transposes left": 2}
    assert op_names(twice) == op_names(once)


def test_bad_layout_argument():
    with pytest.raises(BoltError, match="layout must be one of NCHW, NHWC, got 'NWHC'"):
        ConvertLayoutPass(layout="NWHC")


# ------------------------------------------------------------------------ ResNet-50


def randomized_light_resnet50(rng: np.random.Generator):
    """The onnx wheel's ResNet-50 topology with every weight fresh and random.

    Its stored weights are ConstantOfShape nodes that fill 0.02 and initializers; each
    becomes a random initializer: convs and the classifier scaled by 1/sqrt(fan-in), BN
    scales and variances in [0.5, 1), shifts and means small, so that the logits stay
    near 1 and the softmax is not saturated."""
    import onnx
    from onnx import helper, numpy_helper

    path = os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light/light_resnet50.onnx")
    model = onnx.load(path)
    g = model.graph
    initializers = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    batch_norms = [n for n in g.node if n.op_type == "BatchNormalization"]
    positive = {n.input[1] for n in batch_norms} | {n.input[4] for n in batch_norms}
    shapes = {}
    nodes = []
    for node in g.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in initializers:
            shapes[node.output[0]] = tuple(int(d) for d in initializers[node.input[0]])
        else:
            nodes.append(node)
    used = {name for node in nodes for name in node.input}
    shapes.update({name: a.shape for name, a in initializers.items() if a.dtype.kind == "f" and name in used})
    arrays = {}
    for name, shape in shapes.items():
        if name in positive:
            arrays[name] = rng.uniform(0.5, 1.0, shape)
        elif len(shape) >= 2:
            arrays[name] = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
        else:
            arrays[name] = rng.standard_normal(shape) * 0.1
    arrays = {name: a.astype(np.float32) for name, a in arrays.items()}
    arrays.update({name: a for name, a in initializers.items() if a.dtype.kind != "f" and name in used})
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(numpy_helper.from_array(a, name) for name, a in arrays.items())
    data = [i for i in g.input if i.name == "gpu_0/data_0"]
    del g.input[:]
    g.input.extend(data)  # opset 9 (IR version 3) lists initializers as inputs too
    g.input.extend(
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for name, a in arrays.items()
    )
    return model


def test_resnet50_has_one_transpose_at_the_input(rng):
    """The issue's goal, on the real ResNet-50 topology (BNs not folded): every conv and
    pool NHWC, one transpose left and it reads the image, none before the classifier."""
    pytest.importorskip("onnx")
    from boltir.frontends.onnx import import_model

    module = import_model(randomized_light_resnet50(rng))
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, trials=1)

    assert_all_nhwc(after)
    assert len(ops_named(after, "graph.conv2d")) == 53
    (transpose,) = ops_named(after, "graph.transpose")
    assert isinstance(transpose.input, BlockArgument)
    assert transpose.prop_value("perm") == (0, 2, 3, 1)
    assert op_names(after)[-3:] == ["graph.reshape", "graph.gemm", "graph.softmax"]
    counts = stats(collected)
    assert counts["convs converted"] == 53
    assert counts["pools converted"] == 2
    assert counts["batchnorms rewritten"] == 53
    assert counts["transposes inserted"] == 110
    assert "transposes turned into reshapes" not in counts  # the pool's goes with the reshape
    assert counts["transposes cancelled"] == 109
    assert counts["transposes left"] == 1
    text = statistics.format_statistics(collected)
    assert "1 transposes left" in text


# ----------------------------------------------------------------- the reshape rule


def random_reshape_target(shape, rng) -> tuple[int, ...]:
    """Merges runs of adjacent dims, splits some into two factors, adds or drops 1s."""
    dims = [d for d in shape if d != 1 or rng.random() < 0.5]
    merged: list[int] = []
    for d in dims:
        if merged and rng.random() < 0.4:
            merged[-1] *= d
        else:
            merged.append(d)
    target: list[int] = []
    for d in merged:
        factors = [f for f in range(2, d) if d % f == 0]
        if factors and rng.random() < 0.4:
            f = int(rng.choice(factors))
            target += [f, d // f]
        else:
            target.append(d)
        if rng.random() < 0.2:
            target.append(1)
    return tuple(target) or (1,)


def test_reshape_plan_matches_numpy(rng):
    """reshape(transpose(x, p)) == transpose(reshape(transpose(x, inner), shape), outer)
    for random shapes, perms and reshapes (split, merged, with size-1 dims)."""
    from boltir.passes.convert_layout import reshape_plan

    planned = 0
    for _ in range(400):
        shape = tuple(int(d) for d in rng.choice([1, 2, 3, 4, 6], size=int(rng.integers(2, 6))))
        perm = tuple(int(p) for p in rng.permutation(len(shape)))
        x = rng.standard_normal(shape)
        transposed = x.transpose(perm)
        target = random_reshape_target(transposed.shape, rng)
        plan = reshape_plan(shape, perm, target)
        assert plan is not None  # any row-major reshape lines up
        inner, new_shape, outer = plan
        planned += 1
        got = x.transpose(inner).reshape(new_shape).transpose(outer)
        np.testing.assert_array_equal(got, transposed.reshape(target), err_msg=f"{shape} {perm} {target}")
    assert planned == 400
