"""pad-alignment: conv and GEMM channels padded with zeros to 16 bytes; the module
computes the same outputs on fresh random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from boltir.builder import ModelBuilder
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.passes import statistics
from boltir.passes.lower_graph_to_op import LowerGraphToOpPass
from boltir.passes.pad_alignment import PadAlignmentPass
from boltir.weights import make_weight_attr
from tests.passes.equivalence import assert_equivalent

SM80 = PadAlignmentPass(arch="sm80")
SM90 = PadAlignmentPass(arch="sm90")


class OpModel:
    """Builds op-level `@main` modules: NHWC convs and row-major GEMMs with fused
    epilogues, weights as `op.constant`s."""

    def __init__(self, rng: np.random.Generator, dtype=np.float32):
        self.b = ModelBuilder()
        self.rng = rng
        self.dtype = np.dtype(dtype)

    def input(self, name: str, shape) -> SSAValue:
        return self.b.input(name, shape, self.dtype)

    def constant(self, name: str, array: np.ndarray) -> SSAValue:
        return self.b.insert(ops.ConstantOp(make_weight_attr(name, np.asarray(array).astype(self.dtype)))).output

    def weight(self, name: str, shape, fan_in: int) -> SSAValue:
        return self.constant(name, self.rng.standard_normal(shape) / np.sqrt(fan_in))

    def conv(
        self, x, k, kernel=3, *, name="conv", bias=True, act="relu", residual=None, groups=1, strides=(1, 1),
        pads=None, filter_value=None,
    ):
        c = tensor_shape(x.type)[-1]
        pads = (kernel // 2,) * 4 if pads is None else pads
        w = filter_value or self.weight(f"{name}.weight", (k, kernel, kernel, c // groups), kernel * kernel * c // groups)
        b = self.weight(f"{name}.bias", (k,), 1) if bias else None
        epilogue = ops.EpilogueAttr.make(
            bias=bias, activation=ops.Activation(act), residual="add" if residual is not None else "none"
        )
        conv = ops.Conv2dOp(x, w, bias=b, residual=residual, strides=strides, pads=pads, groups=groups, epilogue=epilogue)
        return self.b.insert(conv).output

    def gemm(self, a, n, *, name="fc", bias=True, act="none", layout_b="row", residual=None):
        k = tensor_shape(a.type)[-1]
        w = self.weight(f"{name}.weight", (k, n) if layout_b == "row" else (n, k), k)
        b = self.weight(f"{name}.bias", (n,), 1) if bias else None
        epilogue = ops.EpilogueAttr.make(
            bias=bias, activation=ops.Activation(act), residual="add" if residual is not None else "none"
        )
        return self.b.insert(ops.GemmOp(a, w, bias=b, residual=residual, layout_b=layout_b, epilogue=epilogue)).output

    def insert(self, op) -> SSAValue:
        return self.b.insert(op).results[0]

    def finish(self, outputs) -> ModuleOp:
        return self.b.finish(outputs)


def run_pass(module: ModuleOp, pass_: PadAlignmentPass, rng, tolerance: float = 1e-5):
    with statistics.collecting() as collected:
        after = assert_equivalent(module, pass_, rng, tolerance=tolerance)
    return after, collected


def stat(collected: statistics.PassStatistics, what: str) -> int:
    return collected.get("pad-alignment", what)


def notes(collected: statistics.PassStatistics) -> list[str]:
    return collected.notes.get("pad-alignment", [])


def convs(module: ModuleOp) -> list[ops.Conv2dOp]:
    return [op for op in module.walk() if isinstance(op, ops.Conv2dOp)]


def count(module: ModuleOp, kind: type) -> int:
    return sum(isinstance(op, kind) for op in module.walk())


def channels(value: SSAValue) -> int:
    return tensor_shape(value.type)[-1]


# ----------------------------------------------------------------------------- convs


@pytest.mark.parametrize(
    ("arch", "dtype", "padded_c"),
    [("sm80", np.float16, 4), ("sm90", np.float16, 4), ("sm80", np.float32, 4), ("sm90", np.float32, 4)],
)
def test_first_conv_of_an_image_model(rng, arch, dtype, padded_c):
    """C = 3 pads to 4 for the 2.x fixed-channels kernel, on sm90 too (see the pass's
    docstring: at 8, the stem conv ran a 2.x kernel anyway, with twice the work)."""
    m = OpModel(rng, dtype)
    image = m.input("image", (2, 9, 9, 3))
    module = m.finish([m.conv(image, 16, 7, strides=(2, 2), pads=(3, 3, 3, 3))])

    tolerance = 1e-5 if dtype == np.float32 else 2e-3
    after, collected = run_pass(module, PadAlignmentPass(arch=arch), rng, tolerance)
    (conv,) = convs(after)
    assert channels(conv.input) == padded_c and tensor_shape(conv.filter.type) == (16, 7, 7, padded_c)
    assert isinstance(conv.input.owner, ops.PadOp) and conv.input.owner.input.type == image.type
    assert count(after, ops.SliceOp) == 0  # K = 16 is aligned already
    assert stat(collected, "op.pad inserted") == 1
    assert stat(collected, "channels padded") == padded_c - 3
    assert stat(collected, "op.conv2d padded") == 1


@pytest.mark.parametrize(("c", "k", "c2"), [(3, 5, 13), (5, 13, 27), (13, 27, 3), (27, 3, 5)])
def test_odd_channels_pad_into_the_producer(rng, c, k, c2):
    """conv(c -> k) -> conv(k -> c2): the first conv grows k to the alignment with zero
    filters (sigmoid makes its added channels 0.5, which meet zero weights); only the
    outputs are sliced back."""
    m = OpModel(rng)
    x = m.input("x", (2, 6, 7, c))
    hidden = m.conv(x, k, 3, name="conv1", act="sigmoid")
    out = m.conv(hidden, c2, 1, name="conv2", act="relu")
    module = m.finish([out])

    after, collected = run_pass(module, SM90, rng)
    first, second = convs(after)
    assert channels(first.input) % 4 == 0 and channels(first.output) % 4 == 0
    assert second.input is first.output  # the pad is fused into the producer
    assert channels(second.output) % 4 == 0
    pads = [op for op in after.walk() if isinstance(op, ops.PadOp)]
    assert len(pads) == (c % 4 != 0)  # only the model input, and only when misaligned
    assert count(after, ops.SliceOp) == (c2 % 4 != 0)
    added = (-c % 4) + 2 * (-k % 4) + (-c2 % 4)
    assert stat(collected, "channels padded") == added
    assert stat(collected, "pads fused into producers") == 1


def test_producer_with_other_users_slices_for_them(rng):
    """The widened conv also feeds an output and a pool: both read a slice."""
    m = OpModel(rng)
    x = m.input("x", (1, 8, 8, 8))
    hidden = m.conv(x, 5, 3, name="conv1")
    pooled = m.insert(ops.Pool2dOp(hidden, "global_avg"))
    out = m.conv(hidden, 8, 3, name="conv2")
    module = m.finish([out, hidden, pooled])

    after, collected = run_pass(module, SM90, rng)
    (cut,) = [op for op in after.walk() if isinstance(op, ops.SliceOp)]
    pool = next(op for op in after.walk() if isinstance(op, ops.Pool2dOp))
    assert pool.input is cut.output and channels(cut.output) == 5
    assert stat(collected, "op.slice inserted") == 1 and stat(collected, "op.pad inserted") == 0


def test_elementwise_ops_carry_the_added_channels(rng):
    """Before fuse-epilogue, relu, a per-channel scale and shift, and a division sit
    between the convs: they compute on the padded tensor (constants padded too)."""
    m = OpModel(rng)
    x = m.input("x", (2, 5, 5, 4))
    hidden = m.conv(x, 13, 3, act="none", name="conv1")
    hidden = m.insert(ops.UnaryOp("relu", hidden))
    hidden = m.insert(ops.BinaryOp("sub", hidden, m.constant("offset", np.array(0.5))))
    hidden = m.insert(ops.BinaryOp("mul", hidden, m.constant("scale", rng.uniform(0.5, 1.5, (1, 1, 1, 13)))))
    hidden = m.insert(ops.BinaryOp("add", hidden, m.constant("shift", rng.standard_normal(13))))
    hidden = m.insert(ops.BinaryOp("div", hidden, m.constant("divisor", rng.uniform(1.0, 2.0, 13))))
    # The added channels hold 0 here (the scale's added channels are 0): 1/0 is not carried.
    hidden = m.insert(ops.UnaryOp("reciprocal", hidden))
    out = m.conv(hidden, 7, 1, name="conv2")
    module = m.finish([out])

    after, collected = run_pass(module, SM90, rng)
    assert stat(collected, "op.unary widened") == 1
    assert stat(collected, "op.binary widened") == 4
    reciprocal = next(op for op in after.walk() if isinstance(op, ops.UnaryOp) and op.fn.data == "reciprocal")
    assert channels(reciprocal.input) == 13  # fed by a slice
    assert isinstance(convs(after)[1].input.owner, ops.PadOp)


def test_a_unary_op_on_a_constant_is_left_alone(rng):
    """A unary op whose operand is a per-channel constant (DistilBERT's `not` of its mask
    under transformers 4.57) has no neutral fill: left as it is, not a crash."""
    m = OpModel(rng)
    x = m.input("x", (2, 5, 5, 4))
    hidden = m.conv(x, 13, 3, act="none", name="conv1")
    negated = m.insert(ops.UnaryOp("neg", m.constant("shift", rng.standard_normal(13))))
    hidden = m.insert(ops.BinaryOp("add", hidden, negated))
    module = m.finish([m.conv(hidden, 7, 1, name="conv2")])
    after, _ = run_pass(module, SM90, rng)
    negate = next(op for op in after.walk() if isinstance(op, ops.UnaryOp))
    assert channels(negate.output) == 13


def test_one_pad_serves_every_consumer(rng):
    """Two convs of the image, one of them also adding it back as its residual."""
    m = OpModel(rng)
    image = m.input("image", (1, 6, 6, 3))
    left = m.conv(image, 8, 3, name="left")
    right = m.conv(image, 3, 1, name="right", residual=image)
    module = m.finish([left, right])

    after, collected = run_pass(module, SM90, rng)
    (pad,) = [op for op in after.walk() if isinstance(op, ops.PadOp)]
    first, second = convs(after)
    assert first.input is pad.output and second.input is pad.output and second.residual is pad.output
    assert stat(collected, "op.pad inserted") == 1 and stat(collected, "op.slice inserted") == 1


def test_residual_is_padded_with_the_output(rng):
    m = OpModel(rng)
    x = m.input("x", (1, 6, 6, 8))
    skip = m.conv(x, 5, 1, name="conv1", act="tanh")
    out = m.conv(skip, 5, 3, name="conv2", residual=skip)
    module = m.finish([out])

    after, collected = run_pass(module, SM90, rng)
    first, second = convs(after)
    assert second.residual is first.output and channels(second.output) == 8
    assert stat(collected, "op.pad inserted") == 0


def test_residual_from_an_unpadded_producer_gets_a_pad(rng):
    m = OpModel(rng)
    x = m.input("x", (1, 6, 6, 8))
    skip = m.input("skip", (1, 6, 6, 5))
    out = m.conv(x, 5, 3, residual=skip)
    module = m.finish([out])

    after, collected = run_pass(module, SM90, rng)
    (conv,) = convs(after)
    assert isinstance(conv.residual.owner, ops.PadOp)
    assert stat(collected, "op.pad inserted") == 1


@pytest.mark.parametrize(("dtype", "c", "padded"), [(np.float32, 13, 16), (np.float32, 3, 4), (np.float16, 27, 32)])
def test_depthwise_conv_grows_by_groups(rng, dtype, c, padded):
    m = OpModel(rng, dtype)
    x = m.input("x", (1, 6, 6, c))
    out = m.conv(x, c, 3, groups=c)
    module = m.finish([out])

    after, collected = run_pass(module, SM90, rng, 1e-5 if dtype == np.float32 else 2e-3)
    (conv,) = convs(after)
    assert conv.prop_value("groups") == padded and tensor_shape(conv.filter.type) == (padded, 3, 3, 1)
    assert stat(collected, "channels padded") == 2 * (padded - c)


def test_grouped_conv_adds_whole_groups(rng):
    """3 groups of 2 -> 4 groups of 2: the fourth group reads zeros, writes zeros."""
    m = OpModel(rng)
    x = m.input("x", (1, 5, 5, 6))
    hidden = m.conv(x, 6, 3, groups=3, name="grouped")
    module = m.finish([m.conv(hidden, 8, 1, name="pointwise")])

    after, collected = run_pass(module, SM90, rng)
    grouped, pointwise = convs(after)
    assert grouped.prop_value("groups") == 4 and channels(grouped.output) == 8
    assert pointwise.input is grouped.output


def test_grouped_conv_that_would_more_than_double_is_left_alone(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 5, 5, 3))
    module = m.finish([m.conv(x, 3, 3, groups=3)])

    after, collected = run_pass(module, SM90, rng)
    (conv,) = convs(after)
    assert conv.prop_value("groups") == 3 and channels(conv.input) == 3
    assert any("more than doubling" in text for text in notes(collected))


def test_nchw_conv_is_left_alone_with_a_note(rng):
    """A graph-level model lowered as it is (NCHW) is not padded."""
    b = ModelBuilder()
    x = b.input("image", (1, 3, 8, 8))
    w = b.constant("conv.weight", rng.standard_normal((5, 3, 3, 3)).astype(np.float32))
    module = b.finish([b.insert(graph.Conv2dOp(x, w, pads=(1, 1, 1, 1))).output])
    LowerGraphToOpPass().apply(None, module)

    after, collected = run_pass(module, SM90, rng)
    (conv,) = convs(after)
    assert channels(conv.filter) == 3 and conv.prop_value("layout") == "NCHW"
    assert any("NCHW" in text for text in notes(collected))
    assert stat(collected, "channels padded") == 0


def test_non_constant_filter_is_left_alone(rng):
    m = OpModel(rng)
    x = m.input("x", (1, 4, 4, 3))
    w = m.input("w", (5, 3, 3, 3))
    module = m.finish([m.conv(x, 5, 3, bias=False, filter_value=w)])

    after, collected = run_pass(module, SM90, rng)
    assert count(after, ops.PadOp) == 0
    assert any("not a constant" in text for text in notes(collected))


def test_aligned_model_is_untouched(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 4, 4, 16))
    module = m.finish([m.gemm(m.conv(x, 8, 3), 24)])
    with statistics.collecting() as collected:
        after = module.clone()
        SM90.apply(None, after)
    assert str(after) == str(module)
    assert collected.counters.get("pad-alignment", {}) == {}


# ----------------------------------------------------------------------------- GEMMs


@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_mlp(rng, layout_b):
    """x[K=27] -> fc(13, gelu) -> fc(5) -> fc(3): every K and N rounds up to 4 (f32);
    the hidden activations never leave their padded width."""
    m = OpModel(rng)
    x = m.input("x", (6, 27))
    hidden = m.gemm(x, 13, act="gelu", layout_b=layout_b, name="fc1")
    hidden = m.gemm(hidden, 5, act="sigmoid", layout_b=layout_b, name="fc2")
    out = m.gemm(hidden, 3, bias=False, layout_b=layout_b, name="fc3")
    module = m.finish([out])

    after, collected = run_pass(module, SM90, rng)
    gemms = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert [op.problem[1:] for op in gemms] == [(16, 28), (8, 16), (4, 8)]  # (N, K)
    assert gemms[1].a is gemms[0].output and gemms[2].a is gemms[1].output
    assert stat(collected, "op.gemm padded") == 3
    assert stat(collected, "op.pad inserted") == 1 and stat(collected, "op.slice inserted") == 1
    assert stat(collected, "channels padded") == 1 + 3 + (3 + 3) + (3 + 1)


def test_f16_gemm_with_residual(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (4, 16))
    skip = m.gemm(x, 13, name="fc1", act="relu")
    out = m.gemm(skip, 13, name="fc2", residual=skip)
    module = m.finish([out])

    after, collected = run_pass(module, SM80, rng, 2e-3)
    gemms = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert gemms[1].residual is gemms[0].output and channels(gemms[1].output) == 16


def test_gemm_with_column_major_a_pads_its_rows(rng):
    m = OpModel(rng)
    a = m.input("a", (5, 6))  # stored K x M
    w = m.weight("fc.weight", (5, 8), 5)
    module = m.finish([m.insert(ops.GemmOp(a, w, layout_a="col"))])

    after, collected = run_pass(module, SM90, rng)
    (gemm,) = [op for op in after.walk() if isinstance(op, ops.GemmOp)]
    assert tensor_shape(gemm.a.type) == (8, 6) and gemm.problem == (6, 8, 8)


def test_non_constant_b_is_left_alone(rng):
    m = OpModel(rng)
    a, b = m.input("a", (4, 5)), m.input("b", (5, 3))
    module = m.finish([m.insert(ops.GemmOp(a, b))])

    after, collected = run_pass(module, SM90, rng)
    assert count(after, ops.PadOp) == 0
    assert any("op.gemm" in text and "not a constant" in text for text in notes(collected))


def test_stem_channels_pads_a_first_conv_to_that_many(rng):
    """stem_channels=16: C = 3 pads to 16 (one 32-byte row of the halo conv's swizzle);
    channel counts already past it keep the ordinary alignment."""
    m = OpModel(rng, np.float16)
    image = m.input("image", (2, 9, 9, 3))
    first = m.conv(image, 64, 3, name="first")
    module = m.finish([m.conv(first, 24, 3, name="second")])
    after, collected = run_pass(module, PadAlignmentPass(arch="sm90", stem_channels=16), rng, 2e-3)
    stem, second = convs(after)
    assert channels(stem.input) == 16 and tensor_shape(stem.filter.type) == (64, 3, 3, 16)
    assert channels(second.input) == 64 and channels(second.output) == 24
    assert stat(collected, "channels padded") == 13


def test_bad_stem_channels():
    with pytest.raises(BoltError, match="stem_channels must be 0 or a positive multiple of 4; got 6"):
        PadAlignmentPass(stem_channels=6)


def test_bad_arch():
    with pytest.raises(BoltError, match="arch must be one of sm80, sm90; got 'sm70'"):
        PadAlignmentPass(arch="sm70")
