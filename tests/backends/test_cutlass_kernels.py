"""The CUDA emitter: cutlass ops to CUTLASS 2.x template instances with extern "C" launchers.

Without a GPU: every family and epilogue kind is emitted and checked as text, instances are
deduplicated by their template parameters, unsupported ops are refused with a reason, and
each epilogue plan is checked numerically against the interpreter's epilogue (the algebra
that maps `#op.epilogue` onto CUTLASS's functors). The `slow` tests compile representative
translation units with the real nvcc (skipped, with the reason, without nvcc or the CUTLASS
headers).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import cutlass_kernels
from boltir.backends.cuda.codegen.cutlass_kernels import (
    emit_translation_unit,
    instance_key,
    kernel_name,
    unsupported_reason,
)
from boltir.backends.cuda.codegen.epilogues import f32_literal, plan_epilogue
from boltir.backends.cuda.toolchain.nvcc import find_cutlass_include_dirs
from boltir.diagnostics import BoltError
from boltir.dialects.op import ACTIVATION_ARITY, UNBOUNDED, Activation, EpilogueAttr
from boltir.interp.op import activation as apply_activation
from boltir.interp.op import apply_epilogue

# --------------------------------------------------------------------- IR builders

TILE_F16 = "#cutlass.tile<threadblock = [128, 128, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>"
TILE_SMALL = "#cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>"
TILE_TF32 = "#cutlass.tile<threadblock = [128, 128, 16], warp = [64, 64, 16], instruction = [16, 8, 8], stages = 3>"
TILE_DW = "#cutlass.tile<threadblock = [64, 64, 9], warp = [16, 64, 9], instruction = [1, 1, 1], stages = 3>"
TILE_B2B0_RF = "#cutlass.tile<threadblock = [64, 64, 32], warp = [16, 64, 32], instruction = [16, 8, 16], stages = 3>"
TILE_B2B1_RF = "#cutlass.tile<threadblock = [64, 128, 32], warp = [16, 128, 32], instruction = [16, 8, 16], stages = 3>"
TILE_B2B1_RF64 = "#cutlass.tile<threadblock = [64, 64, 32], warp = [16, 64, 32], instruction = [16, 8, 16], stages = 3>"
TILE_B2B0_SMEM = "#cutlass.tile<threadblock = [64, 64, 32], warp = [32, 32, 32], instruction = [16, 8, 16], stages = 3>"
TILE_B2B1_SMEM = "#cutlass.tile<threadblock = [64, 256, 32], warp = [64, 64, 32], instruction = [16, 8, 16], stages = 3>"
TILE_B2BC0_RF = "#cutlass.tile<threadblock = [64, 64, 32], warp = [32, 64, 32], instruction = [16, 8, 16], stages = 3>"
TILE_B2BC1_RF = "#cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>"


def tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def _func(name: str, args: list[tuple[str, str]], body: str, result: str) -> str:
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    return f"func.func @{name}({params}) -> {result} {{\n  {body}\n  func.return %0 : {result}\n}}"


def gemm_ir(name="g", a=(128, 64), b=(64, 256), out=(128, 256), element="f16", *, layout_a="row", layout_b="row",
            bias=False, residual=False, epilogue="", tile=TILE_F16, alignment=(8, 8, 8), split_k=1, arch="sm80",
            accumulator="f32", op_class="tensorop", bias_element=None) -> str:
    args = [("a", tensor(a, element)), ("b", tensor(b, element))]
    operands = "%a, %b"
    if bias:
        args.append(("bias", tensor((out[-1],), bias_element or element)))
        operands += " bias %bias"
    if residual:
        args.append(("r", tensor(out, element)))
        operands += " residual %r"
    props = (
        f'arch = "{arch}", op_class = "{op_class}", accumulator = {accumulator}, layout_a = "{layout_a}", '
        f'layout_b = "{layout_b}", tile = {tile}, alignment = array<i64: {", ".join(map(str, alignment))}>, '
        f"split_k = {split_k}, epilogue = #op.epilogue<{epilogue}>"
    )
    types = ", ".join(t for _, t in args)
    body = f"%0 = cutlass.gemm {operands} {{{props}}} : ({types}) -> {tensor(out, element)}"
    return _func(name, args, body, tensor(out, element))


def conv_ir(name="c", x=(2, 16, 16, 64), w=(64, 3, 3, 64), out=(2, 16, 16, 64), element="f16", *, bias=False,
            residual=False, epilogue="", tile=TILE_F16, alignment=(8, 8, 8), iterator="optimized", strides=(1, 1),
            pads=(1, 1, 1, 1), dilations=(1, 1), split_k=1, depthwise=False, accumulator="f32") -> str:
    args = [("x", tensor(x, element)), ("w", tensor(w, element))]
    operands = "%x, %w"
    if bias:
        args.append(("bias", tensor((out[-1],), element)))
        operands += " bias %bias"
    if residual:
        args.append(("r", tensor(out, element)))
        operands += " residual %r"
    props = (
        f'arch = "sm80", accumulator = {accumulator}, tile = {tile}, alignment = array<i64: {", ".join(map(str, alignment))}>, '
        f"strides = array<i64: {strides[0]}, {strides[1]}>, pads = array<i64: {', '.join(map(str, pads))}>, "
        f"dilations = array<i64: {dilations[0]}, {dilations[1]}>, epilogue = #op.epilogue<{epilogue}>"
    )
    if depthwise:
        props += ', op_class = "simt"'
        op = "cutlass.depthwise_conv2d_fprop"
    else:
        props += f', iterator_algorithm = "{iterator}", split_k = {split_k}'
        op = "cutlass.conv2d_fprop"
    types = ", ".join(t for _, t in args)
    body = f"%0 = {op} {operands} {{{props}}} : ({types}) -> {tensor(out, element)}"
    return _func(name, args, body, tensor(out, element))


def depthwise_ir(name="d", *, x=(2, 16, 16, 64), out=(2, 16, 16, 64), epilogue="bias, clip(0.0, 6.0)", bias=True,
                 residual=False, strides=(1, 1), accumulator="f16", tile=TILE_DW) -> str:
    return conv_ir(name, x, (x[3], 3, 3, 1), out, bias=bias, residual=residual, epilogue=epilogue, tile=tile,
                   strides=strides, depthwise=True, accumulator=accumulator)


def b2b_gemm_ir(name="bg", m=256, k0=64, n0=64, n1=128, *, residency="register", tile0=TILE_B2B0_RF,
                tile1=TILE_B2B1_RF, epilogue0="bias, relu", epilogue1="bias, relu", bias0=True, bias1=True,
                accumulator="f16") -> str:
    args = [("a", tensor((m, k0), "f16")), ("b0", tensor((n0, k0), "f16")), ("b1", tensor((n1, n0), "f16"))]
    operands = "%a, %b0, %b1"
    if bias0:
        args.append(("c0", tensor((n0,), "f16")))
        operands += " bias0 %c0"
    if bias1:
        args.append(("c1", tensor((n1,), "f16")))
        operands += " bias1 %c1"
    props = (
        f'arch = "sm80", accumulator = {accumulator}, tile = {tile0}, tile1 = {tile1}, residency = "{residency}", '
        f"alignment = array<i64: 8, 8, 8>, epilogue0 = #op.epilogue<{epilogue0}>, epilogue1 = #op.epilogue<{epilogue1}>"
    )
    types = ", ".join(t for _, t in args)
    body = f"%0 = cutlass.b2b_gemm {operands} {{{props}}} : ({types}) -> {tensor((m, n1), 'f16')}"
    return _func(name, args, body, tensor((m, n1), "f16"))


def b2b_conv_ir(name="bc", x=(2, 8, 8, 64), k0=64, k1=128, *, residency="register", tile0=TILE_B2BC0_RF,
                tile1=TILE_B2BC1_RF, epilogue0="bias, relu", epilogue1="bias, relu", accumulator="f16") -> str:
    n, h, w, c = x
    args = [
        ("x", tensor(x, "f16")), ("w0", tensor((k0, 3, 3, c), "f16")), ("w1", tensor((k1, 1, 1, k0), "f16")),
        ("c0", tensor((k0,), "f16")), ("c1", tensor((k1,), "f16")),
    ]
    props = (
        f'arch = "sm80", accumulator = {accumulator}, tile = {tile0}, tile1 = {tile1}, residency = "{residency}", '
        f"alignment = array<i64: 8, 8, 8>, pads = array<i64: 1, 1, 1, 1>, "
        f"epilogue0 = #op.epilogue<{epilogue0}>, epilogue1 = #op.epilogue<{epilogue1}>"
    )
    types = ", ".join(t for _, t in args)
    out = tensor((n, h, w, k1), "f16")
    body = f"%0 = cutlass.b2b_conv2d %x, %w0, %w1 bias0 %c0 bias1 %c1 {{{props}}} : ({types}) -> {out}"
    return _func(name, args, body, out)


def module_of(*functions: str):
    return boltir.parse_module("\n".join(functions))


def ops_of(*functions: str) -> list:
    return cutlass_kernels.cutlass_ops(module_of(*functions))


def one_op(function: str):
    (op,) = ops_of(function)
    return op


def launchers(source: str) -> list[str]:
    return re.findall(r'extern "C" int (boltir_\w+)\(', source)


# ------------------------------------------------------------------------ families


def test_gemm_bias_relu_instance():
    op = one_op(gemm_ir(b=(256, 64), layout_b="col", bias=True, epilogue="bias, relu"))
    assert unsupported_reason(op) is None
    source = emit_translation_unit([op])
    name = kernel_name(op)
    assert launchers(source) == [name]
    assert re.fullmatch(r"boltir_gemm_[0-9a-f]{12}", name)
    assert (
        f'extern "C" int {name}(\n    const void *a, const void *b, const void *bias, const void *residual, void *d,\n'
        "    int batch, int m, int n, int k,\n    void *workspace, size_t workspace_bytes, cudaStream_t stream)"
    ) in source
    assert f'extern "C" size_t {name}_workspace_size(int batch, int m, int n, int k)' in source
    assert "cutlass::gemm::device::GemmUniversal<" in source
    assert "using LayoutB = cutlass::layout::ColumnMajor;" in source
    assert "cutlass::gemm::GemmShape<128, 128, 32>," in source
    assert "cutlass::epilogue::thread::LinearCombinationGeneric<\n    Act, ElementC, 8, ElementAccumulator, float," in source
    assert "return boltir::epilogue::relu(x);" in source
    # the bias is C through a zero row stride, scaled by beta
    assert "void const *c = bias;\n  int64_t const ldc = 0;" in source
    assert "typename EpilogueOp::Params(1.0f, 1.0f)" in source
    assert "int64_t const lda = k;" in source and "int64_t const ldb = k;" in source
    assert 'extern "C" __attribute__((weak)) const char *boltir_error_string(int code)' in source
    assert '#include "cutlass/gemm/device/gemm_universal.h"' in source
    assert "b2b" not in source.split("// ----------------------------------------------------------------- boltir_epilogue.h")[0]


def test_gemm_residual_uses_the_broadcast_epilogue():
    op = one_op(gemm_ir(element="bf16", bias=True, residual=True, epilogue="bias, relu, residual = add, then gelu"))
    source = emit_translation_unit([op])
    assert "cutlass::gemm::device::GemmUniversalWithBroadcast<" in source
    assert "LinearCombinationResidualBlock<\n    ElementC, ElementAccumulator, float, ElementC, 8,\n    Act, cutlass::plus, Act2>;" in source
    assert "using ElementA = cutlass::bfloat16_t;" in source
    assert "return boltir::epilogue::relu(x);" in source
    assert "return boltir::epilogue::gelu(x);" in source
    assert "const_cast<void *>(bias),  // the broadcast vector" in source
    assert "typename EpilogueOp::Params(1.0f, 1.0f)" in source


def test_gemm_tf32():
    op = one_op(gemm_ir(element="f32", tile=TILE_TF32, alignment=(4, 4, 4), bias=True, epilogue="alpha = 0.5, bias, leaky_relu(0.1)"))
    assert unsupported_reason(op) is None
    source = emit_translation_unit([op])
    assert "using ElementA = float;" in source
    assert "cutlass::gemm::GemmShape<16, 8, 8>," in source
    assert "cutlass::arch::OpMultiplyAdd>;" in source
    assert "boltir::epilogue::leaky_relu(x, 0.1f)" in source
    assert "typename EpilogueOp::Params(0.5f, 1.0f)" in source


def test_gemm_split_k():
    op = one_op(gemm_ir(a=(1024, 64), b=(1024, 128), out=(64, 128), layout_a="col", bias=True, split_k=4,
                        tile=TILE_SMALL, epilogue="bias, sigmoid"))
    source = emit_translation_unit([op])
    assert "int const count = 4;  // serial split-k slices" in source
    assert "int64_t const lda = m;" in source
    assert "GemmUniversalMode::kGemm" in source
    assert "Operation::get_workspace_size(args)" in source
    assert "split_k=4" in instance_key(op)


@pytest.mark.parametrize(
    ("a", "b", "out", "layout_a", "mode", "fragments"),
    [
        ((3, 64, 64), (3, 64, 128), (3, 64, 128), "row", "a+b",
         ["GemmUniversalMode::kBatched", "batch_stride_a = int64_t(m) * k", "batch_stride_b = int64_t(k) * n"]),
        ((64, 32), (2, 3, 32, 128), (2, 3, 64, 128), "row", "b",
         ["GemmUniversalMode::kBatched", "batch_stride_a = 0;", "batch_stride_b = int64_t(k) * n"]),
        ((4, 32, 64), (64, 128), (4, 32, 128), "row", "a",
         ["int const rows = m * batch;", "GemmUniversalMode::kGemm"]),
        ((4, 64, 32), (64, 128), (4, 32, 128), "col", "a",
         ["GemmUniversalMode::kBatched", "batch_stride_a = int64_t(m) * k", "batch_stride_b = 0;"]),
        ((1, 32, 64), (64, 128), (1, 32, 128), "row", "none", ["return batch == 1 &&"]),
    ],
)
def test_gemm_batches(a, b, out, layout_a, mode, fragments):
    op = one_op(gemm_ir(a=a, b=b, out=out, layout_a=layout_a, tile=TILE_SMALL, residual=True, epilogue="residual = add"))
    assert unsupported_reason(op) is None
    assert f"batch={mode}" in instance_key(op)
    source = emit_translation_unit([op])
    for fragment in fragments:
        assert fragment in source
    if mode != "none":
        assert "batch > 0 && m > 0" in source
    # the residual, with no bias and no first activation, is C itself
    assert "void const *c = residual;" in source


def test_conv_fprop_instances():
    ops = ops_of(
        conv_ir("opt", bias=True, epilogue="bias, relu"),
        conv_ir("fixed", x=(2, 32, 32, 4), w=(64, 7, 7, 4), out=(2, 16, 16, 64), bias=True, iterator="fixed_channels",
                alignment=(4, 4, 8), strides=(2, 2), pads=(3, 3, 3, 3), tile=TILE_SMALL, epilogue="bias, relu"),
        conv_ir("few", x=(2, 16, 16, 2), w=(32, 3, 3, 2), out=(2, 16, 16, 32), bias=True, iterator="few_channels",
                alignment=(2, 2, 8), tile=TILE_SMALL, epilogue="bias, hardswish"),
        conv_ir("res", x=(2, 8, 8, 64), out=(2, 8, 8, 64), element="bf16", bias=True, residual=True, iterator="analytic",
                tile=TILE_SMALL, epilogue="bias, relu, residual = add, then relu"),
    )
    assert [unsupported_reason(op) for op in ops] == [None] * 4
    source = emit_translation_unit(ops)
    names = launchers(source)
    assert names == [kernel_name(op) for op in ops]
    assert all(name.startswith("boltir_conv2d_fprop_") for name in names)
    for iterator in ("kOptimized", "kFixedChannels", "kFewChannels", "kAnalytic"):
        assert f"cutlass::conv::IteratorAlgorithm::{iterator}," in source
    assert source.count("cutlass::conv::kernel::DefaultConv2dFprop<") == 3
    assert source.count("cutlass::conv::kernel::DefaultConv2dFpropWithBroadcast<") == 1
    assert "    {{ align_a }}" not in source
    assert "    4, 4>::Kernel;" in source and "    2, 2>::Kernel;" in source
    assert "Layout(Layout::Stride(0))" in source  # the bias through zero strides
    assert (
        f'extern "C" int {names[0]}(\n'
        "    const void *input, const void *filter, const void *bias, const void *residual, void *output,\n"
        "    int n, int h, int w, int c, int k, int r, int s, int p, int q,\n"
        "    int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w,\n"
        "    void *workspace, size_t workspace_bytes, cudaStream_t stream)"
    ) in source


def test_depthwise_instance():
    op = one_op(depthwise_ir())
    assert unsupported_reason(op) is None
    source = emit_translation_unit([op])
    assert "cutlass::conv::kernel::DefaultDepthwiseDirect2dConvFprop<" in source
    assert "cutlass::arch::OpClassSimt" in source
    assert "using ThreadBlockOutputShape = cutlass::conv::TensorNHWCShape<1, 8, 8, 64>;" in source
    assert "using FilterShape = cutlass::MatrixShape<3, 3>;" in source
    assert "boltir::epilogue::clip(x, 0.0f, 6.0f)" in source
    assert "c /* groups: one per channel */" in source
    assert "workspace_bytes_for(size)" in source  # the reordered filter
    assert "filter=3x3" in instance_key(op)


def test_b2b_instances():
    ops = ops_of(
        b2b_gemm_ir("rf"),
        b2b_gemm_ir("smem", n1=256, residency="shared", tile0=TILE_B2B0_SMEM, tile1=TILE_B2B1_SMEM,
                    epilogue0="gelu", epilogue1="", bias0=False, bias1=False, accumulator="f32"),
        b2b_conv_ir("conv"),
        b2b_gemm_ir("rf_f32", n1=64, tile1=TILE_B2B1_RF64, accumulator="f32"),
    )
    assert [unsupported_reason(op) for op in ops] == [None] * 4
    source = emit_translation_unit(ops)
    names = launchers(source)
    assert [n.rsplit("_", 1)[0] for n in names] == ["boltir_b2b_gemm", "boltir_b2b_gemm", "boltir_b2b_conv2d", "boltir_b2b_gemm"]
    assert source.count("using ElementAccumulator = cutlass::half_t;") == 2
    assert '#include "device/b2b_gemm.h"' in source
    assert '#include "device/b2b_implicit_gemm_convolution.h"' in source
    assert source.count("cutlass::gemm::device::B2bGemm<") == 3
    assert "false /* SmemAccumulator */" in source and "true /* SmemAccumulator */" in source
    assert "cutlass::conv::kernel::DefaultB2bConv2dFprop<" in source
    assert "boltir::epilogue::B2bFirstEpilogue<\n    ElementC, 4, ElementAccumulator, ElementC, Act0Fn, true>;" in source
    assert "boltir::epilogue::B2bFirstEpilogue<\n    ElementC, 4, ElementAccumulator, ElementC, Act0Fn, false>;" in source
    assert "return boltir::epilogue::gelu(x);" in source
    assert "using Act0Fn = boltir::epilogue::IdentityFn;" not in source
    assert (
        f'extern "C" int {names[0]}(\n'
        "    const void *a, const void *b0, const void *b1, const void *bias0, const void *bias1, void *d,\n"
        "    int m0, int n0, int k0, int m1, int n1, int k1,\n"
        "    void *workspace, size_t workspace_bytes, cudaStream_t stream)"
    ) in source
    assert "int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w, int k1,\n" in source


# ---------------------------------------------------------------------- epilogues

ACTIVATION_ARGS = {"clip": (-1.0, 2.5), "leaky_relu": (0.125,), "hardsigmoid": (0.2, 0.5)}


def activation_text(kind: str) -> str:
    args = ACTIVATION_ARGS.get(kind, ())
    return kind if not args else f"{kind}({', '.join(repr(a) for a in args)})"


EXPECTED_EXPRESSIONS = {
    "none": None,
    "relu": "boltir::epilogue::relu(x)",
    "clip": "boltir::epilogue::clip(x, (-1.0f), 2.5f)",
    "gelu": "boltir::epilogue::gelu(x)",
    "gelu_tanh": "boltir::epilogue::gelu_tanh(x)",
    "sigmoid": "boltir::epilogue::sigmoid(x)",
    "silu": "boltir::epilogue::silu(x)",
    "hardswish": "boltir::epilogue::hardswish(x)",
    "tanh": "boltir::epilogue::tanh_(x)",
    "leaky_relu": "boltir::epilogue::leaky_relu(x, 0.125f)",
    "hardsigmoid": "boltir::epilogue::hardsigmoid(x, 0.2f, 0.5f)",
}


def test_every_activation_has_an_expression():
    assert set(EXPECTED_EXPRESSIONS) == set(ACTIVATION_ARITY)


@pytest.mark.parametrize("kind", sorted(ACTIVATION_ARITY))
@pytest.mark.parametrize("residual", ["none", "add", "mul"])
def test_every_activation_and_residual_kind(kind, residual):
    epilogue = f"bias, {activation_text(kind)}" if kind != "none" else "bias"
    if residual != "none":
        epilogue += f", residual = {residual}, then {activation_text(kind)}" if kind != "none" else f", residual = {residual}"
    op = one_op(gemm_ir(bias=True, residual=residual != "none", epilogue=epilogue))
    assert unsupported_reason(op) is None
    source = emit_translation_unit([op])
    expected = EXPECTED_EXPRESSIONS[kind]
    if expected is None:
        assert "using Act = cutlass::epilogue::thread::Identity<T>;" in source
    else:
        assert f"return {expected};" in source
    if residual == "none":
        assert "GemmUniversal<" in source and "GemmUniversalWithBroadcast" not in source.split("boltir_instances")[1]
    else:
        assert f"Act, cutlass::{'plus' if residual == 'add' else 'multiplies'}, Act2>;" in source


def test_clip_bounds_that_f32_cannot_hold_bound_nothing():
    op = one_op(gemm_ir(bias=True, epilogue=f"bias, clip(0.0, {UNBOUNDED!r})"))
    assert "return boltir::epilogue::clip_min(x, 0.0f);" in emit_translation_unit([op])
    op = one_op(gemm_ir(bias=True, epilogue=f"bias, clip({-UNBOUNDED!r}, 6.0)"))
    assert "return boltir::epilogue::clip_max(x, 6.0f);" in emit_translation_unit([op])
    op = one_op(gemm_ir(bias=True, epilogue=f"bias, clip({-UNBOUNDED!r}, {UNBOUNDED!r})"))
    assert "using Act = cutlass::epilogue::thread::Identity<T>;" in emit_translation_unit([op])


def test_f32_literals():
    assert f32_literal(6.0) == "6.0f"
    assert f32_literal(0.1) == "0.1f"
    assert f32_literal(-0.5) == "(-0.5f)"
    assert f32_literal(1e-8) == "1e-08f"
    assert f32_literal(1e300) == "INFINITY"
    assert float(np.float32(f32_literal(1 / 3).strip("()f"))) == float(np.float32(1 / 3))


def make_epilogue(alpha=1.0, beta=1.0, bias=False, act="none", residual="none", act2="none") -> EpilogueAttr:
    def activation(kind):
        return Activation(kind, ACTIVATION_ARGS.get(kind, ()))

    return EpilogueAttr.make(alpha=alpha, beta=beta, bias=bias, activation=activation(act), residual=residual,
                             activation2=activation(act2))


def cutlass_semantics(plan, acc, bias, residual):
    """What CUTLASS computes with the plan, in f32 (LinearCombinationGeneric or the residual block)."""
    f32 = np.float32

    def functor(f, x):
        if f.prescale is not None:
            x = x * f32(f.prescale)
        return apply_activation(f.activation.kind, f.activation.args, x)

    if plan.kind == "linear":
        if plan.source == "bias":
            c = np.broadcast_to(bias, acc.shape)
        elif plan.source == "residual":
            c = residual
        else:
            c = np.zeros_like(acc)
        return functor(plan.act, f32(plan.alpha) * acc + f32(plan.beta) * c)
    vector = bias if plan.bias_vector else np.zeros(acc.shape[-1], np.float32)
    x = functor(plan.act, f32(plan.alpha) * acc + vector)
    x = x + f32(plan.beta) * residual if plan.binary == "plus" else x * (f32(plan.beta) * residual)
    return functor(plan.act2, x)


EPILOGUE_CASES = [
    {},
    {"alpha": 0.5},
    {"bias": True},
    {"bias": True, "beta": 0.25, "act": "gelu"},
    {"bias": True, "beta": 0.0, "act": "relu"},
    {"bias": True, "act": "clip"},
    {"residual": "add"},
    {"residual": "add", "act2": "relu", "alpha": 2.0},
    {"residual": "mul"},
    {"residual": "add", "act": "silu"},
    {"bias": True, "act": "relu", "residual": "add", "act2": "relu"},
    {"bias": True, "beta": 0.5, "act": "hardsigmoid", "residual": "mul", "act2": "tanh"},
    {"bias": True, "beta": -2.0, "alpha": 3.0, "act": "leaky_relu", "residual": "add", "act2": "hardswish"},
    {"bias": True, "act": "gelu_tanh", "residual": "mul", "act2": "sigmoid"},
]


@pytest.mark.parametrize("case", EPILOGUE_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "identity")
def test_epilogue_plans_compute_the_interpreters_epilogue(case, rng):
    epilogue = make_epilogue(**case)
    plan = plan_epilogue(epilogue)
    acc = rng.normal(size=(16, 24)).astype(np.float32) * 3
    bias = rng.normal(size=24).astype(np.float32)
    residual = rng.normal(size=(16, 24)).astype(np.float32)
    expected = apply_epilogue(
        acc, epilogue, bias if epilogue.has_bias else None, residual if epilogue.residual_kind != "none" else None, -1
    )
    got = cutlass_semantics(plan, acc, bias, residual)
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-6)


def test_epilogue_plan_choices():
    assert plan_epilogue(make_epilogue(bias=True, act="relu")).source == "bias"
    assert plan_epilogue(make_epilogue(act="relu")).source == "none"
    plan = plan_epilogue(make_epilogue(bias=True, beta=0.0))
    assert (plan.kind, plan.source, plan.beta) == ("linear", "none", 0.0)
    plan = plan_epilogue(make_epilogue(residual="add", act2="relu"))
    assert (plan.kind, plan.source, plan.act.activation.kind) == ("linear", "residual", "relu")
    plan = plan_epilogue(make_epilogue(bias=True, residual="add"))
    assert (plan.kind, plan.bias_vector, plan.binary) == ("residual_block", True, "plus")
    plan = plan_epilogue(make_epilogue(bias=True, beta=0.5, alpha=2.0, residual="mul"))
    assert (plan.alpha, plan.act.prescale, plan.binary) == (4.0, 0.5, "multiplies")


# ------------------------------------------------------------------------- dedupe


def test_instances_are_deduplicated_by_template_parameters():
    same_a = gemm_ir("s1", a=(128, 64), b=(64, 256), out=(128, 256), bias=True, epilogue="bias, relu")
    same_b = gemm_ir("s2", a=(512, 32), b=(32, 64), out=(512, 64), bias=True, epilogue="bias, relu")
    other_epilogue = gemm_ir("s3", bias=True, epilogue="bias, gelu")
    other_tile = gemm_ir("s4", bias=True, epilogue="bias, relu", tile=TILE_SMALL)
    other_clip = gemm_ir("s5", bias=True, epilogue="bias, clip(0.0, 6.0)")
    other_clip2 = gemm_ir("s6", bias=True, epilogue="bias, clip(0.0, 4.0)")
    ops = ops_of(same_a, same_b, other_epilogue, other_tile, other_clip, other_clip2)
    keys = [instance_key(op) for op in ops]
    assert keys[0] == keys[1]
    assert len(set(keys)) == 5
    assert "128x256" not in keys[0] and "512" not in keys[1]  # no problem sizes
    source = emit_translation_unit(ops)
    names = launchers(source)
    assert len(names) == 5
    assert names == list(dict.fromkeys(kernel_name(op) for op in ops))
    assert source.count(f'extern "C" int {kernel_name(ops[0])}(') == 1


def test_kernel_names_are_stable():
    text = gemm_ir(bias=True, epilogue="bias, relu")
    assert kernel_name(one_op(text)) == kernel_name(one_op(text))
    op = one_op(text)
    expected = "boltir_gemm_" + __import__("hashlib").sha256(instance_key(op).encode()).hexdigest()[:12]
    assert kernel_name(op) == expected


def test_emit_from_a_module_walks_nested_functions():
    module = module_of(gemm_ir("f1", bias=True, epilogue="bias, relu"), conv_ir("f2", bias=True, epilogue="bias"))
    source = emit_translation_unit(module)
    assert len(launchers(source)) == 2
    assert source.startswith("// Generated by boltir (2 CUTLASS kernel instances, CUTLASS 2.x).")


def test_empty_module():
    source = emit_translation_unit(boltir.parse_module("builtin.module {}"))
    assert launchers(source) == []
    assert "boltir_error_string" in source


# -------------------------------------------------------------------- unsupported


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (gemm_ir(arch="sm90"), "a 3.x gemm takes kernel_schedule 'cooperative' or 'pingpong' or 'warpspecialized' or 'streamk', got 'auto'"),
        (gemm_ir(op_class="simt", tile=TILE_F16), "tensor-op kernels"),
        (gemm_ir(accumulator="f16"), "the accumulator must be f32"),
        (gemm_ir(tile=TILE_TF32), "instruction shape is [16, 8, 16]"),
        (gemm_ir(bias=True, residual=True, epilogue="bias, relu, residual = add", split_k=2),
         "cannot run a residual epilogue"),
        (gemm_ir(a=(3, 64, 64), b=(3, 64, 128), out=(3, 64, 128), split_k=2, tile=TILE_SMALL),
         "do not combine in GemmUniversal"),
        (gemm_ir(a=(2, 1, 64, 64), b=(1, 3, 64, 128), out=(2, 3, 64, 128), tile=TILE_SMALL),
         "do not reduce to one strided batch"),
        (gemm_ir(bias=True, epilogue="bias", bias_element="f32"), "the bias element type (f32)"),
        (conv_ir(x=(2, 16, 16, 2), w=(32, 3, 3, 2), out=(2, 16, 16, 32), iterator="analytic", alignment=(1, 1, 8),
                 tile=TILE_SMALL), "Sm80's cp.async copies 4, 8 or 16 bytes"),
        (conv_ir(bias=True, residual=True, split_k=2, epilogue="bias, residual = add"), "split-k (2 slices)"),
        (depthwise_ir(residual=True, epilogue="bias, relu, residual = add"), "reads one source tensor"),
        (depthwise_ir(tile="#cutlass.tile<threadblock = [64, 64, 16], warp = [16, 64, 16], instruction = [1, 1, 1], stages = 3>"),
         "must be the filter's taps (3 x 3 = 9)"),
        (b2b_gemm_ir(tile1="#cutlass.tile<threadblock = [64, 128, 32], warp = [16, 128, 32], instruction = [16, 8, 16], stages = 4>"),
         "one stage count for both GEMMs"),
        (b2b_gemm_ir(m=100), "M (100) must be a multiple of the alignments"),
        # CUTLASS's f32 -> f16 epilogue stores warp tiles of N = 32 or 64 only (measured)
        (gemm_ir(tile="#cutlass.tile<threadblock = [64, 128, 32], warp = [32, 128, 32], instruction = [16, 8, 16], stages = 3>"),
         "stores warp tiles of N = 32 or 64 only; this one's N is 128"),
        (b2b_gemm_ir(accumulator="f32"), "this one's N is 128 (use a narrower warp tile, or f16 accumulation)"),
        # the direct conv stages f32 accumulators in one activation tile's shared memory
        (depthwise_ir(accumulator="f32"), "(8 x 8 x 64, 16384 bytes) in the shared memory of one activation tile (12800 bytes)"),
    ],
)
def test_unsupported_ops_say_why(text, reason):
    op = one_op(text)
    message = unsupported_reason(op)
    assert message is not None and reason in message
    with pytest.raises(BoltError, match=re.escape(reason)):
        emit_translation_unit([op])


def test_supported_depthwise_residual_alone():
    op = one_op(depthwise_ir(bias=False, residual=True, epilogue="residual = add, then relu"))
    assert unsupported_reason(op) is None
    assert "cutlass::TensorRef<ElementC, Layout> ref_c(\n      const_cast<ElementC *>(static_cast<ElementC const *>(residual))" in (
        emit_translation_unit([op])
    )


def test_bolt_opt_cuda_target(tmp_path, capsys):
    from boltir.tools.bolt_opt import main

    path = tmp_path / "x.mlir"
    path.write_text(gemm_ir(bias=True, epilogue="bias, relu"))
    assert main([str(path), "-t", "cuda"]) == 0
    out = capsys.readouterr().out
    assert len(launchers(out)) == 1
    path.write_text(gemm_ir(arch="sm90"))
    assert main([str(path), "-t", "cuda"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{path}:") and "error: 'cutlass.gemm' has no CUTLASS instance: a 3.x gemm takes kernel_schedule" in err
    assert "\n" not in err


# ------------------------------------------------------------------- compile checks

NVCC_FLAGS = ["-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", "-gencode=arch=compute_80,code=sm_80"]


def _toolchain() -> tuple[str | None, list[Path] | str]:
    nvcc = os.environ.get("BOLTIR_NVCC") or shutil.which("nvcc")
    if nvcc is None:
        return None, "nvcc is not on PATH (set BOLTIR_NVCC)"
    try:
        dirs = find_cutlass_include_dirs()
    except BoltError as error:
        return None, str(error)
    if not (dirs[0] / "cutlass/cutlass.h").exists():
        return None, f"the CUTLASS headers are missing under {dirs[0]}"
    return nvcc, dirs


COMPILE_UNITS = {
    "gemm": lambda: [
        gemm_ir("f16_bias_relu", b=(256, 64), layout_b="col", bias=True, epilogue="bias, relu"),
        gemm_ir("bf16_residual", element="bf16", bias=True, residual=True,
                epilogue="beta = 0.5, bias, gelu, residual = add, then clip(0.0, 6.0)"),
        gemm_ir("tf32", element="f32", tile=TILE_TF32, alignment=(4, 4, 4), bias=True, epilogue="bias, leaky_relu(0.1)"),
        gemm_ir("split_k", a=(1024, 64), b=(1024, 128), out=(64, 128), layout_a="col", bias=True, split_k=4,
                tile=TILE_SMALL, epilogue="bias, sigmoid"),
        gemm_ir("batched", a=(3, 64, 64), b=(3, 128, 64), out=(3, 64, 128), layout_b="col", residual=True,
                tile=TILE_SMALL, epilogue="residual = add, then tanh"),
    ],
    "conv": lambda: [
        conv_ir("optimized", bias=True, epilogue="bias, relu"),
        conv_ir("fixed_channels", x=(2, 32, 32, 4), w=(64, 7, 7, 4), out=(2, 16, 16, 64), bias=True,
                iterator="fixed_channels", alignment=(4, 4, 8), strides=(2, 2), pads=(3, 3, 3, 3), tile=TILE_SMALL,
                epilogue="bias, relu"),
        conv_ir("few_channels", x=(2, 16, 16, 2), w=(32, 3, 3, 2), out=(2, 16, 16, 32), bias=True,
                iterator="few_channels", alignment=(2, 2, 8), tile=TILE_SMALL, epilogue="bias, hardswish"),
        depthwise_ir("depthwise"),
    ],
    "b2b": lambda: [
        b2b_gemm_ir("rf"),
        b2b_gemm_ir("smem", n1=256, residency="shared", tile0=TILE_B2B0_SMEM, tile1=TILE_B2B1_SMEM,
                    epilogue0="gelu", epilogue1="", bias0=False, bias1=False, accumulator="f32"),
        b2b_conv_ir("conv"),
    ],
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The three units, compiled two at a time: {unit: (ok, log, seconds, object, names)}."""
    nvcc, dirs = _toolchain()
    if nvcc is None:
        pytest.skip(f"no CUDA toolchain here: {dirs}")
    out = tmp_path_factory.mktemp("emitter_nvcc")

    def build(unit: str):
        ops = ops_of(*COMPILE_UNITS[unit]())
        source = emit_translation_unit(ops)
        path = out / f"{unit}.cu"
        path.write_text(source)
        obj = out / f"{unit}.o"
        command = [nvcc, *NVCC_FLAGS, *(f"-I{d}" for d in dirs), "-c", str(path), "-o", str(obj)]
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True)
        seconds = time.monotonic() - start
        return unit, (result.returncode == 0, " ".join(command) + "\n" + result.stdout + result.stderr, seconds, obj,
                      [kernel_name(op) for op in ops])

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, COMPILE_UNITS))


def _check_compiled(compiled, unit: str):
    ok, log, seconds, obj, names = compiled[unit]
    assert ok, f"nvcc failed on the {unit} unit after {seconds:.0f} s:\n{log[-6000:]}"
    if shutil.which("nm"):
        symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout
        for name in names + [f"{n}_workspace_size" for n in names] + ["boltir_error_string"]:
            assert re.search(rf"\b[TW] {name}$", symbols, re.MULTILINE), f"{name} is not defined in {obj}"


@pytest.mark.slow
def test_compile_gemm_unit(compiled):
    """f16 bias+relu, bf16 residual block (broadcast epilogue), tf32, split-k, batched."""
    _check_compiled(compiled, "gemm")


@pytest.mark.slow
def test_compile_conv_unit(compiled):
    """conv fprop optimized, fixed_channels (C = 4), few_channels (C = 2), depthwise."""
    _check_compiled(compiled, "conv")


@pytest.mark.slow
def test_compile_b2b_unit(compiled):
    """b2b_gemm register-file and shared-memory residency, b2b_conv2d."""
    _check_compiled(compiled, "b2b")
