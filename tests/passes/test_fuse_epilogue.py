"""fuse-epilogue: biases, activations and residuals move into the GEMM/conv epilogue, in
its order (bias, activation, residual, activation), and the module computes the same
outputs on fresh random inputs. Graph-level models (NCHW) are built with ModelBuilder and
lowered; the NHWC cases are written at op level."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.passes import statistics
from boltir.passes.fuse_epilogue import FuseEpiloguePass
from boltir.passes.common import constant_of
from boltir.passes.lower_graph_to_op import LowerGraphToOpPass
from boltir.weights import make_weight_attr
from tests.passes.equivalence import assert_equivalent

PASS = FuseEpiloguePass()
FUSABLE = (ops.GemmOp, ops.Conv2dOp, ops.ConvTranspose2dOp)

# ------------------------------------------------------------------------- helpers


def lowered(module: ModuleOp) -> ModuleOp:
    LowerGraphToOpPass().apply(boltir.make_context(), module)
    boltir.verify_module(module)
    return module


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("op.") and op.name != "op.constant"]


def fused_ops(module: ModuleOp) -> list:
    return [op for op in module.walk() if isinstance(op, FUSABLE)]


def epilogue(module: ModuleOp) -> list[str]:
    (op,) = fused_ops(module)
    return op.epilogue.describe()


def run_pass(module: ModuleOp, rng: np.random.Generator) -> tuple[ModuleOp, statistics.PassStatistics]:
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, tolerance=1e-5)
    return after, collected


def counts(collected: statistics.PassStatistics) -> dict[str, int]:
    return dict(collected.counters.get(PASS.name, {}))


def argument(module: ModuleOp, index: int) -> SSAValue:
    """@main's argument `index` (of the transformed module, a clone of the one built)."""
    return module.body.block.first_op.body.block.args[index]


def weight(b: ModelBuilder, name: str, shape, rng: np.random.Generator, scale: float = 1.0) -> SSAValue:
    return b.constant(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def op_constant(b: ModelBuilder, name: str, array: np.ndarray) -> SSAValue:
    return b.insert(ops.ConstantOp(make_weight_attr(name, np.asarray(array, np.float32)))).output


def conv(b: ModelBuilder, x: SSAValue, channels: int, rng, *, bias: bool = False, transpose: bool = False, name: str = "conv") -> SSAValue:
    """A 3x3 pad-1 NCHW conv (or a stride-2 transposed conv) at graph level."""
    c = x.type.get_shape()[1]
    bias_value = weight(b, f"{name}.bias", (channels,), rng) if bias else None
    if transpose:
        w = weight(b, f"{name}.weight", (c, channels, 3, 3), rng, 0.3)
        return b.insert(graph.ConvTranspose2dOp(x, w, bias_value, strides=(2, 2), pads=(1, 1, 1, 1), output_padding=(1, 1))).output
    w = weight(b, f"{name}.weight", (channels, c, 3, 3), rng, 0.3)
    return b.insert(graph.Conv2dOp(x, w, bias_value, pads=(1, 1, 1, 1))).output


def add(b: ModelBuilder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return b.insert(graph.AddOp(lhs, rhs)).output


def mul(b: ModelBuilder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return b.insert(graph.MulOp(lhs, rhs)).output


def relu(b: ModelBuilder, x: SSAValue) -> SSAValue:
    return b.insert(graph.ReluOp(x)).output


# ----------------------------------------------------------------------- NCHW bias


@pytest.mark.parametrize("transpose", [False, True], ids=["conv", "conv_transpose"])
@pytest.mark.parametrize("shape", [(5, 1, 1), (1, 5, 1, 1)])
def test_bias_into_conv(rng, transpose, shape):
    b = ModelBuilder()
    x = b.input("x", (2, 3, 6, 7))
    y = add(b, conv(b, x, 5, rng, transpose=transpose), weight(b, "bias", shape, rng))
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert op_names(after) == ["op.conv_transpose2d" if transpose else "op.conv2d"]
    assert epilogue(after) == ["bias"]
    (fused,) = fused_ops(after)
    assert fused.bias.type.get_shape() == (5,)
    assert counts(collected) == {"bias fused": 1}


@pytest.mark.parametrize("transpose", [False, True], ids=["conv", "conv_transpose"])
def test_second_bias_is_summed_into_a_constant_bias(rng, transpose):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    y = conv(b, x, 6, rng, bias=True, transpose=transpose)  # lowered into the epilogue
    extra = rng.standard_normal((6, 1, 1)).astype(np.float32)
    y = add(b, b.constant("shift", extra), y)  # the constant on the left
    module = lowered(b.finish([y]))
    (before,) = fused_ops(module)
    old = constant_of(before.bias)
    after, collected = run_pass(module, rng)
    assert epilogue(after) == ["bias"]
    (fused,) = fused_ops(after)
    np.testing.assert_allclose(constant_of(fused.bias), old + extra.reshape(6), rtol=1e-6)
    assert counts(collected) == {"bias fused": 1}


def test_bias_then_every_epilogue_step(rng):
    """conv -> + bias -> + bias -> sigmoid -> * residual -> tanh: all in one epilogue."""
    b = ModelBuilder()
    x = b.input("x", (1, 3, 6, 6))
    r = b.input("r", (1, 4, 6, 6))
    y = add(b, conv(b, x, 4, rng), weight(b, "b1", (1, 4, 1, 1), rng))
    y = add(b, y, weight(b, "b2", (4, 1, 1), rng))
    y = b.insert(graph.SigmoidOp(y)).output
    y = b.insert(graph.TanhOp(mul(b, r, y))).output
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert op_names(after) == ["op.conv2d"]
    assert epilogue(after) == ["bias", "sigmoid", "residual = mul", "then tanh"]
    assert counts(collected) == {
        "bias fused": 2,
        "activation sigmoid fused": 1,
        "residual mul fused": 1,
        "activation tanh after the residual fused": 1,
    }


# ----------------------------------------------------------------------- GEMM bias


@pytest.mark.parametrize("shape", [(7,), (1, 7)])
def test_bias_into_gemm_with_trans_b(rng, shape):
    b = ModelBuilder()
    a = b.input("a", (3, 5))
    y = b.insert(graph.GemmOp(a, weight(b, "fc.weight", (7, 5), rng), alpha=0.5, trans_b=True)).output
    y = add(b, y, weight(b, "fc.bias", shape, rng))
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert op_names(after) == ["op.gemm"]
    assert epilogue(after) == ["alpha = 0.5", "bias"]
    (gemm,) = fused_ops(after)
    assert gemm.prop_value("layout_b") == "col"
    assert counts(collected) == {"bias fused": 1}


def test_second_bias_into_gemm_bias(rng):
    b = ModelBuilder()
    a = b.input("a", (3, 5))
    y = b.insert(graph.GemmOp(a, weight(b, "fc.weight", (7, 5), rng), weight(b, "fc.bias", (7,), rng), trans_b=True)).output
    y = relu(b, add(b, y, weight(b, "shift", (1, 7), rng)))
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert epilogue(after) == ["bias", "relu"]
    assert counts(collected) == {"bias fused": 1, "activation relu fused": 1}


def test_batched_matmul_bias_and_activation(rng):
    """A batched matmul (attention's projections) with a per-column bias and a gelu."""
    b = ModelBuilder()
    x = b.input("x", (2, 3, 4, 5))
    y = b.insert(graph.MatMulOp(x, weight(b, "w", (5, 6), rng))).output
    y = b.insert(graph.GeluOp(add(b, y, weight(b, "bias", (6,), rng)))).output
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert op_names(after) == ["op.gemm"]
    assert epilogue(after) == ["bias", "gelu"]
    assert counts(collected) == {"bias fused": 1, "activation gelu fused": 1}


@pytest.mark.parametrize("shape", [(6,), (1, 1, 6)])
def test_bias_from_an_input(rng, shape):
    """A bias that is not a constant becomes the bias operand as it is, or reshaped to [N]."""
    b = ModelBuilder()
    x = b.input("x", (2, 4, 5))
    y = add(b, b.insert(graph.MatMulOp(x, weight(b, "w", (5, 6), rng))).output, b.input("bias", shape))
    after, collected = run_pass(lowered(b.finish([y])), rng)
    (gemm,) = fused_ops(after)
    assert epilogue(after) == ["bias"]
    if shape == (6,):
        assert gemm.bias is argument(after, 1) and op_names(after) == ["op.gemm"]
    else:
        assert isinstance(gemm.bias.owner, ops.ReshapeOp) and gemm.bias.owner.input is argument(after, 1)
        assert op_names(after) == ["op.reshape", "op.gemm"]
    assert counts(collected) == {"bias fused": 1}


# --------------------------------------------------------------------- activations

ACTIVATIONS = [
    (lambda x: graph.ReluOp(x), "relu"),
    (lambda x: graph.ClipOp(x, 0.0, 6.0), "clip(0.0, 6.0)"),
    (lambda x: graph.ClipOp(x, max=0.5), f"clip({-ops.UNBOUNDED!r}, 0.5)"),
    (lambda x: graph.GeluOp(x), "gelu"),
    (lambda x: graph.GeluOp(x, "tanh"), "gelu_tanh"),
    (lambda x: graph.SigmoidOp(x), "sigmoid"),
    (lambda x: graph.SiluOp(x), "silu"),
    (lambda x: graph.HardSwishOp(x), "hardswish"),
    (lambda x: graph.TanhOp(x), "tanh"),
    (lambda x: graph.LeakyReluOp(x, 0.25), "leaky_relu(0.25)"),
    (lambda x: graph.HardSigmoidOp(x, 0.25, 0.5), "hardsigmoid(0.25, 0.5)"),
]


@pytest.mark.parametrize(("make", "printed"), ACTIVATIONS, ids=[p for _, p in ACTIVATIONS])
@pytest.mark.parametrize("kind", ["conv", "gemm"])
def test_activation(rng, make, printed, kind):
    b = ModelBuilder()
    if kind == "conv":
        y = conv(b, b.input("x", (1, 3, 5, 5)), 4, rng, bias=True)
    else:
        y = b.insert(graph.GemmOp(b.input("a", (6, 5)), weight(b, "w", (5, 3), rng), weight(b, "c", (3,), rng))).output
    after, collected = run_pass(lowered(b.finish([b.insert(make(y)).output])), rng)
    assert len(op_names(after)) == 1
    assert epilogue(after) == ["bias", printed]
    kind_name = printed.split("(")[0]
    assert counts(collected) == {f"activation {kind_name} fused": 1}


@pytest.mark.parametrize(("make", "printed"), ACTIVATIONS, ids=[p for _, p in ACTIVATIONS])
def test_activation_after_residual(rng, make, printed):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    y = add(b, conv(b, x, 4, rng, bias=True), x)
    after, collected = run_pass(lowered(b.finish([b.insert(make(y)).output])), rng)
    assert epilogue(after) == ["bias", "residual = add", f"then {printed}"]
    assert counts(collected)[f"activation {printed.split('(')[0]} after the residual fused"] == 1


# ----------------------------------------------------------------------- residuals


@pytest.mark.parametrize("fn", ["add", "mul"])
@pytest.mark.parametrize("residual_first", [False, True])
def test_residual(rng, fn, residual_first):
    b = ModelBuilder()
    x = b.input("x", (2, 4, 5, 5))
    r = b.input("r", (2, 6, 5, 5))
    y = conv(b, x, 6, rng)
    y = (add if fn == "add" else mul)(b, *((r, y) if residual_first else (y, r)))
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert op_names(after) == ["op.conv2d"]
    assert epilogue(after) == [f"residual = {fn}"]
    assert fused_ops(after)[0].residual is argument(after, 1)
    assert counts(collected) == {f"residual {fn} fused": 1}


def test_residual_into_gemm_after_activation(rng):
    b = ModelBuilder()
    a = b.input("a", (4, 5))
    r = b.input("r", (4, 3))
    y = b.insert(graph.GemmOp(a, weight(b, "w", (3, 5), rng), weight(b, "c", (3,), rng), trans_b=True)).output
    y = add(b, r, b.insert(graph.SiluOp(y)).output)
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert epilogue(after) == ["bias", "silu", "residual = add"]
    assert counts(collected) == {"activation silu fused": 1, "residual add fused": 1}


def test_resnet_block(rng):
    """conv-bias-relu, conv + bias, + identity, relu: two convs, nothing else."""
    b = ModelBuilder()
    x = b.input("x", (2, 4, 6, 6))
    y = relu(b, conv(b, x, 4, rng, bias=True, name="conv1"))
    y = add(b, conv(b, y, 4, rng, name="conv2"), weight(b, "conv2.bias", (4, 1, 1), rng))
    y = relu(b, add(b, y, x))
    after, collected = run_pass(lowered(b.finish([y])), rng)
    assert op_names(after) == ["op.conv2d", "op.conv2d"]
    first, second = fused_ops(after)
    assert first.epilogue.describe() == ["bias", "relu"]
    assert second.epilogue.describe() == ["bias", "residual = add", "then relu"]
    assert second.residual is argument(after, 0)
    assert counts(collected) == {
        "activation relu fused": 1,
        "bias fused": 1,
        "residual add fused": 1,
        "activation relu after the residual fused": 1,
    }


# ---------------------------------------------------------------------- left alone


def left_alone(rng, b: ModelBuilder, outputs: list[SSAValue], remaining: list[str], epilogues: list[list[str]], stats: dict | None = None):
    after, collected = run_pass(lowered(b.finish(outputs)), rng)
    assert op_names(after) == remaining
    assert [op.epilogue.describe() for op in fused_ops(after)] == epilogues
    assert counts(collected) == (stats or {})


def test_result_with_two_users(rng):
    b = ModelBuilder()
    y = conv(b, b.input("x", (1, 3, 5, 5)), 4, rng, bias=True)
    left_alone(rng, b, [relu(b, y), y], ["op.conv2d", "op.unary"], [["bias"]])


def test_add_using_the_result_twice(rng):
    b = ModelBuilder()
    y = conv(b, b.input("x", (1, 3, 5, 5)), 4, rng)
    left_alone(rng, b, [add(b, y, y)], ["op.conv2d", "op.binary"], [[]])


def test_activation_after_a_second_activation(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    y = relu(b, add(b, conv(b, x, 4, rng), x))
    y = b.insert(graph.SigmoidOp(y)).output
    stats = {"residual add fused": 1, "activation relu after the residual fused": 1}
    left_alone(rng, b, [y], ["op.conv2d", "op.unary"], [["residual = add", "then relu"]], stats)


def test_second_activation_before_the_residual(rng):
    """relu then sigmoid: the sigmoid cannot be the activation after a residual."""
    b = ModelBuilder()
    y = b.insert(graph.SigmoidOp(relu(b, conv(b, b.input("x", (1, 3, 5, 5)), 4, rng)))).output
    left_alone(rng, b, [y], ["op.conv2d", "op.unary"], [["relu"]], {"activation relu fused": 1})


def test_bias_after_activation(rng):
    b = ModelBuilder()
    y = add(b, relu(b, conv(b, b.input("x", (1, 3, 5, 5)), 4, rng, bias=True)), weight(b, "late", (4, 1, 1), rng))
    left_alone(rng, b, [y], ["op.conv2d", "op.binary"], [["bias", "relu"]], {"activation relu fused": 1})


def test_bias_after_residual(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    y = add(b, add(b, conv(b, x, 4, rng), x), weight(b, "late", (1, 4, 1, 1), rng))
    left_alone(rng, b, [y], ["op.conv2d", "op.binary"], [["residual = add"]], {"residual add fused": 1})


def test_second_residual(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 5, 5))
    y = mul(b, add(b, conv(b, x, 4, rng), x), x)
    left_alone(rng, b, [y], ["op.conv2d", "op.binary"], [["residual = add"]], {"residual add fused": 1})


@pytest.mark.parametrize("shape", [(1, 1, 5, 5), (5,), (1, 4, 5, 1), (2, 4, 1, 1)])
def test_add_broadcasting_along_another_axis(rng, shape):
    """[W] against NCHW is per column, not per channel; a larger addend broadcasts the output."""
    b = ModelBuilder()
    y = add(b, conv(b, b.input("x", (1, 3, 5, 5)), 4, rng), weight(b, "other", shape, rng))
    left_alone(rng, b, [y], ["op.conv2d", "op.binary"], [[]])


def test_gemm_add_per_row(rng):
    b = ModelBuilder()
    y = b.insert(graph.MatMulOp(b.input("a", (4, 5)), weight(b, "w", (5, 3), rng))).output
    left_alone(rng, b, [add(b, y, weight(b, "rows", (4, 1), rng))], ["op.gemm", "op.binary"], [[]])


def test_per_channel_mul_and_sub(rng):
    b = ModelBuilder()
    y = conv(b, b.input("x", (1, 3, 5, 5)), 4, rng)
    y = b.insert(graph.SubOp(mul(b, y, weight(b, "scale", (4, 1, 1), rng)), weight(b, "shift", (4, 1, 1), rng))).output
    left_alone(rng, b, [y], ["op.conv2d", "op.binary", "op.binary"], [[]])


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
@pytest.mark.parametrize("op_type", [graph.ExpOp, graph.ErfOp, graph.SqrtOp, graph.NegOp])
def test_not_an_epilogue_activation(rng, op_type):
    b = ModelBuilder()
    y = conv(b, b.input("x", (1, 3, 5, 5)), 4, rng, bias=True)
    left_alone(rng, b, [b.insert(op_type(y)).output], ["op.conv2d", "op.unary"], [["bias"]])


def test_residual_of_another_shape(rng):
    """The residual would broadcast the output to 2x4x5x5: not the output's type."""
    b = ModelBuilder()
    y = conv(b, b.input("x", (1, 3, 5, 5)), 4, rng)
    left_alone(rng, b, [add(b, y, b.input("r", (2, 4, 5, 5)))], ["op.conv2d", "op.binary"], [[]])


def test_bias_not_summed_with_beta(rng):
    """A bias scaled by beta = 2 and a second constant bias: not combined (nor a residual)."""
    b = ModelBuilder()
    y = b.insert(graph.GemmOp(b.input("a", (3, 5)), weight(b, "w", (5, 4), rng), weight(b, "c", (4,), rng), beta=2.0)).output
    left_alone(rng, b, [add(b, y, weight(b, "d", (4,), rng))], ["op.gemm", "op.binary"], [["beta = 2.0", "bias"]])


def test_bias_from_an_input_onto_a_bias(rng):
    b = ModelBuilder()
    y = b.insert(graph.GemmOp(b.input("a", (3, 5)), weight(b, "w", (5, 4), rng), weight(b, "c", (4,), rng))).output
    left_alone(rng, b, [add(b, y, b.input("d", (4,)))], ["op.gemm", "op.binary"], [["bias"]])


# ---------------------------------------------------------------- NHWC, at op level


def nhwc_conv(b: ModelBuilder, x: SSAValue, channels: int, rng, *, transpose: bool = False) -> SSAValue:
    c = x.type.get_shape()[3]
    if transpose:
        w = op_constant(b, "up.weight", rng.standard_normal((c, 3, 3, channels)) * 0.3)  # IHWO
        return b.insert(ops.ConvTranspose2dOp(x, w, strides=(2, 2), pads=(1, 1, 1, 1), output_padding=(1, 1))).output
    w = op_constant(b, "conv.weight", rng.standard_normal((channels, 3, 3, c)) * 0.3)  # OHWI
    return b.insert(ops.Conv2dOp(x, w, pads=(1, 1, 1, 1))).output


def op_add(b: ModelBuilder, lhs: SSAValue, rhs: SSAValue, fn: str = "add") -> SSAValue:
    return b.insert(ops.BinaryOp(fn, lhs, rhs)).output


@pytest.mark.parametrize("transpose", [False, True], ids=["conv", "conv_transpose"])
@pytest.mark.parametrize("shape", [(6,), (1, 1, 1, 6)])
def test_nhwc_bias_activation_residual(rng, transpose, shape):
    b = ModelBuilder()
    x = b.input("x", (2, 5, 4, 3))
    out_hw = (10, 8) if transpose else (5, 4)
    r = b.input("r", (2, *out_hw, 6))
    y = op_add(b, nhwc_conv(b, x, 6, rng, transpose=transpose), op_constant(b, "bias", rng.standard_normal(shape)))
    y = b.insert(ops.UnaryOp("hardswish", y)).output
    y = b.insert(ops.UnaryOp("clip", op_add(b, r, y, "mul"), (-1.0, 1.0))).output
    after, collected = run_pass(b.finish([y]), rng)
    assert op_names(after) == ["op.conv_transpose2d" if transpose else "op.conv2d"]
    assert epilogue(after) == ["bias", "hardswish", "residual = mul", "then clip(-1.0, 1.0)"]
    assert counts(collected) == {
        "bias fused": 1,
        "activation hardswish fused": 1,
        "residual mul fused": 1,
        "activation clip after the residual fused": 1,
    }


def test_nhwc_resnet_block_with_summed_bias(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 8))
    y = nhwc_conv(b, x, 8, rng)
    y = op_add(b, y, op_constant(b, "b1", rng.standard_normal(8)))
    y = op_add(b, op_constant(b, "b2", rng.standard_normal((1, 1, 1, 8))), y)
    y = b.insert(ops.UnaryOp("relu", op_add(b, y, x))).output
    after, collected = run_pass(b.finish([y]), rng)
    assert op_names(after) == ["op.conv2d"]
    assert epilogue(after) == ["bias", "residual = add", "then relu"]
    assert counts(collected) == {"bias fused": 2, "residual add fused": 1, "activation relu after the residual fused": 1}


@pytest.mark.parametrize("shape", [(1, 8, 8, 1), (1, 1, 8, 8), (8, 1, 1), (1, 8, 1, 1)])
def test_nhwc_add_along_another_axis(rng, shape):
    """Per-pixel, per-column or NCHW-style [C, 1, 1] addends are not NHWC biases (the
    output is 1x8x8x8, so each of them is along an axis other than the channels)."""
    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 3))
    y = op_add(b, nhwc_conv(b, x, 8, rng), op_constant(b, "other", rng.standard_normal(shape)))
    after, collected = run_pass(b.finish([y]), rng)
    assert op_names(after) == ["op.conv2d", "op.binary"]
    assert counts(collected) == {}


def test_nhwc_bias_from_an_input_is_reshaped(rng):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 3))
    bias = b.input("bias", (1, 1, 1, 8))
    y = b.insert(ops.UnaryOp("leaky_relu", op_add(b, nhwc_conv(b, x, 8, rng), bias), (0.2,))).output
    after, collected = run_pass(b.finish([y]), rng)
    assert op_names(after) == ["op.reshape", "op.conv2d"]
    assert epilogue(after) == ["bias", "leaky_relu(0.2)"]
    assert counts(collected) == {"bias fused": 1, "activation leaky_relu fused": 1}
