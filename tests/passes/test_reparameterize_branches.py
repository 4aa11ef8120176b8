"""reparameterize-branches: RepVGG-style parallel branches merged into one 3x3 conv, and
the co-design check: a train-time RepVGG network becomes plain 3x3 convs after
fold-batchnorm and reparameterize-branches, computing the same outputs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.passes import statistics
from boltir.passes.fold_batchnorm import FoldBatchNormPass
from boltir.passes.reparameterize_branches import ReparameterizeBranchesPass
from tests.passes.equivalence import assert_equivalent

PASS = ReparameterizeBranchesPass()


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.") and op.name != "graph.constant"]


def convs(module: ModuleOp) -> list[graph.Conv2dOp]:
    return [op for op in module.walk() if isinstance(op, graph.Conv2dOp)]


def conv(
    b: ModelBuilder,
    x: SSAValue,
    out_channels: int,
    kernel: int,
    rng: np.random.Generator,
    *,
    stride: int = 1,
    group: int = 1,
    bias: bool = True,
    name: str = "conv",
) -> SSAValue:
    in_channels = x.type.get_shape()[1]
    fan_in = in_channels // group * kernel * kernel
    w = b.constant(f"{name}.weight", (rng.standard_normal((out_channels, in_channels // group, kernel, kernel)) / np.sqrt(fan_in)).astype(np.float32))
    bias_value = b.constant(f"{name}.bias", rng.normal(0, 0.1, out_channels).astype(np.float32)) if bias else None
    pads = (kernel // 2,) * 4
    return b.insert(graph.Conv2dOp(x, w, bias_value, strides=(stride, stride), pads=pads, group=group)).output


def add(b: ModelBuilder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return b.insert(graph.AddOp(lhs, rhs)).output


def scaled(b: ModelBuilder, x: SSAValue, rng: np.random.Generator, *, shift: bool = True, scale_first: bool = False) -> SSAValue:
    """The identity branch as fold-batchnorm leaves it: x * s + t, s and t of shape [C, 1, 1]."""
    channels = x.type.get_shape()[1]
    s = b.constant("id.scale", rng.uniform(0.5, 1.5, (channels, 1, 1)).astype(np.float32))
    y = b.insert(graph.MulOp(s, x) if scale_first else graph.MulOp(x, s)).output
    if shift:
        t = b.constant("id.shift", rng.normal(0, 0.5, (channels, 1, 1)).astype(np.float32))
        y = add(b, t, y) if scale_first else add(b, y, t)
    return y


def merged(module: ModuleOp, rng: np.random.Generator, branches_merged: int) -> ModuleOp:
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert collected.get(PASS.name, "branches merged") == branches_merged
    return after


NESTINGS = {
    "((3x3 + 1x1) + id)": lambda b, c3, c1, i: add(b, add(b, c3, c1), i),
    "(3x3 + (1x1 + id))": lambda b, c3, c1, i: add(b, c3, add(b, c1, i)),
    "(id + (1x1 + 3x3))": lambda b, c3, c1, i: add(b, i, add(b, c1, c3)),
}


@pytest.mark.parametrize("nesting", list(NESTINGS))
@pytest.mark.parametrize(("channels", "group"), [(5, 1), (6, 2), (7, 7)])  # odd, grouped, depthwise
def test_three_branches(rng, nesting, channels, group):
    b = ModelBuilder()
    x = b.input("x", (2, channels, 7, 5))
    c3 = conv(b, x, channels, 3, rng, group=group, name="c3")
    c1 = conv(b, x, channels, 1, rng, group=group, name="c1")
    y = NESTINGS[nesting](b, c3, c1, scaled(b, x, rng))
    module = b.finish([b.insert(graph.ReluOp(y)).output])

    after = merged(module, rng, 1)
    assert op_names(after) == ["graph.conv2d", "graph.relu"]
    (only,) = convs(after)
    assert only.weight.type.get_shape() == (channels, channels // group, 3, 3)
    assert only.prop_value("group") == group


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(("in_channels", "out_channels", "group"), [(3, 7, 1), (4, 6, 2)])
def test_two_branches_strided(rng, bias, in_channels, out_channels, group):
    """3x3 + 1x1 at stride 2, as at the start of a RepVGG stage (no identity)."""
    b = ModelBuilder()
    x = b.input("x", (1, in_channels, 9, 8))
    c3 = conv(b, x, out_channels, 3, rng, stride=2, group=group, bias=bias, name="c3")
    c1 = conv(b, x, out_channels, 1, rng, stride=2, group=group, bias=bias, name="c1")
    module = b.finish([add(b, c1, c3)])

    after = merged(module, rng, 1)
    assert op_names(after) == ["graph.conv2d"]
    (only,) = convs(after)
    assert only.prop_value("strides") == (2, 2) and only.bias is not None


@pytest.mark.parametrize(
    "identity",
    ["x * s + t", "s * x", "t + s * x", "x"],
)
def test_two_branches_identity(rng, identity):
    """3x3 + identity, the identity in each form."""
    b = ModelBuilder()
    x = b.input("x", (1, 5, 6, 6))
    c3 = conv(b, x, 5, 3, rng, bias=False)
    branch = {
        "x * s + t": lambda: scaled(b, x, rng),
        "s * x": lambda: scaled(b, x, rng, shift=False, scale_first=True),
        "t + s * x": lambda: scaled(b, x, rng, scale_first=True),
        "x": lambda: x,
    }[identity]()
    module = b.finish([add(b, branch, c3)])

    after = merged(module, rng, 1)
    assert op_names(after) == ["graph.conv2d"]


def test_other_summands_stay(rng):
    """A summand that is no branch of x (a residual y) is added to the merged conv."""
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    y = b.input("y", (1, 4, 5, 5))
    total = add(b, add(b, add(b, conv(b, x, 4, 3, rng), y), conv(b, x, 4, 1, rng)), scaled(b, x, rng))
    module = b.finish([total])

    after = merged(module, rng, 1)
    assert op_names(after) == ["graph.conv2d", "graph.add"]
    (residual,) = [op for op in after.walk() if isinstance(op, graph.AddOp)]
    assert residual.rhs is after.body.block.first_op.body.block.args[1]


def test_every_block_of_a_chain(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 3, 8, 8))
    h = b.insert(graph.ReluOp(add(b, conv(b, x, 6, 3, rng, stride=2), conv(b, x, 6, 1, rng, stride=2)))).output
    for _ in range(2):
        h = b.insert(graph.ReluOp(add(b, add(b, conv(b, h, 6, 3, rng), conv(b, h, 6, 1, rng)), scaled(b, h, rng)))).output
    module = b.finish([h])

    after = merged(module, rng, 3)
    assert op_names(after) == ["graph.conv2d", "graph.relu"] * 3


def test_channels_last_filters(rng):
    """Branches in OHWI and OIHW merge; the merged weight is in the 3x3 conv's layout."""
    b = ModelBuilder()
    x = b.input("x", (1, 6, 5, 5))
    w3 = b.constant("w3", rng.standard_normal((6, 3, 3, 3)).astype(np.float32))  # M x kH x kW x C/group
    c3 = b.insert(graph.Conv2dOp(x, w3, pads=(1, 1, 1, 1), group=2, filter_layout="OHWI")).output
    module = b.finish([add(b, add(b, c3, conv(b, x, 6, 1, rng, group=2)), scaled(b, x, rng))])

    after = merged(module, rng, 1)
    (only,) = convs(after)
    assert only.prop_value("filter_layout") == "OHWI" and only.weight.type.get_shape() == (6, 3, 3, 3)


def leave_alone_cases(rng: np.random.Generator) -> dict[str, ModuleOp]:
    def build(make) -> ModuleOp:
        b = ModelBuilder()
        x = b.input("x", (1, 4, 6, 6))
        return b.finish([make(b, x)])

    def other_users(b, x):
        c1 = conv(b, x, 4, 1, rng)
        return add(b, add(b, conv(b, x, 4, 3, rng), c1), b.insert(graph.ReluOp(c1)).output)

    def non_constant_weight(b, x):
        w = b.input("w", (4, 4, 3, 3))
        c3 = b.insert(graph.Conv2dOp(x, w, pads=(1, 1, 1, 1))).output
        return add(b, c3, conv(b, x, 4, 1, rng))

    def dilated(b, x):
        w = b.constant("w", rng.standard_normal((4, 4, 3, 3)).astype(np.float32))
        c3 = b.insert(graph.Conv2dOp(x, w, pads=(2, 2, 2, 2), dilations=(2, 2))).output
        return add(b, c3, conv(b, x, 4, 1, rng))

    def nhwc(b, x):
        x = b.insert(graph.TransposeOp(x, (0, 2, 3, 1))).output
        w3 = b.constant("w3", rng.standard_normal((4, 4, 3, 3)).astype(np.float32))
        w1 = b.constant("w1", rng.standard_normal((4, 4, 1, 1)).astype(np.float32))
        c3 = b.insert(graph.Conv2dOp(x, w3, pads=(1, 1, 1, 1), layout="NHWC")).output
        return add(b, c3, b.insert(graph.Conv2dOp(x, w1, layout="NHWC")).output)

    return {
        "NHWC convs": build(nhwc),
        "different inputs": build(lambda b, x: add(b, conv(b, x, 4, 3, rng), conv(b, b.insert(graph.ReluOp(x)).output, 4, 1, rng))),
        "different groups": build(lambda b, x: add(b, conv(b, x, 4, 3, rng), conv(b, x, 4, 1, rng, group=2))),
        "1x1 conv and identity only": build(lambda b, x: add(b, conv(b, x, 4, 1, rng), scaled(b, x, rng))),
        "3x3 conv and a constant only": build(
            lambda b, x: add(b, conv(b, x, 4, 3, rng), b.constant("t", np.ones((4, 1, 1), np.float32)))
        ),
        "a branch with other users": build(other_users),
        "a 3x3 conv with a non-constant weight": build(non_constant_weight),
        "a dilated 3x3 conv": build(dilated),
        "a 5x5 conv": build(lambda b, x: add(b, conv(b, x, 4, 5, rng), conv(b, x, 4, 1, rng))),
        "a non-channel scale": build(
            lambda b, x: add(b, conv(b, x, 4, 3, rng), b.insert(graph.MulOp(x, b.constant("s", np.full((1, 1, 6, 6), 2.0, np.float32)))).output)
        ),
    }


@pytest.mark.parametrize("case", list(leave_alone_cases(np.random.default_rng(0))))
def test_left_alone(rng, case):
    module = leave_alone_cases(rng)[case]
    after = merged(module, rng, 0)
    assert op_names(after) == op_names(module)


def test_refusals_are_noted(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 6, 6))
    module = b.finish([add(b, conv(b, x, 4, 3, rng), conv(b, x, 4, 1, rng, group=2))])
    with statistics.collecting() as collected:
        PASS.apply(None, module)
    (note,) = collected.notes[PASS.name]
    assert "graph.conv2d not merged into graph.conv2d: its group differs" in note


# ------------------------------------------------------------------------- co-design


def batch_norm(b: ModelBuilder, x: SSAValue, rng: np.random.Generator) -> SSAValue:
    channels = x.type.get_shape()[1]
    params = [
        rng.uniform(0.5, 1.5, channels),
        rng.normal(0.0, 0.2, channels),
        rng.normal(0.0, 0.2, channels),
        rng.uniform(0.5, 2.0, channels),
    ]
    values = [b.constant("bn", p.astype(np.float32)) for p in params]
    return b.insert(graph.BatchNormOp(x, *values)).output


def repvgg_block(b: ModelBuilder, x: SSAValue, width: int, stride: int, group: int, rng) -> SSAValue:
    """Train-time RepVGG: relu(bn(conv3x3(x)) + bn(conv1x1(x)) [+ bn(x)])."""
    total = add(
        b,
        batch_norm(b, conv(b, x, width, 3, rng, stride=stride, group=group, bias=False), rng),
        batch_norm(b, conv(b, x, width, 1, rng, stride=stride, group=group, bias=False), rng),
    )
    if stride == 1 and x.type.get_shape()[1] == width:
        total = add(b, total, batch_norm(b, x, rng))
    return b.insert(graph.ReluOp(total)).output


def repvgg_a0_like(rng: np.random.Generator) -> tuple[ModuleOp, int]:
    """A RepVGG-A0-shaped network on 32x32 inputs: stem, stages of width 48 and 96 (one
    grouped block, as RepVGG-g2 has), stride 2 at each stage start, then global average
    pool and a gemm classifier. Returns it and its number of blocks."""
    b = ModelBuilder()
    h = b.input("image", (2, 3, 32, 32))
    stages = [(48, [(2, 1), (1, 1)]), (96, [(2, 1), (1, 2), (1, 1)])]  # (width, [(stride, group)])
    h = repvgg_block(b, h, 48, 2, 1, rng)  # stem
    blocks = 1
    for width, layout in stages:
        for stride, group in layout:
            h = repvgg_block(b, h, width, stride, group, rng)
            blocks += 1
    pooled = b.insert(graph.FlattenOp(b.insert(graph.GlobalAvgPoolOp(h)).output)).output
    fc_w = b.constant("fc.weight", (rng.standard_normal((10, 96)) / np.sqrt(96)).astype(np.float32))
    fc_b = b.constant("fc.bias", rng.normal(0, 0.1, 10).astype(np.float32))
    logits = b.insert(graph.GemmOp(pooled, fc_w, fc_b, trans_b=True)).output
    return b.finish([logits], ["logits"]), blocks


def test_repvgg_becomes_plain_3x3_convs(rng):
    module, blocks = repvgg_a0_like(rng)
    with statistics.collecting() as collected:
        after = assert_equivalent(module, [FoldBatchNormPass(), PASS], rng)

    assert collected.get("fold-batchnorm", "batchnorms folded into conv") == 2 * blocks
    assert collected.get(PASS.name, "branches merged") == blocks
    assert all(c.weight.type.get_shape()[2:] == (3, 3) and c.bias is not None for c in convs(after))
    assert op_names(after) == ["graph.conv2d", "graph.relu"] * blocks + ["graph.global_avg_pool", "graph.flatten", "graph.gemm"]
