"""space-to-depth-stem: strided convs on few channels become pad -> space_to_depth -> a
stride-1 conv with rearranged weights, computing the same outputs on fresh random inputs
over kernel sizes, paddings, odd and even sizes, strides 2 to 4 and batch sizes; stride-1
convs and convs on many channels are left as they are."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.passes import statistics
from boltir.passes.common import CHANNELS_LAST
from boltir.passes.space_to_depth_stem import SpaceToDepthStemPass, blocked_weight
from tests.passes.equivalence import assert_equivalent

PASS = SpaceToDepthStemPass()


def conv_model(rng, *, batch, channels, size, kernel, stride, pads, bias=True, filter_layout="OIHW", out_channels=5) -> ModuleOp:
    b = ModelBuilder()
    x = b.input("image", (batch, channels, *size))
    weight = rng.standard_normal((out_channels, channels, *kernel)).astype(np.float32)
    if filter_layout == "OHWI":
        weight = np.ascontiguousarray(weight.transpose(CHANNELS_LAST))
    w = b.constant("conv1.weight", weight)
    c = b.constant("conv1.bias", rng.standard_normal(out_channels).astype(np.float32)) if bias else None
    conv = graph.Conv2dOp(x, w, c, strides=(stride, stride), pads=pads, filter_layout=filter_layout)
    return b.finish([b.insert(graph.ReluOp(b.insert(conv).output)).output])


def graph_ops(module: ModuleOp) -> list:
    return [op for op in module.walk() if isinstance(op, graph.GraphOp) and not isinstance(op, graph.ConstantOp)]


def run_pass(module: ModuleOp, rng) -> tuple[ModuleOp, statistics.PassStatistics]:
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, tolerance=1e-5, trials=2)
    return after, collected


@pytest.mark.parametrize(
    ("batch", "channels", "size", "kernel", "stride", "pads"),
    [
        (2, 3, (32, 32), (7, 7), 2, (3, 3, 3, 3)),  # ResNet-50's stem, smaller
        (1, 3, (17, 16), (3, 3), 2, (1, 1, 1, 1)),  # MobileNetV2's, odd height
        (3, 3, (9, 10), (3, 3), 2, (0, 0, 0, 0)),
        (2, 4, (13, 11), (5, 3), 2, (2, 1, 0, 2)),  # rectangular kernel, uneven pads
        (1, 3, (15, 14), (4, 4), 2, (1, 2, 2, 1)),
        (2, 2, (11, 11), (2, 2), 2, (0, 0, 0, 0)),  # the last row and column unread: cropped
        (1, 1, (19, 21), (8, 8), 4, (2, 2, 2, 2)),  # stride 4
        (2, 1, (10, 13), (3, 5), 3, (1, 2, 0, 1)),  # stride 3, 9 channels
        (4, 3, (7, 7), (7, 7), 2, (3, 3, 3, 3)),  # the kernel as large as the image
        (1, 3, (224, 224), (7, 7), 2, (3, 3, 3, 3)),
        # patch embeddings (s×s/s, unpadded, C <= 4): blocked whatever C·s², a 1×1 conv
        (2, 3, (32, 48), (16, 16), 16, (0, 0, 0, 0)),  # ViT-B/16's, smaller: 768 channels
        (1, 4, (12, 12), (4, 4), 4, (0, 0, 0, 0)),  # 64 channels
        (2, 1, (14, 15), (7, 7), 7, (0, 0, 0, 0)),  # a 15th column never read: cropped
    ],
)
def test_blocked_conv_is_equivalent(rng, batch, channels, size, kernel, stride, pads):
    module = conv_model(rng, batch=batch, channels=channels, size=size, kernel=kernel, stride=stride, pads=pads)
    after, collected = run_pass(module, rng)
    assert collected.get(PASS.name, "convs blocked") == 1
    ops = graph_ops(after)
    names = [op.name for op in ops]
    assert names[-3:] == ["graph.space_to_depth", "graph.conv2d", "graph.relu"]
    assert names[:-3] in ([], ["graph.pad"])
    blocking, conv = ops[-3], ops[-2]
    assert blocking.prop_value("blocksize") == stride
    assert conv.prop_value("strides") == (1, 1) and conv.prop_value("pads") == (0, 0, 0, 0)
    _, c, kh, kw = conv.weight.type.get_shape()
    assert (c, kh, kw) == (channels * stride * stride, -(-kernel[0] // stride), -(-kernel[1] // stride))
    assert conv.bias is not None
    # the original weight is gone: only the blocked one and the bias are left
    assert len([op for op in after.walk() if isinstance(op, graph.ConstantOp)]) == 2


@pytest.mark.parametrize("filter_layout", ["OIHW", "OHWI"])
@pytest.mark.parametrize("bias", [False, True])
def test_filter_layouts_and_no_bias(rng, filter_layout, bias):
    module = conv_model(rng, batch=2, channels=3, size=(12, 9), kernel=(3, 3), stride=2, pads=(1, 1, 1, 1),
                        bias=bias, filter_layout=filter_layout)
    after, collected = run_pass(module, rng)
    assert collected.get(PASS.name, "convs blocked") == 1
    (conv,) = [op for op in after.walk() if isinstance(op, graph.Conv2dOp)]
    assert conv.prop_value("filter_layout") == filter_layout and (conv.bias is not None) == bias


def test_blocked_weight_taps():
    """W'[m, (by·s + bx)·C + c, i, j] = W[m, c, i·s + by, j·s + bx], zero past the kernel."""
    weight = np.arange(2 * 3 * 5 * 3, dtype=np.float32).reshape(2, 3, 5, 3)
    blocked = blocked_weight(weight, 2)
    assert blocked.shape == (2, 12, 3, 2)
    for m in range(2):
        for by in range(2):
            for bx in range(2):
                for c in range(3):
                    for i in range(3):
                        for j in range(2):
                            row, col = 2 * i + by, 2 * j + bx
                            expected = weight[m, c, row, col] if row < 5 and col < 3 else 0.0
                            assert blocked[m, (by * 2 + bx) * 3 + c, i, j] == expected


@pytest.mark.parametrize(
    ("channels", "stride", "pads"),
    [
        (3, 1, (1, 1, 1, 1)),  # stride 1: nothing to block
        (8, 2, (1, 1, 1, 1)),  # 8 · 4 = 32 channels: not a stem
        (5, 2, (0, 0, 0, 0)),  # 20 channels
        (2, 3, (1, 1, 1, 1)),  # 18 channels
        (5, 3, (0, 0, 0, 0)),  # 45 channels: a 3×3/3 on 5 channels is no patch embedding (C > 4)
    ],
)
def test_leaves_other_convs_alone(rng, channels, stride, pads):
    module = conv_model(rng, batch=1, channels=channels, size=(12, 12), kernel=(3, 3), stride=stride, pads=pads)
    before = str(module)
    with statistics.collecting() as collected:
        PASS.apply(None, module)
    assert str(module) == before
    assert collected.get(PASS.name, "convs blocked") == 0
    assert not collected.notes.get(PASS.name)


def test_max_channels_option(rng):
    """max_channels = 12 keeps C = 4 at stride 2 (16 channels) as it is, and still
    blocks C = 3."""
    narrow = SpaceToDepthStemPass(max_channels=12)
    four = conv_model(rng, batch=1, channels=4, size=(8, 8), kernel=(3, 3), stride=2, pads=(1, 1, 1, 1))
    before = str(four)
    narrow.apply(None, four)
    assert str(four) == before
    three = conv_model(rng, batch=1, channels=3, size=(8, 8), kernel=(3, 3), stride=2, pads=(1, 1, 1, 1))
    assert_equivalent(three, narrow, rng)


def test_nhwc_conv_is_noted(rng):
    """After convert-layout the conv is NHWC: the pass says to run it before."""
    b = ModelBuilder()
    x = b.input("image", (1, 8, 8, 3))
    w = b.constant("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
    b.insert(graph.Conv2dOp(x, w, strides=(2, 2), pads=(1, 1, 1, 1), layout="NHWC", filter_layout="OHWI"))
    module = b.finish([b.block.last_op.output])
    with statistics.collecting() as collected:
        PASS.apply(None, module)
    assert collected.get(PASS.name, "convs blocked") == 0
    (note,) = collected.notes[PASS.name]
    assert note.endswith("alone: its layout is not NCHW (run space-to-depth-stem before convert-layout)")
