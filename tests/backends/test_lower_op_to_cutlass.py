"""lower-op-to-cutlass (after select-kernels): op-level GEMMs, convs and b2b ops become
`cutlass` template instances with the chosen parameters and the whole epilogue; what a
template cannot fuse follows the kernel as elementwise ops, counted; ops no template
computes stay, counted; the module computes what it did (numpy interpreter, fresh random
inputs). On sm80 every instance is one the CUDA emitter writes."""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import boltir
from boltir.backends.cuda.codegen.cutlass_kernels import unsupported_reason
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.interp import find_entry
from boltir.passes import statistics
from boltir.passes.form_persistent_kernels import FormPersistentKernelsPass
from boltir.tools import bolt_opt
from tests.passes.equivalence import assert_equivalent
from tests.passes.test_pad_alignment import OpModel

ARCHS = ("sm80", "sm90")
F16_TOLERANCE = 1e-2
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
TOLERANCE = {"f16": F16_TOLERANCE, "bf16": 3e-2, "f32": 1e-5}
PASS = "lower-op-to-cutlass"
SEPARATE = "fusions kept as separate ops"
LEFT = "ops without a template"


def override(**fields):
    """A step between the passes that replaces fields of every kernel choice."""

    def apply(module: ModuleOp) -> None:
        for op in module.walk():
            if KERNEL_ATTR in op.attributes:
                choice = dataclasses.replace(KernelChoice.from_attr(op.attributes[KERNEL_ATTR]), **fields)
                op.attributes[KERNEL_ATTR] = choice.to_attr()

    return apply


def lower(module: ModuleOp, rng, arch: str = "sm80", tolerance: float = F16_TOLERANCE, *, before=(), between=(), cutlass: int = 2,
          depthwise: str = "direct", few_channels: str = "cutlass"):
    """select-kernels (2.x kernels unless `cutlass` = 3; depthwise convs on `depthwise`'s
    kernel; convs on few channels on `few_channels`'s, CUTLASS's unless a test asks),
    `between`, lower-op-to-cutlass; checked against the interpreter. Every instance is one
    the CUDA templates write."""
    select = SelectKernelsPass(arch=arch, cutlass=cutlass, depthwise=depthwise, few_channels=few_channels)
    passes = [*before, select, *between, LowerOpToCutlassPass()]
    with statistics.collecting() as collected:
        after = assert_equivalent(module, passes, rng, tolerance=tolerance)
    for op in templates(after):
        assert op.prop_value("arch") in (("sm80", "sm90") if cutlass == 3 and arch == "sm90" else ("sm80",))
        assert unsupported_reason(op) is None, unsupported_reason(op)
    return after, collected


def stat(collected: statistics.PassStatistics, what: str) -> int:
    return collected.get(PASS, what)


def notes(collected: statistics.PassStatistics) -> list[str]:
    return collected.notes.get(PASS, [])


def templates(module: ModuleOp) -> list[cutlass.TemplateOp]:
    return [op for op in module.walk() if isinstance(op, cutlass.TemplateOp)]


def kernel_names(module: ModuleOp) -> list[str]:
    """The ops that run, in order: cutlass and op-level ops, not constants."""
    return [
        op.name for op in module.walk()
        if (op.name.startswith("op.") or op.name.startswith("cutlass.")) and op.name not in ("op.constant", "op.yield")
    ]


def assert_nothing_peeled_or_left(collected) -> None:
    assert stat(collected, SEPARATE) == 0 and stat(collected, LEFT) == 0, notes(collected)


# ----------------------------------------------------------------------------- GEMMs


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_gemm(rng, arch, dtype, layout_b):
    m = OpModel(rng, DTYPES[dtype])
    x = m.input("x", (48, 40))
    module = m.finish([m.gemm(x, 24, act="gelu", layout_b=layout_b)])

    after, collected = lower(module, rng, arch, TOLERANCE[dtype])
    assert kernel_names(after) == ["cutlass.gemm"]
    (gemm,) = templates(after)
    assert gemm.prop_value("layout_b") == layout_b and gemm.bias is not None
    assert gemm.epilogue.first_activation.kind == "gelu" and gemm.epilogue.has_bias
    assert str(gemm.accumulator) == "f32"
    assert stat(collected, "cutlass.gemm instances") == 1
    assert_nothing_peeled_or_left(collected)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_split_k_gemm(rng, arch, dtype):
    """Large K, one output tile: the instance reduces K in slices (f32 partial sums)."""
    m = OpModel(rng, DTYPES[dtype])
    x = m.input("x", (64, 4096))
    module = m.finish([m.gemm(x, 64, act="relu")])

    after, collected = lower(module, rng, arch, TOLERANCE[dtype])
    (gemm,) = templates(after)
    assert gemm.prop_value("split_k") > 1
    assert_nothing_peeled_or_left(collected)


@pytest.mark.parametrize("arch", ARCHS)
def test_residual_gemm_keeps_its_whole_epilogue(rng, arch):
    """A bias, an activation, the residual and a second activation, all in the kernel: the
    selector gives the residual block one slice of K rather than split-k."""
    m = OpModel(rng, np.float16)
    x, r = m.input("x", (64, 4096)), m.input("r", (64, 64))
    w, b = m.weight("w", (4096, 64), 4096), m.weight("b", (64,), 1)
    epilogue = ops.EpilogueAttr.make(
        bias=True, activation=ops.Activation("relu"), residual="add", activation2=ops.Activation("relu")
    )
    module = m.finish([m.insert(ops.GemmOp(x, w, bias=b, residual=r, epilogue=epilogue))])

    after, collected = lower(module, rng, arch)
    assert kernel_names(after) == ["cutlass.gemm"]
    (gemm,) = templates(after)
    assert gemm.epilogue == epilogue and gemm.residual is not None and gemm.prop_value("split_k") == 1
    assert_nothing_peeled_or_left(collected)


def test_split_k_residual_block_is_peeled(rng):
    """Forced split-k under a residual block (which CUTLASS cannot slice): the second
    activation and the residual add follow the kernel as elementwise ops, counted."""
    m = OpModel(rng, np.float16)
    x, r = m.input("x", (64, 4096)), m.input("r", (64, 64))
    w, b = m.weight("w", (4096, 64), 4096), m.weight("b", (64,), 1)
    epilogue = ops.EpilogueAttr.make(
        bias=True, activation=ops.Activation("relu"), residual="add", activation2=ops.Activation("silu")
    )
    module = m.finish([m.insert(ops.GemmOp(x, w, bias=b, residual=r, epilogue=epilogue))])

    after, collected = lower(module, rng, between=[override(split_k=4)])
    assert kernel_names(after) == ["cutlass.gemm", "op.elementwise", "op.elementwise"]
    (gemm,) = templates(after)
    assert gemm.prop_value("split_k") == 4 and gemm.residual is None
    assert gemm.epilogue == ops.EpilogueAttr.make(bias=True, activation=ops.Activation("relu"))
    add, act2 = [op for op in after.walk() if isinstance(op, ops.ElementwiseOp)]
    residual = find_entry(after).body.block.args[1]
    assert list(add.inputs) == [gemm.output, residual] and list(act2.inputs) == [add.output]
    assert stat(collected, SEPARATE) == 2 and stat(collected, LEFT) == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_batched_gemm(rng, arch):
    """Attention's Q K^T: a strided batch, both operands batched."""
    m = OpModel(rng, np.float16)
    q, k = m.input("q", (2, 4, 16, 32)), m.input("k", (2, 4, 32, 16))
    module = m.finish([m.insert(ops.GemmOp(q, k))])

    after, collected = lower(module, rng, arch)
    (gemm,) = templates(after)
    assert tensor_shape(gemm.output.type) == (2, 4, 16, 16) and gemm.prop_value("split_k") == 1
    assert_nothing_peeled_or_left(collected)


# ----------------------------------------------------------------------------- convs


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(
    ("dtype", "channels", "iterator"),
    [("f16", 16, "optimized"), ("bf16", 64, "optimized"), ("f16", 4, "fixed_channels"), ("f32", 3, "few_channels"), ("f16", 12, "analytic")],
)
def test_conv(rng, arch, dtype, channels, iterator):
    m = OpModel(rng, DTYPES[dtype])
    x = m.input("x", (2, 9, 9, channels))
    module = m.finish([m.conv(x, 16, 3, strides=(2, 2), act="relu")])

    after, collected = lower(module, rng, arch, TOLERANCE[dtype])
    assert kernel_names(after) == ["cutlass.conv2d_fprop"]
    (conv,) = templates(after)
    assert conv.prop_value("iterator_algorithm") == iterator
    assert conv.prop_value("strides") == (2, 2) and conv.prop_value("pads") == (1, 1, 1, 1)
    assert conv.epilogue.first_activation.kind == "relu" and conv.bias is not None
    assert stat(collected, "cutlass.conv2d_fprop instances") == 1
    assert_nothing_peeled_or_left(collected)


@pytest.mark.parametrize("arch", ARCHS)
def test_resnet_block_conv_keeps_its_residual(rng, arch):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 8, 8, 32))
    h = m.conv(x, 32, 3, name="c1")
    module = m.finish([m.conv(h, 32, 3, residual=x, name="c2")])

    after, collected = lower(module, rng, arch)
    assert kernel_names(after) == ["cutlass.conv2d_fprop", "cutlass.conv2d_fprop"]
    assert templates(after)[1].residual is not None
    assert_nothing_peeled_or_left(collected)


def test_f16_conv_of_three_channels_is_left_on_sm80(rng):
    """C = 3 in f16 reads 2-byte vectors, narrower than Sm80's cp.async: pad-alignment pads
    such a conv to 4 channels first; unpadded it stays op-level, with the reason."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 8, 8, 3))
    module = m.finish([m.conv(x, 16, 3, act="relu")])

    after, collected = lower(module, rng, "sm80")
    assert kernel_names(after) == ["op.conv2d"]
    (conv,) = [op for op in after.walk() if isinstance(op, ops.Conv2dOp)]
    assert conv.epilogue.first_activation.kind == "relu"  # nothing was peeled off it
    assert stat(collected, LEFT) == 1 and stat(collected, SEPARATE) == 0
    (text,) = notes(collected)
    assert text.startswith("left op.conv2d") and "alignment" in text


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("kernel", "strides", "channels"), [(3, (1, 1), 32), (3, (2, 2), 64), (5, (1, 1), 16)])
def test_depthwise_conv(rng, arch, kernel, strides, channels):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 10, 10, channels))
    module = m.finish([m.conv(x, channels, kernel, strides=strides, groups=channels, act="relu")])

    after, collected = lower(module, rng, arch, depthwise="cutlass")
    assert kernel_names(after) == ["cutlass.depthwise_conv2d_fprop"]
    (conv,) = templates(after)
    assert conv.prop_value("op_class") == "simt" and conv.prop_value("strides") == strides
    assert conv.epilogue.first_activation.kind == "relu"
    assert stat(collected, "cutlass.depthwise_conv2d_fprop instances") == 1
    assert_nothing_peeled_or_left(collected)


def test_depthwise_conv_with_bias_and_residual_is_peeled(rng):
    """The direct conv's epilogue reads one source tensor: the residual add (and the
    activation after it) become elementwise ops after the kernel."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 10, 10, 32))
    w, b = m.weight("w", (32, 3, 3, 1), 9), m.weight("b", (32,), 1)
    epilogue = ops.EpilogueAttr.make(
        bias=True, activation=ops.Activation("clip", (0.0, 6.0)), residual="add", activation2=ops.Activation("relu")
    )
    module = m.finish([m.insert(ops.Conv2dOp(x, w, bias=b, residual=x, pads=(1, 1, 1, 1), groups=32, epilogue=epilogue))])

    after, collected = lower(module, rng, depthwise="cutlass")
    assert kernel_names(after) == ["cutlass.depthwise_conv2d_fprop", "op.elementwise", "op.elementwise"]
    (conv,) = templates(after)
    assert conv.residual is None
    assert conv.epilogue == ops.EpilogueAttr.make(bias=True, activation=ops.Activation("clip", (0.0, 6.0)))
    assert stat(collected, SEPARATE) == 2 and stat(collected, LEFT) == 0


def test_depthwise_residual_alone_stays_in_the_kernel(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 10, 10, 32))
    w = m.weight("w", (32, 3, 3, 1), 9)
    epilogue = ops.EpilogueAttr.make(residual="add", activation2=ops.Activation("relu"))
    module = m.finish([m.insert(ops.Conv2dOp(x, w, residual=x, pads=(1, 1, 1, 1), groups=32, epilogue=epilogue))])

    after, collected = lower(module, rng, depthwise="cutlass")
    assert kernel_names(after) == ["cutlass.depthwise_conv2d_fprop"]
    assert templates(after)[0].epilogue == epilogue
    assert_nothing_peeled_or_left(collected)


def test_nchw_and_grouped_convs_are_left_with_a_note(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 32, 8, 8))
    w = m.weight("w", (16, 32, 3, 3), 288)
    nchw = m.insert(ops.Conv2dOp(x, w, layout="NCHW", pads=(1, 1, 1, 1)))
    y = m.input("y", (1, 8, 8, 32))
    module = m.finish([nchw, m.conv(y, 32, 3, groups=4)])

    after, collected = lower(module, rng)
    assert kernel_names(after) == ["op.conv2d", "op.conv2d"]
    assert stat(collected, LEFT) == 2 and stat(collected, SEPARATE) == 0
    assert [text.split(": ", 1)[1] for text in notes(collected)] == ["not NHWC/OHWI", "grouped conv"]


# ------------------------------------------------------------------------- b2b ops

FUSE = FormPersistentKernelsPass()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("n0", "n1", "residency"), [(64, 128, "register"), (32, 64, "register"), (128, 64, "shared"), (256, 256, "shared")])
@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_b2b_gemm(rng, arch, n0, n1, residency, layout_b):
    m = OpModel(rng, np.float16)
    x = m.input("x", (64, 32))
    hidden = m.gemm(x, n0, act="relu", layout_b=layout_b, name="fc1")
    module = m.finish([m.gemm(hidden, n1, act="gelu", layout_b=layout_b, name="fc2")])

    after, collected = lower(module, rng, arch, before=[FUSE])
    assert kernel_names(after) == ["cutlass.b2b_gemm"]
    (b2b,) = templates(after)
    assert b2b.prop_value("residency") == residency
    # example 13 reads B0 and B1 column-major (N x K): row-major constants are transposed
    assert tensor_shape(b2b.b0.type) == (n0, 32) and tensor_shape(b2b.b1.type) == (n1, n0)
    assert b2b.epilogue0.first_activation.kind == "relu" and b2b.epilogue1.first_activation.kind == "gelu"
    assert stat(collected, "cutlass.b2b_gemm instances") == 1
    assert_nothing_peeled_or_left(collected)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("n0", "n1"), [(32, 64), (64, 128), (128, 128)])
def test_b2b_conv(rng, arch, n0, n1):
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 16))
    module = m.finish([m.conv(m.conv(x, n0, 3, strides=(2, 2), act="silu", name="c1"), n1, 1, name="c2")])

    after, collected = lower(module, rng, arch, before=[FUSE])
    assert kernel_names(after) == ["cutlass.b2b_conv2d"]
    (b2b,) = templates(after)
    assert b2b.prop_value("strides") == (2, 2) and b2b.prop_value("residency") == ("register" if n0 <= 64 else "shared")
    assert stat(collected, "cutlass.b2b_conv2d instances") == 1
    assert_nothing_peeled_or_left(collected)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("rows", "n1"), [(64, 24), (100, 64), (1, 64)])
def test_unfused_b2b_gemm_becomes_two_gemm_instances(rng, arch, rows, n1):
    """N1 not a multiple of 16, or M not a multiple of 8 (a batch-1 MLP head): the pair
    runs as two GEMM kernels."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (rows, 32))
    module = m.finish([m.gemm(m.gemm(x, 64, act="relu", name="fc1"), n1, name="fc2")])

    after, collected = lower(module, rng, arch, before=[FUSE])
    assert kernel_names(after) == ["cutlass.gemm", "cutlass.gemm"]
    first, second = templates(after)
    assert second.a is first.output
    assert collected.get("select-kernels", "op.b2b_gemm unfused") == 1
    assert_nothing_peeled_or_left(collected)


@pytest.mark.parametrize("arch", ARCHS)
def test_unfused_b2b_conv_becomes_two_conv_instances(rng, arch):
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 16))
    module = m.finish([m.conv(m.conv(x, 32, 3, name="c1"), 24, 1, name="c2")])

    after, collected = lower(module, rng, arch, before=[FUSE])
    assert kernel_names(after) == ["cutlass.conv2d_fprop", "cutlass.conv2d_fprop"]
    assert collected.get("select-kernels", "op.b2b_conv2d unfused") == 1
    assert_nothing_peeled_or_left(collected)


def test_b2b_choice_the_template_cannot_run_is_left(rng):
    """A choice forced onto 4-element accesses, which example 13's conv kernels do not
    make: the b2b op stays op-level, counted, with the reason."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 9, 9, 16))
    module = m.finish([m.conv(m.conv(x, 32, 3, name="c1"), 64, 1, name="c2")])

    after, collected = lower(module, rng, before=[FUSE], between=[override(alignment=(4, 4, 4))])
    assert kernel_names(after) == ["op.b2b_conv2d"]
    assert stat(collected, LEFT) == 1
    (text,) = notes(collected)
    assert text.startswith("left op.b2b_conv2d") and "128 bits" in text


# ------------------------------------------------------------------------ the archs


def test_sm90_instances_keep_the_whole_epilogue(rng):
    """3.x instances take every epilogue whole (one visitor tree of our own): a residual
    multiply with a second activation, which the 2.x residual block also takes, and a
    residual after a GEMM under split-k, which it does not."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (2, 10, 10, 64))  # 64 channels: the heuristic keeps convs on fewer on 2.x
    w, b = m.weight("w", (64, 3, 3, 64), 576), m.weight("b", (64,), 1)
    r = m.input("r", (2, 10, 10, 64))
    epilogue = ops.EpilogueAttr.make(bias=True, activation=ops.Activation("gelu"), residual="mul", activation2=ops.Activation("relu"))
    conv = m.insert(ops.Conv2dOp(x, w, bias=b, residual=r, pads=(1, 1, 1, 1), epilogue=epilogue))
    a, res = m.input("a", (384, 4096)), m.input("res", (384, 256))  # M > 256: split-k
    wg, bg = m.weight("wg", (4096, 256), 4096), m.weight("bg", (256,), 1)
    gemm_epilogue = ops.EpilogueAttr.make(bias=True, activation=ops.Activation("relu"), residual="add")
    gemm = m.insert(ops.GemmOp(a, wg, bias=bg, residual=res, epilogue=gemm_epilogue))
    module = m.finish([conv, gemm])

    after, collected = lower(module, rng, "sm90", cutlass=3)
    lowered = templates(after)
    assert [op.name for op in lowered] == ["cutlass.conv2d_fprop", "cutlass.gemm"]
    assert all(op.prop_value("arch") == "sm90" for op in lowered)
    assert lowered[0].epilogue == epilogue and lowered[1].epilogue == gemm_epilogue
    assert lowered[1].prop_value("split_k") > 1 and lowered[1].prop_value("kernel_schedule") == "cooperative"
    assert_nothing_peeled_or_left(collected)


def test_what_3x_cannot_run_stays_2x_on_sm90(rng):
    """A depthwise conv has no 3.x template: on sm90 it is a 2.x instance, whose limits
    (the direct conv's one source tensor) peel the residual off as before."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (1, 10, 10, 32))
    w, b = m.weight("w", (32, 3, 3, 1), 9), m.weight("b", (32,), 1)
    epilogue = ops.EpilogueAttr.make(bias=True, activation=ops.Activation("relu"), residual="add")
    module = m.finish([m.insert(ops.Conv2dOp(x, w, bias=b, residual=x, pads=(1, 1, 1, 1), groups=32, epilogue=epilogue))])
    after, collected = lower(module, rng, "sm90", cutlass=3, depthwise="cutlass")
    (conv,) = templates(after)
    assert conv.name == "cutlass.depthwise_conv2d_fprop" and conv.prop_value("arch") == "sm80"
    assert stat(collected, "fusions kept as separate ops") == 1


def test_choices_on_both_archs_differ_only_where_the_arch_does(rng):
    """2.x kernels for an sm90 target are sm80 instances sized for its 132 SMs."""
    m = OpModel(rng, np.float16)
    x = m.input("x", (256, 4096))
    module = m.finish([m.gemm(x, 256, bias=False)])
    lowered = {arch: templates(lower(module, rng, arch)[0])[0] for arch in ARCHS}
    assert lowered["sm80"].prop_value("arch") == lowered["sm90"].prop_value("arch") == "sm80"
    assert lowered["sm80"].prop_value("split_k") != lowered["sm90"].prop_value("split_k")


# -------------------------------------------------------------- what is left alone


def test_ops_without_a_kernel_are_left_alone(rng):
    m = OpModel(rng, np.float16)
    module = m.finish([m.gemm(m.input("x", (16, 32)), 16)])
    after = module.clone()
    with statistics.collecting() as collected:
        LowerOpToCutlassPass().apply(boltir.make_context(), after)
    assert boltir.print_module(after) == boltir.print_module(module)
    assert collected.counters.get(PASS, {}) == {}


def test_lowering_twice_gives_identical_ir(rng):
    m = OpModel(rng, np.float16)
    x = m.input("x", (64, 64))
    module = m.finish([m.gemm(m.gemm(x, 64, act="relu", name="fc1"), 64, name="fc2"), m.gemm(x, 32, name="fc3")])
    printed = []
    for _ in range(2):
        after = module.clone()
        for step in (FUSE, SelectKernelsPass(arch="sm80"), LowerOpToCutlassPass()):
            step.apply(boltir.make_context(), after)
        printed.append(boltir.print_module(after))
    assert printed[0] == printed[1]


# ------------------------------------------------------------------------- errors

GEMM_IR = """\
func.func @main(%x: tensor<16x32xf16>, %w: tensor<32x16xf16>) -> tensor<16x16xf16> {
  %0 = op.gemm %x, %w {kernel = KERNEL} : (tensor<16x32xf16>, tensor<32x16xf16>) -> tensor<16x16xf16>
  func.return %0 : tensor<16x16xf16>
}
"""
GOOD_KERNEL = (
    '{family = "gemm", arch = "sm80", threadblock = array<i64: 64, 64, 32>, warp = array<i64: 32, 32, 32>, '
    'instruction = array<i64: 16, 8, 16>, stages = 3 : i64, alignment = array<i64: 8, 8, 8>}'
)


def error_line(capsys, *argv: str) -> str:
    assert bolt_opt.main([str(a) for a in argv]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_a_good_handwritten_kernel_lowers(tmp_path, capsys):
    path = tmp_path / "good.mlir"
    path.write_text(GEMM_IR.replace("KERNEL", GOOD_KERNEL))
    assert bolt_opt.main([str(path), "-p", PASS]) == 0
    out = capsys.readouterr().out
    assert "cutlass.gemm %x, %w" in out and "stages = 3>" in out


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        ('"fast"', 'a kernel choice must be a dictionary, got "fast"'),
        (GOOD_KERNEL.replace(', warp = array<i64: 32, 32, 32>', ""), "the kernel choice has no 'warp'"),
        (GOOD_KERNEL.replace("array<i64: 64, 64, 32>", "array<i64: 64, 64>"), "the kernel choice's 'threadblock' must be 3 integers"),
        (GOOD_KERNEL.replace("stages = 3 : i64", 'stages = "three"'), "the kernel choice's 'stages' must be an integer"),
        (GOOD_KERNEL.replace('family = "gemm"', 'family = "gemv"'), "unknown kernel family 'gemv'"),
        (GOOD_KERNEL.replace('"sm80"', '"sm70"'), "the kernel choice's arch must be one of sm80, sm90; got 'sm70'"),
        (GOOD_KERNEL.replace("array<i64: 32, 32, 32>", "array<i64: 48, 32, 32>"), "the warp shape [48, 32, 32] does not divide [64, 64, 32]"),
        (GOOD_KERNEL.replace('family = "gemm"', 'family = "depthwise_conv2d_fprop"'), "a depthwise_conv2d_fprop kernel cannot compute op.gemm"),
        (GOOD_KERNEL.replace('family = "gemm"', 'family = "conv2d_fprop"'), "the kernel choice has no 'iterator_algorithm'"),
    ],
    ids=["not-a-dictionary", "missing-entry", "short-shape", "ill-typed", "unknown-family", "bad-arch", "tile-does-not-divide", "wrong-family", "conv-without-iterator"],
)
def test_malformed_kernel_attribute(tmp_path, capsys, kernel, message):
    path = tmp_path / "bad.mlir"
    path.write_text(GEMM_IR.replace("KERNEL", kernel))
    line = error_line(capsys, path, "-p", PASS)
    assert line.startswith(f"{path}:2:3: error: bad kernel attribute on op.gemm: "), line
    assert message in line, line


CONV_IR = """\
func.func @main(%x: tensor<1x8x8x32xf16>, %w: tensor<32x3x3x16xf16>) -> tensor<1x8x8x32xf16> {
  %0 = op.conv2d %x, %w {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, kernel = KERNEL} : (tensor<1x8x8x32xf16>, tensor<32x3x3x16xf16>) -> tensor<1x8x8x32xf16>
  func.return %0 : tensor<1x8x8x32xf16>
}
"""
SOFTMAX_IR = """\
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = op.softmax %x {axis = 1 : i64, kernel = KERNEL} : tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (CONV_IR.replace("KERNEL", GOOD_KERNEL.replace('"gemm"', '"depthwise_conv2d_fprop"')),
         "bad kernel attribute on op.conv2d: a depthwise_conv2d_fprop kernel cannot compute a conv with 2 groups of 32 channels"),
        (SOFTMAX_IR.replace("KERNEL", GOOD_KERNEL), "bad kernel attribute on op.softmax: no CUTLASS template computes op.softmax"),
    ],
    ids=["depthwise-on-grouped-conv", "kernel-on-softmax"],
)
def test_kernel_that_cannot_compute_its_op(tmp_path, capsys, text, message):
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    assert error_line(capsys, path, "-p", PASS) == f"{path}:2:3: error: {message}"


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_random_aligned_shapes_all_lower_to_instances_the_emitter_writes(rng, dtype):
    """GEMMs (every epilogue kind), convs and depthwise convs of random shapes whose extents
    are multiples of 32 bits, as pad-alignment leaves them: on sm80 each becomes one
    instance the CUDA emitter writes, with its whole epilogue."""
    per_word = 1 if dtype == "f32" else 2
    m = OpModel(rng, DTYPES[dtype])
    outputs = []
    for index in range(12):
        rows, n, k = int(rng.integers(1, 300)), per_word * int(rng.integers(1, 200)), per_word * int(rng.integers(1, 600))
        x = m.input(f"x{index}", (rows, k))
        residual = m.input(f"r{index}", (rows, n)) if index % 3 else None
        outputs.append(m.gemm(x, n, act=["relu", "none", "gelu"][index % 3], bias=index % 2 == 0, residual=residual,
                              layout_b=["row", "col"][index % 2], name=f"fc{index}"))
        c, kout = per_word * int(rng.integers(1, 40)), per_word * int(rng.integers(1, 40))
        image = m.input(f"image{index}", (1, int(rng.integers(3, 10)), int(rng.integers(3, 10)), c))
        outputs.append(m.conv(image, kout, int(rng.choice([1, 3, 5])), strides=(int(rng.integers(1, 3)),) * 2, name=f"conv{index}"))
        channels = int(rng.choice([8, 16, 24, 32, 64, 96, 144]))
        y = m.input(f"y{index}", (1, int(rng.integers(3, 14)), int(rng.integers(3, 14)), channels))
        outputs.append(m.conv(y, channels, int(rng.choice([3, 5])), strides=(int(rng.integers(1, 3)),) * 2, groups=channels, name=f"dw{index}"))
    module = m.finish(outputs)

    after = module.clone()
    with statistics.collecting() as collected:
        for step in (SelectKernelsPass(arch="sm80", depthwise="cutlass", small_m="cutlass", few_channels="cutlass"),
                     LowerOpToCutlassPass()):
            step.apply(boltir.make_context(), after)
    boltir.verify_module(after)
    assert_nothing_peeled_or_left(collected)
    assert len(templates(after)) == len(outputs)
    assert not [(op.name, unsupported_reason(op)) for op in templates(after) if unsupported_reason(op) is not None]
