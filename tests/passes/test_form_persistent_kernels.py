"""form-persistent-kernels: back-to-back GEMMs and conv -> 1x1 conv chains become one
op.b2b_gemm / op.b2b_conv2d; the fused module computes what the unfused one does, in f16."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from boltir.dialects import op as ops
from boltir.passes import statistics
from boltir.passes.form_persistent_kernels import FormPersistentKernelsPass
from tests.passes.equivalence import assert_equivalent
from tests.passes.test_pad_alignment import OpModel

PASS = FormPersistentKernelsPass()
F16_TOLERANCE = 1e-2


def run_pass(module: ModuleOp, rng) -> tuple[ModuleOp, statistics.PassStatistics]:
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng, tolerance=F16_TOLERANCE)
    return after, collected


def stat(collected: statistics.PassStatistics, what: str) -> int:
    return collected.get(PASS.name, what)


def notes(collected: statistics.PassStatistics) -> list[str]:
    return collected.notes.get(PASS.name, [])


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("op.") and op.name != "op.constant"]


# ----------------------------------------------------------------------------- GEMMs


@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_mlp_becomes_one_b2b_gemm(rng, layout_b):
    m = OpModel(rng, np.float16)
    x = m.input("x", (48, 40))
    hidden = m.gemm(x, 64, act="relu", layout_b=layout_b, name="fc1")
    module = m.finish([m.gemm(hidden, 24, act="gelu", layout_b=layout_b, name="fc2")])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.b2b_gemm"]
    (fused,) = [op for op in after.walk() if isinstance(op, ops.B2bGemmOp)]
    assert fused.prop_value("layout_b0") == fused.prop_value("layout_b1") == layout_b
    assert fused.epilogue0.first_activation.kind == "relu" and fused.epilogue1.first_activation.kind == "gelu"
    assert fused.bias0 is not None and fused.bias1 is not None
    assert stat(collected, "persistent kernels formed") == 1 and stat(collected, "op.b2b_gemm formed") == 1
    assert stat(collected, "persistent kernels refused") == 0


def test_alpha_and_beta_are_kept(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (16, 32))
    w0, b0 = m.weight("w0", (32, 32), 32), m.weight("b0", (32,), 1)
    epilogue = ops.EpilogueAttr.make(alpha=0.5, beta=2.0, bias=True, activation=ops.Activation("leaky_relu", (0.1,)))
    hidden = m.insert(ops.GemmOp(x, w0, bias=b0, epilogue=epilogue))
    module = m.finish([m.gemm(hidden, 8, bias=False)])

    after, _ = run_pass(module, rng)
    (fused,) = [op for op in after.walk() if isinstance(op, ops.B2bGemmOp)]
    assert fused.epilogue0 == epilogue and fused.bias1 is None


def test_chain_of_three_fuses_the_first_pair(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (32, 16))
    hidden = m.gemm(m.gemm(x, 32, act="relu", name="fc1"), 32, act="relu", name="fc2")
    module = m.finish([m.gemm(hidden, 8, name="fc3")])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.b2b_gemm", "op.gemm"]
    assert stat(collected, "persistent kernels formed") == 1 and stat(collected, "persistent kernels refused") == 0


def test_f32_mlp_is_refused(rng):
    m = OpModel(rng, np.float32)
    x = m.input("x", (16, 32))
    module = m.finish([m.gemm(m.gemm(x, 64, act="relu"), 8)])

    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert op_names(after) == ["op.gemm", "op.gemm"]
    assert stat(collected, "persistent kernels refused") == 1
    (text,) = notes(collected)
    assert text.startswith("refused op.gemm") and "not fp16 (the pair computes in f32)" in text


def test_wide_first_gemm_is_refused(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (8, 16))
    module = m.finish([m.gemm(m.gemm(x, 512, name="fc1"), 16, name="fc2")])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.gemm", "op.gemm"]
    assert any("first N is 512 > 256" in text for text in notes(collected))


def test_first_n_of_256_is_fused(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (8, 16))
    module = m.finish([m.gemm(m.gemm(x, 256, name="fc1", act="relu"), 16, name="fc2")])

    after, _ = run_pass(module, rng)
    assert op_names(after) == ["op.b2b_gemm"]


def test_intermediate_with_another_user_is_refused(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (8, 16))
    hidden = m.gemm(x, 32, act="relu")
    module = m.finish([m.gemm(hidden, 16, name="fc2"), hidden])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.gemm", "op.gemm"]
    assert any("intermediate has another user" in text for text in notes(collected))


def test_residual_epilogue_is_refused(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (8, 16))
    hidden = m.gemm(x, 16, act="relu", name="fc1", residual=x)
    module = m.finish([m.gemm(hidden, 16, name="fc2")])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.gemm", "op.gemm"]
    assert any("first epilogue has a residual" in text for text in notes(collected))


def test_non_constant_weight_is_refused(rng):
    m = OpModel(rng, np.float16)
    x, w = m.input("x", (8, 16)), m.input("w", (32, 4))
    hidden = m.gemm(x, 32, act="relu")
    module = m.finish([m.insert(ops.GemmOp(hidden, w))])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.gemm", "op.gemm"]
    assert any("second B is not a constant" in text for text in notes(collected))


# ----------------------------------------------------------------------------- convs


@pytest.mark.parametrize(("kernel", "strides"), [(3, (1, 1)), (3, (2, 2)), (1, (1, 1))])
def test_conv_then_pointwise_conv(rng, kernel, strides):
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 16))
    hidden = m.conv(x, 32, kernel, strides=strides, act="silu", name="conv1")
    module = m.finish([m.conv(hidden, 24, 1, act="relu", name="conv2")])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.b2b_conv2d"]
    (fused,) = [op for op in after.walk() if isinstance(op, ops.B2bConv2dOp)]
    assert fused.prop_value("strides") == strides and fused.prop_value("pads") == (kernel // 2,) * 4
    assert stat(collected, "op.b2b_conv2d formed") == 1 and stat(collected, "persistent kernels formed") == 1


@pytest.mark.parametrize(
    ("second_kernel", "second_strides", "groups", "first_k", "reason"),
    [
        (3, (1, 1), 1, 32, "second conv is 3x3"),
        (1, (2, 2), 1, 32, "second conv has stride 2x2"),
        (1, (1, 1), 2, 32, "first conv is grouped (2 groups)"),
        (1, (1, 1), 1, 320, "first N (output channels) is 320 > 256"),
    ],
)
def test_conv_pair_refused(rng, second_kernel, second_strides, groups, first_k, reason):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 6, 6, 16))
    hidden = m.conv(x, first_k, 3, groups=groups, name="conv1")
    module = m.finish([m.conv(hidden, 8, second_kernel, strides=second_strides, name="conv2")])

    after, collected = run_pass(module, rng)
    assert op_names(after) == ["op.conv2d", "op.conv2d"]
    assert stat(collected, "persistent kernels refused") == 1 and stat(collected, "persistent kernels formed") == 0
    (text,) = notes(collected)
    assert text.startswith("refused op.conv2d") and reason in text


def test_f32_conv_pair_is_refused(rng):
    m = OpModel(rng, np.float32)
    x = m.input("x", (1, 6, 6, 8))
    module = m.finish([m.conv(m.conv(x, 16, 3, name="conv1"), 8, 1, name="conv2")])

    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert op_names(after) == ["op.conv2d", "op.conv2d"]
    assert any("not fp16" in text for text in notes(collected))
