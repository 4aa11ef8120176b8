"""Builds every compute-kernel family (boltir/backends/cuda/codegen/compute_kernels.py: pooling,
softmax, layer norm, reductions, running sums, and the fallback GEMMs/convs) into one shared
library, runs each case on the GPU with torch tensors through ctypes, and compares the result
with the op-level interpreter on fresh random inputs. The bar: ‖Δ‖/‖ref‖ < 1e-2 for f16/bf16,
1e-4 for f32; integer results (cumsum's i32/i64, drawn large enough to wrap) must be equal.
Prints a pass/fail table last; exits 1 if any case fails.

    source bench/setup_gpu.sh && python3 -m bench.check_compute_kernels [--only TEXT]
    python3 -m bench.check_compute_kernels --list          # emit every case; no GPU, no nvcc
    python3 -m bench.check_compute_kernels --build-only    # compile and link; no GPU

The cases marked "timed" (LayerNorm at BERT-base's and ViT-B/16's batch 32) are then
graph-timed against F.layer_norm and a plain copy of the same tensors, with their effective
TB/s (issue 16's 2.5 TB/s).

Each case is one op in `func.func @main` whose operands are the function's arguments,
built with the op dialect's constructors.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Block, Region
from xdsl.parser import Parser

from bench.tables import print_table
from boltir.backends.cuda.codegen import compute_kernels as ck
from boltir.backends.cuda.codegen.generator import CompileJob
from boltir.backends.cuda.toolchain.nvcc import build_shared_library
from boltir.dialects import op as ops
from boltir.dialects.graph import tensor_shape
from boltir.dialects.op import EpilogueAttr
from boltir.dtypes import numpy_dtype
from boltir.interp import run
from boltir.ir import make_context, verify_module
from boltir.target import get_target
from tests.support.torch_arrays import to_numpy_f32, to_torch

ELEMENTS = {"f16": Float16Type, "bf16": BFloat16Type, "f32": Float32Type,
            "i32": lambda: IntegerType(32), "i64": lambda: IntegerType(64)}
BANDWIDTH = get_target("sm90").dram_bytes_per_second
"""The H200's DRAM bandwidth in the target record, for the timed cases' bound."""
WEIGHTS = ("b", "b0", "b1", "filter", "filter0", "filter1")
"""Operands drawn with a 1/sqrt(fan-in) scale, so that outputs stay near 1."""


def t(shape, element: str) -> TensorType:
    return TensorType(ELEMENTS[element](), tuple(shape))


@dataclass
class Case:
    label: str
    args: list[TensorType]
    build: Callable  # (block arguments) -> op
    element: str
    module: ModuleOp | None = None
    op: object = None
    arguments: tuple = ()

    @property
    def tolerance(self) -> float:
        if self.element.startswith("i"):
            return 0.0  # integers: equal
        return 1e-4 if self.element == "f32" else 1e-2

    def make(self) -> Case:
        block = Block(arg_types=self.args)
        self.arguments = tuple(block.args)
        self.op = self.build(*block.args)
        block.add_ops([self.op, func.ReturnOp(self.op.results[0])])
        entry = func.FuncOp("main", (self.args, [self.op.results[0].type]), Region(block))
        self.module = ModuleOp([entry])
        verify_module(self.module)
        return self


def epilogue(text: str) -> EpilogueAttr:
    """`#op.epilogue<text>`, parsed: e.g. "alpha = 0.5, bias, gelu, residual = add, then relu"."""
    return Parser(make_context(), f"#op.epilogue<{text}>").parse_attribute()


# --------------------------------------------------------------------------- cases


def pool_cases() -> list[Case]:
    out = []

    def pool(label, shape, element, kind, **kw):
        out.append(Case(f"pool2d {kind} {element} {label}", [t(shape, element)], lambda x: ops.Pool2dOp(x, kind, **kw), element))

    pool("3x3/2 pad1 NHWC 2x15x15x64", (2, 15, 15, 64), "f16", "max", kernel_shape=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    pool("3x3/2 dil2 ceil NHWC C=3 1x17x17x3", (1, 17, 17, 3), "bf16", "max", kernel_shape=(3, 3), strides=(2, 2), dilations=(2, 2), ceil_mode=True)
    pool("3x3/2 dil2 ceil NCHW 2x3x9x9", (2, 3, 9, 9), "f32", "max", layout="NCHW", kernel_shape=(3, 3), strides=(2, 2), dilations=(2, 2), ceil_mode=True)
    pool("3x3/2 pad1 count_include_pad NHWC 1x7x7x12", (1, 7, 7, 12), "f32", "avg", kernel_shape=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1), count_include_pad=True)
    pool("3x3/2 pad1 NHWC C=20 2x9x9x20", (2, 9, 9, 20), "f16", "avg", kernel_shape=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1))
    pool("3x3/2 pad1 ceil count_include_pad NCHW 2x6x11x11", (2, 6, 11, 11), "f16", "avg", layout="NCHW", kernel_shape=(3, 3), strides=(2, 2),
         pads=(1, 1, 1, 1), ceil_mode=True, count_include_pad=True)
    pool("2x3/1x2 pads 0,1,1,0 NHWC bf16 2x8x10x16", (2, 8, 10, 16), "bf16", "avg", kernel_shape=(2, 3), strides=(1, 2), pads=(0, 1, 1, 0))
    pool("7x7 NCHW (ResNet's head) 4x64x7x7", (4, 64, 7, 7), "f16", "avg", layout="NCHW", kernel_shape=(7, 7))
    pool("NHWC 8x7x7x2048", (8, 7, 7, 2048), "f16", "global_avg")
    pool("NHWC 2x56x56x64", (2, 56, 56, 64), "f32", "global_avg")
    pool("NCHW 2x64x56x56", (2, 64, 56, 56), "f32", "global_avg", layout="NCHW")
    pool("NHWC C=13 3x5x5x13", (3, 5, 5, 13), "bf16", "global_max")
    pool("NCHW 2x10x9x9", (2, 10, 9, 9), "f16", "global_max", layout="NCHW")
    return out


def softmax_cases() -> list[Case]:
    out = []

    def softmax(shape, element, axis=-1, note=""):
        label = f"softmax {element} {'x'.join(map(str, shape))} axis {axis}{note}"
        out.append(Case(label, [t(shape, element)], lambda x: ops.SoftmaxOp(x, axis), element))

    softmax((64, 1000), "f16", note=" (lanes per row)")
    softmax((3, 5), "f32", note=" (odd, one lane per row)")
    softmax((257, 24), "bf16", note=" (3 lanes' worth: groups of 4)")
    softmax((12, 128, 128), "bf16", note=" (attention)")
    softmax((8, 4096), "f16", note=" (a block per row)")
    softmax((2, 3001), "f32", note=" (odd, a block per row)")
    softmax((2, 40000), "f16", note=" (streamed)")
    softmax((3, 70001), "f32", note=" (odd, streamed)")
    softmax((4, 17, 33), "f32", axis=1, note=" (strided, in registers)")
    softmax((2, 100, 64), "f16", axis=1, note=" (strided, read twice)")
    softmax((2, 21, 16, 16), "f32", axis=1, note=" (NCHW channels)")
    return out


def layer_norm_cases() -> list[Case]:
    out = []

    def layer_norm(shape, element, axis=-1, scale=None, bias=None, scale_element=None, note="", epsilon=1e-5):
        normalized = tuple(shape[axis % len(shape):])
        scale = normalized if scale is None else scale
        args = [t(shape, element), t(scale, scale_element or element)]
        if bias is not None:
            args.append(t(bias, scale_element or element))
        label = f"layer_norm {element} {'x'.join(map(str, shape))} axis {axis} scale {'x'.join(map(str, scale))}"
        label += f"{' bias ' + 'x'.join(map(str, bias)) if bias is not None else ''}{note}"
        out.append(Case(label, args, lambda x, g, *b: ops.LayerNormOp(x, g, b[0] if b else None, axis=axis, epsilon=epsilon), element))

    layer_norm((256, 768), "f16", bias=(768,), note=" (BERT)")
    layer_norm((4096, 768), "f16", bias=(768,), epsilon=1e-12, note=" (BERT-base b32, timed)")
    layer_norm((6304, 768), "f16", bias=(768,), epsilon=1e-6, note=" (ViT-B/16 b32, timed)")
    layer_norm((4, 8, 32), "bf16", axis=1, note=" (two axes, no bias)")
    layer_norm((3, 1000), "f32", bias=(1000,))
    layer_norm((6, 5, 7), "f16", axis=1, scale=(7,), bias=(5, 1), note=" (broadcast scale and bias)")
    layer_norm((64, 96), "f16", bias=(96,), scale_element="f32", note=" (f32 scale and bias)")
    layer_norm((2, 8192), "bf16", bias=(8192,), note=" (a block per row)")
    layer_norm((5, 333), "f32", bias=(333,), epsilon=1e-12, note=" (odd)")
    layer_norm((4, 20000), "f32", bias=(20000,), note=" (streamed, Welford)")
    layer_norm((3, 33333), "f16", note=" (odd, streamed)")
    return out


def reduce_cases() -> list[Case]:
    out = []

    def reduce(shape, element, kind, axes, keepdims=False, note=""):
        label = f"reduce {kind} {element} {'x'.join(map(str, shape))} axes {list(axes)}{' keepdims' if keepdims else ''}{note}"
        out.append(Case(label, [t(shape, element)], lambda x: ops.ReduceOp(x, kind, axes, keepdims), element))

    for kind in ("sum", "mean", "max"):
        reduce((2, 3, 4, 5), "f32", kind, (0, 2), note=" (outer)")
        reduce((2, 3, 4, 5), "f16", kind, (2, 3), keepdims=True, note=" (inner)")
        reduce((16, 128, 64), "bf16", kind, (0, 2), note=" (inner, two runs)")
    reduce((6, 7, 8), "bf16", "max", (1,), note=" (outer, vectors)")
    reduce((32, 4096), "f32", "mean", (-1,), note=" (a block per row)")
    reduce((2, 3, 100000), "f16", "sum", (0, 2), note=" (long)")
    reduce((3, 1, 5), "f16", "sum", (1,), note=" (an axis of 1)")
    reduce((5, 7), "f32", "max", (0, 1), note=" (everything)")
    reduce((4, 6), "f32", "mean", (), note=" (no axes: a copy)")
    reduce((4096, 64), "f16", "mean", (0,), note=" (tall)")
    return out


def _gemm(shape_a, shape_b, element, text="", layout_a="row", layout_b="row", label=""):
    attr = epilogue(text)
    args = [t(shape_a, element), t(shape_b, element)]
    _, m, n, _ = ops.gemm_shape(shape_a, shape_b, layout_a, layout_b)
    out_shape, *_ = ops.gemm_shape(shape_a, shape_b, layout_a, layout_b)
    if attr.has_bias:
        args.append(t((n,), element))
    if attr.residual_kind != "none":
        args.append(t(out_shape, element))

    def build(a, b, *rest):
        rest = list(rest)
        bias = rest.pop(0) if attr.has_bias else None
        residual = rest.pop(0) if rest else None
        return ops.GemmOp(a, b, bias=bias, residual=residual, layout_a=layout_a, layout_b=layout_b, epilogue=attr)

    name = f"gemm {element} {'x'.join(map(str, shape_a))}{'ᵀ' if layout_a == 'col' else ''} @ {'x'.join(map(str, shape_b))}{'ᵀ' if layout_b == 'col' else ''}"
    return Case(f"{name} {label}<{text}>", args, build, element)


def _conv(kind, x_shape, w_shape, element, text="", **kw):
    attr = epilogue(text)
    cls = ops.Conv2dOp if kind == "conv2d" else ops.ConvTranspose2dOp
    probe_block = Block(arg_types=[t(x_shape, element), t(w_shape, element)])
    probe = cls(*probe_block.args, epilogue=ops.IDENTITY_EPILOGUE, **kw)
    out_shape = tensor_shape(probe.output.type)
    args = [t(x_shape, element), t(w_shape, element)]
    if attr.has_bias:
        args.append(t((probe.output_channels,), element))
    if attr.residual_kind != "none":
        args.append(t(out_shape, element))

    def build(x, w, *rest):
        rest = list(rest)
        bias = rest.pop(0) if attr.has_bias else None
        residual = rest.pop(0) if rest else None
        return cls(x, w, bias=bias, residual=residual, epilogue=attr, **kw)

    window = " ".join(f"{k}={v}" for k, v in kw.items())
    return Case(f"{kind} {element} {'x'.join(map(str, x_shape))} * {'x'.join(map(str, w_shape))} {window} <{text}>", args, build, element)


def fallback_cases() -> list[Case]:
    out = [
        _gemm((333, 520), (264, 520), "f16", "bias, relu", layout_b="col"),
        _gemm((4, 33, 40), (4, 40, 24), "bf16", "residual = add", label="batched "),
        _gemm((40, 33), (40, 24), "f32", "alpha = 0.5, beta = 2.0, bias, gelu, residual = mul, then tanh", layout_a="col"),
        _gemm((2, 1, 17, 9), (3, 9, 5), "f16", "bias, leaky_relu(0.1)", label="broadcast batch "),
        _gemm((7, 3), (5, 7), "f32", "bias, hardsigmoid(0.2, 0.5)", layout_a="col", layout_b="col"),
        _gemm((1, 1), (1, 1), "f32", ""),
        _conv("conv2d", (2, 14, 14, 32), (48, 3, 3, 32), "f16", "bias, relu", pads=(1, 1, 1, 1)),
        _conv("conv2d", (1, 8, 17, 17), (12, 2, 5, 5), "f32", "bias, silu, residual = add, then relu", layout="NCHW",
              strides=(2, 2), dilations=(2, 2), pads=(2, 1, 3, 0), groups=4),
        _conv("conv2d", (2, 9, 9, 16), (16, 3, 3, 1), "bf16", "bias, clip(0.0, 6.0)", pads=(1, 1, 1, 1), groups=16),
        _conv("conv2d", (1, 6, 5, 3), (5, 3, 1, 1), "f16", "hardswish", filter_layout="OIHW"),
        _conv("conv_transpose2d", (1, 5, 6, 8), (8, 3, 3, 4), "f32", "bias, relu", strides=(2, 2), pads=(1, 1, 1, 1),
              output_padding=(1, 1), groups=2),
        _conv("conv_transpose2d", (2, 16, 4, 4), (16, 4, 4, 8), "f16", "bias, sigmoid, residual = add", layout="NCHW",
              strides=(2, 2), pads=(1, 1, 1, 1)),
        _conv("conv_transpose2d", (1, 7, 7, 24), (24, 3, 3, 16), "bf16", "bias, gelu_tanh", dilations=(2, 2)),
    ]

    def b2b_gemm(a_shape, b0_shape, b1_shape, element, text0, text1, layouts=("row", "row", "row")):
        e0, e1 = epilogue(text0), epilogue(text1)
        first, _, n0, _ = ops.gemm_shape(a_shape, b0_shape, layouts[0], layouts[1])
        second, _, n1, _ = ops.gemm_shape(first, b1_shape, "row", layouts[2])
        args = [t(a_shape, element), t(b0_shape, element), t(b1_shape, element)]
        args += [t((n0,), element)] * e0.has_bias + [t((n1,), element)] * e1.has_bias

        def build(a, b0, b1, *rest):
            rest = list(rest)
            bias0 = rest.pop(0) if e0.has_bias else None
            bias1 = rest.pop(0) if e1.has_bias else None
            return ops.B2bGemmOp(a, b0, b1, bias0=bias0, bias1=bias1, layout_a=layouts[0], layout_b0=layouts[1],
                                 layout_b1=layouts[2], epilogue0=e0, epilogue1=e1, result_type=t(second, element))

        shapes = " x ".join("x".join(map(str, s)) for s in (a_shape, b0_shape, b1_shape))
        out.append(Case(f"b2b_gemm {element} {shapes} {'/'.join(layouts)} <{text0} | {text1}>", args, build, element))

    b2b_gemm((1000, 64), (64, 64), (128, 64), "f16", "bias, relu", "bias, relu", ("row", "col", "col"))
    b2b_gemm((2, 50, 24), (24, 40), (40, 12), "f32", "gelu", "bias", ("row", "row", "row"))
    b2b_gemm((20, 33), (20, 17), (9, 17), "bf16", "bias, silu", "", ("col", "row", "col"))

    def b2b_conv(x_shape, w0_shape, w1_shape, element, text0, text1, layout="NHWC", **kw):
        e0, e1 = epilogue(text0), epilogue(text1)
        filter_layout = ops.FILTER_LAYOUTS[layout]
        strides, pads, dilations = kw.get("strides", (1, 1)), kw.get("pads", (0, 0, 0, 0)), kw.get("dilations", (1, 1))
        first, k0 = ops.conv_output_shape(x_shape, w0_shape, layout, filter_layout, strides, pads, dilations, 1)
        second, k1 = ops.conv_output_shape(first, w1_shape, layout, filter_layout, (1, 1), (0, 0, 0, 0), (1, 1), 1)
        args = [t(x_shape, element), t(w0_shape, element), t(w1_shape, element)]
        args += [t((k0,), element)] * e0.has_bias + [t((k1,), element)] * e1.has_bias

        def build(x, w0, w1, *rest):
            rest = list(rest)
            bias0 = rest.pop(0) if e0.has_bias else None
            bias1 = rest.pop(0) if e1.has_bias else None
            return ops.B2bConv2dOp(x, w0, w1, bias0=bias0, bias1=bias1, layout=layout, epilogue0=e0, epilogue1=e1,
                                   result_type=t(second, element), **kw)

        shapes = " * ".join("x".join(map(str, s)) for s in (x_shape, w0_shape, w1_shape))
        out.append(Case(f"b2b_conv2d {element} {layout} {shapes} {kw} <{text0} | {text1}>", args, build, element))

    b2b_conv((1, 14, 14, 32), (64, 3, 3, 32), (48, 1, 1, 64), "f16", "bias, relu", "bias, relu", pads=(1, 1, 1, 1))
    b2b_conv((2, 8, 9, 9), (16, 8, 3, 3), (12, 16, 1, 1), "f32", "bias, silu", "bias", layout="NCHW", strides=(2, 2))

    def depthwise_pointwise(x_shape, r, k, element, text0, text1, **kw):
        """op.depthwise_pointwise_conv2d on the b2b conv fallback (fuse-depthwise-pointwise's
        op where its kernel cannot run it)."""
        e0, e1 = epilogue(text0), epilogue(text1)
        c = x_shape[3]
        strides, pads, dilations = kw.get("strides", (1, 1)), kw.get("pads", (0, 0, 0, 0)), kw.get("dilations", (1, 1))
        first, _ = ops.conv_output_shape(x_shape, (c, r, r, 1), "NHWC", "OHWI", strides, pads, dilations, c)
        out_shape = first[:3] + (k,)
        args = [t(x_shape, element), t((c, r, r, 1), element), t((k, 1, 1, c), element)]
        args += [t((c,), element)] * e0.has_bias + [t((k,), element)] * e1.has_bias
        args += [t(out_shape, element)] * (e1.residual_kind != "none")

        def build(x, w0, w1, *rest):
            rest = list(rest)
            bias0 = rest.pop(0) if e0.has_bias else None
            bias1 = rest.pop(0) if e1.has_bias else None
            residual = rest.pop(0) if rest else None
            return ops.DepthwisePointwiseConv2dOp(x, w0, w1, bias0=bias0, bias1=bias1, residual=residual, epilogue0=e0,
                                                  epilogue1=e1, **kw)

        shapes = "x".join(map(str, x_shape))
        out.append(Case(f"depthwise_pointwise {element} {shapes} {r}x{r} -> {k} {kw} <{text0} | {text1}>", args, build,
                        element))

    depthwise_pointwise((2, 14, 14, 48), 3, 24, "f16", "bias, clip(0.0, 6.0)", "bias, residual = add", pads=(1, 1, 1, 1))
    depthwise_pointwise((1, 13, 11, 32), 5, 16, "bf16", "clip(0.0, 6.0)", "bias", strides=(2, 2), pads=(2, 1, 2, 1),
                        dilations=(1, 2))
    return out


def cumsum_cases() -> list[Case]:
    out = []

    def cumsum(shape, element, axis, exclusive=False, reverse=False, note=""):
        flags = "".join(f" {name}" for name, on in (("exclusive", exclusive), ("reverse", reverse)) if on)
        label = f"cumsum {element} {'x'.join(map(str, shape))} axis {axis}{flags}{note}"
        out.append(Case(label, [t(shape, element)], lambda x: ops.CumSumOp(x, axis, exclusive=exclusive, reverse=reverse), element))

    cumsum((2, 16), "i64", 1, note=" (RoBERTa small)")
    cumsum((8, 512), "i32", 1, note=" (RoBERTa's position ids, 4 tiles)")
    cumsum((64, 128), "i64", -1, exclusive=True)
    cumsum((3, 300), "i32", 1, reverse=True, note=" (part of a tile)")
    cumsum((5, 7), "f32", 1, exclusive=True, reverse=True, note=" (odd: V = 1)")
    cumsum((16, 1000), "f16", 1, note=" (V = 8, f32 sums)")
    cumsum((4, 4096), "bf16", 1, reverse=True)
    cumsum((2, 100003), "f32", 1, exclusive=True, note=" (a long row, odd)")
    cumsum((1, 1), "i32", 0)
    cumsum((4, 128, 6), "f16", 1, note=" (strided, V = 2)")
    cumsum((2, 512, 64), "f32", 1, exclusive=True, note=" (strided, V = 4)")
    cumsum((3, 5, 7), "i64", 0, reverse=True, note=" (strided, odd)")
    cumsum((8, 300, 2), "bf16", -2, exclusive=True, reverse=True, note=" (strided)")
    cumsum((2, 256, 1, 3), "i32", 1, note=" (strided over a size-1 axis)")
    return out


def cases() -> list[Case]:
    return pool_cases() + softmax_cases() + layer_norm_cases() + reduce_cases() + cumsum_cases() + fallback_cases()


# --------------------------------------------------------------------------- running


def fan_in(op, name: str, shape) -> int:
    """The contraction length a weight operand feeds."""
    if isinstance(op, ops.GemmOp | ops.B2bGemmOp):
        if name == "b1":
            return shape[-1] if op.prop_value("layout_b1") == "col" else shape[-2]
        layout = op.prop_value("layout_b" if name == "b" else "layout_b0")
        return shape[-1] if layout == "col" else shape[-2]
    if isinstance(op, ops.ConvTranspose2dOp):  # C x kH x kW x K/groups: each output sees C/groups x kH x kW
        return math.prod(shape) // op.output_channels
    return math.prod(shape[1:])  # K x kH x kW x C/groups, either order


def random_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Uniform in [-1, 1]; weights scaled by sqrt(3 / fan-in); integers over a quarter of
    their range (so that sums wrap)."""
    names = {id(value): name for name, value in ck._operands(case.op)}
    inputs = {}
    for index, arg in enumerate(case.arguments):
        shape = tuple(arg.type.get_shape())
        dtype = numpy_dtype(arg.type.element_type)
        if dtype.kind == "i":
            bound = np.iinfo(dtype).max // 4
            inputs[f"arg{index}"] = rng.integers(-bound, bound, shape, dtype=dtype)
            continue
        values = rng.uniform(-1.0, 1.0, shape)
        name = names.get(id(arg), "")
        if name in WEIGHTS:
            values *= (3.0 / max(1, fan_in(case.op, name, shape))) ** 0.5
        inputs[f"arg{index}"] = values.astype(numpy_dtype(arg.type.element_type))
    return inputs


def relative_error(got: np.ndarray, ref: np.ndarray) -> float:
    if not np.isfinite(got).all():
        return float("inf")
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))


def build_library(built: list[Case], path: str, arch: str = "sm80") -> Path:
    """One unit per family (their instances deduplicated), compiled in parallel: for sm80
    (SASS for sm_80 and sm_90, plain launches), or for sm90 as a Hopper build compiles our
    kernels (sm_90a, launched with programmatic dependent launch)."""
    by_family: dict[str, list] = {}
    for case in built:
        by_family.setdefault(ck.family(case.op), []).append(case.op)
    jobs = [CompileJob(f"compute_{kind}", ck.emit_translation_unit(family_ops), arch) for kind, family_ops in by_family.items()]
    return build_shared_library(jobs, path, progress="always")


def launch(library, case: Case, tensors: list, stream: int) -> None:
    function = getattr(library, ck.kernel_name(case.op))
    function.restype = ctypes.c_int
    code = function(*(ctypes.c_void_p(x.data_ptr()) for x in tensors), ctypes.c_void_p(stream))
    if code:
        raise RuntimeError(f"{ck.kernel_name(case.op)} returned {code}: {library.boltir_error_string(code).decode()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the cases whose label contains this text")
    parser.add_argument("--list", action="store_true", help="emit every case's kernel and list them; no GPU, no nvcc")
    parser.add_argument("--build-only", action="store_true", help="compile the library and stop (fills the object cache)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-timing", action="store_true", help="skip the graph-replay timings of the 'timed' cases")
    parser.add_argument("--library", default="/tmp/boltir-check/compute_kernels.so")
    args = parser.parse_args()

    rows, built = [], []
    for case in cases():
        if args.only and args.only not in case.label:
            continue
        try:
            built.append(case.make())
            ck.emit_instance(case.op)
        except Exception as error:  # noqa: BLE001 - a case that cannot be emitted is a failure row
            rows.append((case.label, "-", "-", "emission failed: " + str(error).splitlines()[0][:80], "FAIL"))
    if args.list:
        for case in built:
            print(f"{case.label:90s} {ck.kernel_name(case.op)}{'  (fallback)' if ck.is_fallback(case.op) else ''}")
        for row in rows:
            print(f"{row[0]:90s} {row[3]}")
        print(f"{len(built)} cases, {len({ck.kernel_name(c.op) for c in built})} distinct instances")
        return 1 if rows else 0

    Path(args.library).parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    path = build_library(built, args.library)
    print(f"built {len({ck.kernel_name(c.op) for c in built})} instances of {len(built)} cases in {time.monotonic() - start:.0f} s", flush=True)
    if args.build_only:
        return 1 if rows else 0

    import torch

    library = ctypes.CDLL(str(path))
    library.boltir_error_string.restype = ctypes.c_char_p
    rng = np.random.default_rng(args.seed)
    stream = torch.cuda.current_stream().cuda_stream
    for case in built:
        name = ck.kernel_name(case.op)
        try:
            inputs = random_inputs(case, rng)
            (expected,) = run(case.module, inputs)
            tensors = [to_torch(inputs[f"arg{value.index}"]) for value in ck.launch_operands(case.op)[:-1]]
            out_type = case.op.results[0].type
            output = to_torch(np.zeros(tuple(out_type.get_shape()), numpy_dtype(out_type.element_type)))
            output.fill_(float("nan") if output.is_floating_point() else -12345)  # a kernel that misses an element shows
            launch(library, case, [*tensors, output], stream)
            torch.cuda.synchronize()
            if output.is_floating_point():
                error = relative_error(to_numpy_f32(output).astype(np.float64), expected.astype(np.float64))
            else:  # the share of elements that differ
                error = float(np.mean(output.cpu().numpy() != expected))
            exact = case.tolerance == 0
            verdict = "pass" if (error == 0 if exact else error < case.tolerance) else "FAIL"
            rows.append((case.label, name, f"{error:.2e}", "equal" if exact else f"< {case.tolerance:.0e}", verdict))
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            rows.append((case.label, name, "-", str(error).splitlines()[0][:60], "FAIL"))

    print(f"\nGPU: {torch.cuda.get_device_name(0)}; reference: the op-level interpreter; seed {args.seed}")
    print_table(("case", "kernel", "rel err", "bar", "result"), rows)
    failed = sum(row[-1] != "pass" for row in rows)
    print(f"\n{len(rows) - failed} passed, {failed} failed")
    timed = [case for case in built if "timed" in case.label]
    if timed and not args.no_timing:
        # also as a Hopper build compiles it (sm_90a, PDL): back-to-back launches in a graph
        # then overlap one's launch with the previous one's tail, as in a model
        hopper = ctypes.CDLL(str(build_library(timed, str(Path(args.library).with_suffix(".sm90.so")), "sm90")))
        hopper.boltir_error_string.restype = ctypes.c_char_p
        print("\nGraph replay (bench.kernels.graph_time_ms), inputs and outputs rotated past the L2; TB/s = the "
              "input, scale, bias and output moved once over the time; F.layer_norm on the same tensors; "
              "'sm90 + PDL': the kernel compiled as a Hopper build compiles it; 'copy': torch's copy_ of the "
              "input into the output, the same tensors read and written once (what this size reaches at all)")
        print_table(("case", "ours ms", "ours TB/s", "sm90 + PDL ms", "sm90 + PDL TB/s", "F.layer_norm ms",
                     "F.layer_norm TB/s", "copy ms", "copy TB/s", f"bound ms ({BANDWIDTH / 1e12:.1f} TB/s)"),
                    [time_layer_norm(library, hopper, case) for case in timed])
    return 1 if failed else 0


def time_layer_norm(library, hopper, case: Case) -> tuple:
    """One timed row: ours (plain launches, then the sm90 build's) and F.layer_norm, ms and
    effective TB/s."""
    import torch
    import torch.nn.functional as F

    from bench.kernels import graph_time_ms, rotations_for

    shape = tuple(case.arguments[0].type.get_shape())
    dtype = torch.float16 if isinstance(case.arguments[0].type.element_type, Float16Type) else torch.bfloat16
    width = shape[-1]
    nbytes = 2 * (2 * math.prod(shape) + 2 * width)
    rotations = rotations_for(nbytes)
    xs = [torch.randn(shape, dtype=dtype, device="cuda") for _ in range(rotations)]
    ys = [torch.empty_like(x) for x in xs]
    gamma = torch.randn(width, dtype=dtype, device="cuda")
    beta = torch.randn(width, dtype=dtype, device="cuda")
    def ours(lib):
        return graph_time_ms(lambda i: launch(lib, case, [xs[i], gamma, beta, ys[i]], torch.cuda.current_stream().cuda_stream),
                             rotations)

    plain, pdl = ours(library), ours(hopper)
    peer = graph_time_ms(lambda i: F.layer_norm(xs[i], (width,), gamma, beta, 1e-12), rotations)
    copy = graph_time_ms(lambda i: ys[i].copy_(xs[i]), rotations)
    return (case.label, f"{plain:.4f}", f"{nbytes / plain / 1e9:.2f}", f"{pdl:.4f}", f"{nbytes / pdl / 1e9:.2f}",
            f"{peer:.4f}", f"{nbytes / peer / 1e9:.2f}", f"{copy:.4f}", f"{nbytes / copy / 1e9:.2f}",
            f"{nbytes / BANDWIDTH * 1e3:.4f}")


if __name__ == "__main__":
    sys.exit(main())
