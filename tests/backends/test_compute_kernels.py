"""The compute kernels (pooling, softmax, layer norm, reductions, fallback GEMMs/convs).

Without a GPU: every family emits, instances are deduplicated by key, vector widths are
the widest legal ones, the generated index arithmetic addresses what numpy does, and ops
without a kernel are refused with one line. The `slow` tests compile representative units
with the real nvcc (skipped without it); the `gpu` tests run kernels through torch and
ctypes against the interpreter (skipped without a GPU).
"""

from __future__ import annotations

import ctypes
import math
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from boltir.backends.cuda.codegen import compute_kernels as ck
from boltir.backends.cuda.codegen.generator import Instance
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.interp import run
from boltir.ir import parse_module

# --------------------------------------------------------------------- IR builders


def tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def module_of(args: dict[str, str], op: str, result: str):
    params = ", ".join(f"%{name}: {type_}" for name, type_ in args.items())
    text = f"func.func @main({params}) -> {result} {{\n  %0 = {op}\n  func.return %0 : {result}\n}}\n"
    return parse_module(text)


def op_of(args: dict[str, str], op: str, result: str):
    module = module_of(args, op, result)
    return next(o for o in module.walk() if o.name.startswith("op."))


def pool(shape, out, element="f16", kind="max", attrs='kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>'):
    x, y = tensor(shape, element), tensor(out, element)
    attrs = f", {attrs}" if attrs else ""
    return op_of({"x": x}, f'op.pool2d %x {{kind = "{kind}"{attrs}}} : {x} -> {y}', y)


def softmax(shape, element="f16", axis=-1):
    x = tensor(shape, element)
    return op_of({"x": x}, f"op.softmax %x {{axis = {axis} : i64}} : {x}", x)


def layer_norm(shape, element="f16", scale=None, bias=None, axis=-1, scale_element=None):
    x = tensor(shape, element)
    scale = shape[axis % len(shape):] if scale is None else scale
    args = {"x": x, "g": tensor(scale, scale_element or element)}
    if bias is not None:
        args["b"] = tensor(bias, scale_element or element)
    operands = ", ".join(f"%{n}" for n in args)
    types = ", ".join(args.values())
    return op_of(args, f"op.layer_norm {operands} {{axis = {axis} : i64, epsilon = 1.0e-05 : f32}} : ({types}) -> {x}", x)


def reduce(shape, axes, kind="sum", element="f32", keepdims=False):
    x = tensor(shape, element)
    normalized = {a % len(shape) for a in axes}
    out = tuple(1 if i in normalized else d for i, d in enumerate(shape) if keepdims or i not in normalized)
    y = tensor(out, element)
    keep = ", keepdims" if keepdims else ""
    return op_of({"x": x}, f'op.reduce %x {{kind = "{kind}", axes = array<i64: {", ".join(map(str, axes))}>{keep}}} : {x} -> {y}', y)


def gemm(a, b, out, element="f16", epilogue="", layout_a="row", layout_b="row", bias=False, residual=False):
    args = {"a": tensor(a, element), "b": tensor(b, element)}
    operands = "%a, %b"
    if bias:
        args["bias"] = tensor((out[-1],), element)
        operands += " bias %bias"
    if residual:
        args["r"] = tensor(out, element)
        operands += " residual %r"
    y = tensor(out, element)
    text = (f'op.gemm {operands} {{layout_a = "{layout_a}", layout_b = "{layout_b}", epilogue = #op.epilogue<{epilogue}>}} '
            f": ({', '.join(args.values())}) -> {y}")
    return op_of(args, text, y)


def conv(x, w, out, element="f16", epilogue="", bias=False, attrs="", name="conv2d"):
    args = {"x": tensor(x, element), "w": tensor(w, element)}
    operands = "%x, %w"
    if bias:
        args["bias"] = tensor((out[3] if "NCHW" not in attrs else out[1],), element)
        operands += " bias %bias"
    y = tensor(out, element)
    attrs = f"{attrs}, " if attrs else ""
    return op_of(args, f"op.{name} {operands} {{{attrs}epilogue = #op.epilogue<{epilogue}>}} : ({', '.join(args.values())}) -> {y}", y)


def b2b_gemm(m=64, k0=32, n0=48, n1=16, element="f16"):
    args = {"a": tensor((m, k0), element), "b0": tensor((n0, k0), element), "b1": tensor((n1, n0), element),
            "c0": tensor((n0,), element)}
    y = tensor((m, n1), element)
    text = ('op.b2b_gemm %a, %b0, %b1 bias0 %c0 {layout_b0 = "col", layout_b1 = "col", epilogue0 = #op.epilogue<bias, relu>, '
            f"epilogue1 = #op.epilogue<gelu>}} : ({', '.join(args.values())}) -> {y}")
    return op_of(args, text, y)


def b2b_conv(element="f16"):
    args = {"x": tensor((1, 8, 8, 4), element), "w0": tensor((16, 3, 3, 4), element), "w1": tensor((8, 1, 1, 16), element),
            "c0": tensor((16,), element), "c1": tensor((8,), element)}
    y = tensor((1, 8, 8, 8), element)
    text = ("op.b2b_conv2d %x, %w0, %w1 bias0 %c0 bias1 %c1 {pads = array<i64: 1, 1, 1, 1>, epilogue0 = #op.epilogue<bias, relu>, "
            f"epilogue1 = #op.epilogue<bias>}} : ({', '.join(args.values())}) -> {y}")
    return op_of(args, text, y)


def representative_ops() -> dict[str, object]:
    """One op of every family and code path."""
    return {
        "max pool NHWC": pool((2, 15, 15, 64), (2, 8, 8, 64)),
        "avg pool NCHW count_include_pad": pool((2, 6, 11, 11), (2, 6, 6, 6), "f32", "avg",
                                                'layout = "NCHW", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, '
                                                "pads = array<i64: 1, 1, 1, 1>, count_include_pad"),
        "global avg pool NHWC": pool((8, 7, 7, 2048), (8, 1, 1, 2048), "f16", "global_avg", ""),
        "global max pool NCHW": pool((2, 10, 9, 9), (2, 10, 1, 1), "bf16", "global_max", 'layout = "NCHW"'),
        "softmax lanes": softmax((64, 1000)),
        "softmax block": softmax((8, 4096), "bf16"),
        "softmax stream": softmax((2, 40000), "f32"),
        "softmax strided": softmax((4, 17, 33), "f32", axis=1),
        "layer_norm lanes": layer_norm((256, 768), bias=(768,)),
        "layer_norm lanes no bias": layer_norm((64, 1024), "bf16", scale_element="f32"),
        "layer_norm broadcast": layer_norm((6, 5, 7), "f32", scale=(7,), bias=(5, 1), axis=1),
        "layer_norm stream": layer_norm((4, 20000), "bf16", bias=(20000,), scale_element="f32"),
        "reduce inner": reduce((16, 128, 64), (0, 2), "mean", "bf16"),
        "reduce outer": reduce((2, 3, 4, 5), (0, 2), "max", "f16", keepdims=True),
        "cumsum rows": op_of({"x": tensor((8, 512), "f32")}, "op.cumsum %x {axis = 1 : i64} : tensor<8x512xf32>",
                             tensor((8, 512), "f32")),  # integers: test_cumsum_kernel.py
        "cumsum strided": op_of({"x": tensor((4, 128, 6), "f16")}, "op.cumsum %x {axis = 1 : i64, exclusive, reverse} : tensor<4x128x6xf16>",
                                tensor((4, 128, 6), "f16")),
        "gemm": gemm((3, 33, 40), (24, 40), (3, 33, 24), epilogue="bias, gelu", layout_b="col", bias=True),
        "gemm residual": gemm((40, 33), (40, 24), (33, 24), "f32", "alpha = 0.5, beta = 2.0, bias, silu, residual = mul, then tanh",
                              layout_a="col", bias=True, residual=True),
        "conv2d": conv((2, 14, 14, 32), (48, 3, 3, 32), (2, 14, 14, 48), epilogue="bias, relu", bias=True,
                       attrs="pads = array<i64: 1, 1, 1, 1>"),
        "conv2d NCHW groups": conv((1, 8, 17, 17), (12, 2, 5, 5), (1, 12, 7, 5), "f32", "bias, clip(0.0, 6.0)", bias=True,
                                   attrs='layout = "NCHW", filter_layout = "OIHW", strides = array<i64: 2, 2>, '
                                         "dilations = array<i64: 2, 2>, pads = array<i64: 2, 1, 3, 0>, groups = 4"),
        "conv_transpose2d": conv((1, 5, 6, 8), (8, 3, 3, 4), (1, 10, 12, 8), "bf16", "bias, leaky_relu(0.1)", bias=True,
                                 attrs="strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, groups = 2",
                                 name="conv_transpose2d"),
        "b2b_gemm": b2b_gemm(),
        "b2b_conv2d": b2b_conv(),
    }


# --------------------------------------------------------------------- emission


@pytest.fixture(scope="module")
def every_op():
    return representative_ops()


def test_every_family_emits(every_op):
    families = set()
    for label, op in every_op.items():
        instance = ck.emit_instance(op)
        assert isinstance(instance, Instance), label
        assert instance.name == ck.kernel_name(op) and re.fullmatch(rf"boltir_{instance.family}_[0-9a-f]{{12}}", instance.name)
        assert instance.key == ck.instance_key(op) and instance.family == ck.FAMILIES[type(op)]
        assert f"namespace {instance.name} {{" in instance.source and "namespace boltir_instances {" in instance.source
        assert f'extern "C" int {instance.name}(' in instance.source
        assert "{{" not in instance.source and "{%" not in instance.source, label
        families.add(instance.family)
    assert families == set(ck.FAMILIES.values())


def test_launcher_abi_follows_operand_order(every_op):
    op = every_op["gemm residual"]
    assert [v.name_hint for v in ck.launch_operands(op)[:-1]] == ["a", "b", "bias", "r"]
    assert ck.launch_operands(op)[-1] is op.output
    source = ck.emit_instance(op).source
    name = ck.kernel_name(op)
    assert (f"int {name}(const void *a, const void *b, const void *bias, const void *residual, void *output, "
            "cudaStream_t stream)") in source
    assert "return boltir_compute::launch_status();" in source
    # absent optional operands are not parameters
    plain = gemm((4, 8), (8, 16), (4, 16), "f32")
    assert f"int {ck.kernel_name(plain)}(const void *a, const void *b, void *output, cudaStream_t stream)" in ck.emit_instance(plain).source
    norm = layer_norm((4, 32))
    assert [v.name_hint for v in ck.launch_operands(norm)[:-1]] == ["x", "g"]


def test_translation_unit_dedupes_and_is_standalone(every_op):
    first, twin = softmax((64, 1000)), softmax((64, 1000))
    same_kernel_other_axis_spelling = softmax((64, 1000), axis=1)
    other = softmax((64, 1001))
    assert ck.kernel_name(first) == ck.kernel_name(twin) == ck.kernel_name(same_kernel_other_axis_spelling)
    assert ck.kernel_name(other) != ck.kernel_name(first)
    unit = ck.emit_translation_unit([first, twin, same_kernel_other_axis_spelling, other])
    assert unit.count(f'extern "C" int {ck.kernel_name(first)}(') == 1
    assert unit.count('extern "C" int boltir_softmax_') == 2
    for header in ("<cuda_runtime.h>", "<cuda_fp16.h>", "<cuda_bf16.h>"):
        assert f"#include {header}" in unit
    assert "cutlass" not in unit.lower().replace("the cutlass units", "").replace("no cutlass", "")
    assert "boltir_error_string" in unit
    # a module: every op of a compute family, in order
    module = module_of({"x": tensor((4, 8), "f32")}, "op.softmax %x {axis = 1 : i64} : tensor<4x8xf32>", tensor((4, 8), "f32"))
    assert ck.compute_ops(module)[0].name == "op.softmax"
    assert "boltir_softmax_" in ck.emit_translation_unit(module)


def test_keys_bake_in_shapes_and_attributes():
    a = reduce((4, 6), (1,), "sum")
    assert ck.instance_key(a) == "reduce input=tensor<4x6xf32> output=tensor<4xf32> axes=[1] keepdims=False kind=sum"
    assert ck.kernel_name(reduce((4, 6), (-1,), "sum")) == ck.kernel_name(a)
    assert ck.kernel_name(reduce((4, 6), (1,), "mean")) != ck.kernel_name(a)
    g1 = gemm((4, 8), (8, 16), (4, 16), "f32", "relu")
    g2 = gemm((4, 8), (8, 16), (4, 16), "f32", "gelu")
    assert "epilogue=#op.epilogue<relu>" in ck.instance_key(g1)
    assert ck.kernel_name(g1) != ck.kernel_name(g2)


def _constant(source: str, name: str) -> int:
    return int(re.search(rf"\b{name} = (\d+)", source).group(1))


@pytest.mark.parametrize(
    "make, vector",
    [
        (lambda: pool((2, 15, 15, 64), (2, 8, 8, 64), "f16"), 8),      # 16 bytes of f16
        (lambda: pool((2, 15, 15, 64), (2, 8, 8, 64), "f32"), 4),      # 16 bytes of f32
        (lambda: pool((2, 9, 9, 20), (2, 5, 5, 20), "bf16"), 4),       # C = 20: 8 bytes
        (lambda: pool((1, 9, 9, 3), (1, 5, 5, 3), "f16"), 1),          # C = 3: scalar
        (lambda: softmax((64, 1000)), 8),
        (lambda: softmax((3, 1002)), 2),
        (lambda: softmax((2, 100, 64), axis=1), 8),                    # strided: along the inner 64
        (lambda: layer_norm((4, 768), "f32"), 4),
        (lambda: layer_norm((4, 333)), 1),
        (lambda: reduce((16, 128, 64), (0, 2), element="f16"), 8),     # inner: along the reduced 64
        (lambda: reduce((6, 7, 8), (1,), element="bf16"), 8),          # outer: along the kept 8
        (lambda: gemm((64, 40), (24, 40), (64, 24), layout_b="col"), 8),  # A row, B col: both along K
        (lambda: gemm((64, 40), (40, 24), (64, 24)), 8),               # A along K only
        (lambda: gemm((40, 64), (40, 24), (64, 24), layout_a="col"), 1),  # neither is contiguous in K
        (lambda: conv((1, 8, 8, 32), (16, 3, 3, 32), (1, 6, 6, 16)), 8),
        (lambda: conv((1, 8, 8, 6), (16, 3, 3, 6), (1, 6, 6, 16)), 2),
    ],
)
def test_vector_width_is_the_widest_legal(make, vector):
    source = ck.emit_instance(make()).source
    assert _constant(source, "V") == vector


def test_fallback_vectors_are_named_per_operand():
    source = ck.emit_instance(b2b_gemm(k0=40, n0=12)).source
    assert _constant(source, "V0") == 8 and _constant(source, "V1") == 4


def test_row_plans():
    assert ck.row_plan(24, 2) == ck.RowPlan("group", 8, 128, 4, 1)  # 3 vectors: groups of 4 lanes
    assert ck.row_plan(1000, 2) == ck.RowPlan("group", 8, 128, 32, 4)
    assert ck.row_plan(4096, 2) == ck.RowPlan("block", 8, 128, 128, 4)
    assert ck.row_plan(3001, 4) == ck.RowPlan("block", 1, 96, 96, 32)
    assert ck.row_plan(40000, 2).mode == "stream"
    for length in (1, 7, 100, 1000, 5000, 16384, 99999):
        plan = ck.row_plan(length, 2)
        assert plan.items * plan.vector <= ck.REGISTER_FLOATS or plan.mode == "stream"
        assert plan.mode == "stream" or plan.items * plan.lanes * plan.vector >= length
        assert plan.threads % plan.lanes == 0 and plan.threads <= 1024


def test_reduce_modes():
    inner = ck.reduce_context((2, 3, 4, 5), (2, 3), "mean", "f16")
    assert inner["mode"] == "inner" and inner["count"] == 20 and inner["outputs"] == 6
    outer = ck.reduce_context((2, 7, 7, 64), (1, 2), "mean", "f16")
    assert outer["mode"] == "outer" and outer["inner"] == 64 and outer["vector"] == 8 and outer["count"] == 49
    assert outer["block"] <= 256 and outer["grid"] == 2
    # extent-1 axes vanish; no reduced axis is a copy
    copy = ck.reduce_context((3, 1, 5), (1,), "sum", "f32")
    assert copy["count"] == 1 and copy["outputs"] == 15


# ----------------------------------------------- the generated index arithmetic


def _python_offset(source: str):
    """The C++ of `offset_function`, run as Python."""
    body = [line.strip() for line in source.splitlines()[2:-2]]
    code = "\n".join(line.rstrip(";").replace("i /= ", "i //= ") for line in body)

    def offset(i: int) -> int:
        scope = {"i": i, "offset": 0}
        exec(code, {}, scope)
        return scope["offset"]

    return offset


@pytest.mark.parametrize(
    "out_lead, lead",
    [((2, 3), (2, 1)), ((2, 3), (3,)), ((2, 3), ()), ((4, 2, 3), (4, 1, 3)), ((2, 3), (2, 3)), ((5,), (1,))],
)
def test_broadcast_offsets_match_numpy(out_lead, lead):
    block = 7
    offset = _python_offset(ck.offset_function("f", ck._broadcast_dims(out_lead, lead, block)))
    owner = np.broadcast_to(np.arange(math.prod(lead)).reshape(lead) if lead else np.array(0), out_lead)
    for i, expected in enumerate(owner.reshape(-1)):
        assert offset(i) == expected * block


@pytest.mark.parametrize("shape, axes", [((2, 3, 4, 5), (0, 2)), ((16, 12, 8), (0, 2)), ((3, 1, 5), (1,)), ((4, 5, 6), (1, 2)),
                                         ((2, 3, 4, 5), (1, 3)), ((6,), (0,))])
def test_reduction_offsets_address_numpys_elements(shape, axes):
    context = ck.reduce_context(shape, axes, "sum", "f32")
    x = np.arange(math.prod(shape)).reshape(shape)
    kept_axes = [a for a in range(len(shape)) if a not in axes]
    expected = np.transpose(x, kept_axes + list(axes)).reshape(context["outputs"], context["count"])
    output_offset = _python_offset(context["output_offset"])
    reduced_offset = _python_offset(context["reduced_offset"])
    if context["mode"] == "inner":
        got = [[output_offset(o) + reduced_offset(r) for r in range(context["count"])] for o in range(context["outputs"])]
    else:
        inner = context["inner"]
        got = [[output_offset(o // inner) + o % inner + reduced_offset(r) for r in range(context["count"])]
               for o in range(context["outputs"])]
    assert np.array_equal(np.array(got).reshape(expected.shape), expected)


def test_layer_norm_broadcast_scale_index():
    source = ck.emit_instance(layer_norm((6, 5, 7), "f32", scale=(7,), bias=(5, 1), axis=1)).source
    functions = dict(re.findall(r"(__device__ __forceinline__ index_t (\w+)\(index_t i\) \{.*?\n\})", source, re.DOTALL)[i][::-1]
                     for i in range(2))
    scale, bias = _python_offset(functions["scale_index"]), _python_offset(functions["bias_index"])
    assert [scale(j) for j in range(35)] == [j % 7 for j in range(35)]
    assert [bias(j) for j in range(35)] == [j // 7 for j in range(35)]
    assert "load<T_scale, V>" not in source
    full = ck.emit_instance(layer_norm((4, 8, 32), scale=(8, 32), axis=1)).source
    assert "fetch<T_scale, V>(scale + e)" in full and "affine_at" not in full  # issued with the row's loads


def test_layer_norm_loads_scale_and_bias_with_the_row():
    """In the register modes the row's scale and bias loads issue with its own, before the
    reductions; streamed rows and broadcast operands read them after."""
    source = ck.emit_instance(layer_norm((256, 768), bias=(768,))).source
    body = source[source.index("__global__"):]
    assert body.index("beta_words[it] = fetch<T_bias, V>(bias + e)") < body.index("group_reduce")
    assert "widen<T_scale, V>(gamma_words[it], gamma)" in body
    for streamed in (layer_norm((4, 20000), "bf16", bias=(20000,)), layer_norm((6, 5, 7), "f32", scale=(7,), bias=(5, 1), axis=1)):
        assert "fetch<" not in ck.emit_instance(streamed).source.split("__global__")[1]


def test_epilogue_function_follows_apply_epilogue():
    epilogue = ops.EpilogueAttr.make(alpha=0.5, beta=2.0, bias=True, activation=ops.Activation("clip", (0.0, ops.UNBOUNDED)),
                                     residual="mul", activation2=ops.Activation("leaky_relu", (0.1,)))
    text = ck.epilogue_function("epilogue", epilogue)
    assert text.splitlines()[1:-1] == [
        "  float x = 0.5f * acc;",
        "  x += 2.0f * bias;",
        "  x = boltir_compute::clip_min(x, 0.0f);",  # the unbounded max bounds nothing
        "  x = x * residual;",
        "  x = boltir_compute::leaky_relu(x, 0.1f);",
        "  return x;",
    ]
    assert ck.epilogue_function("e", ops.IDENTITY_EPILOGUE).splitlines()[1:-1] == ["  float x = 1.0f * acc;", "  return x;"]


def test_fallbacks_are_flagged(every_op):
    flagged = {label for label, op in every_op.items() if ck.is_fallback(op)}
    assert flagged == {"gemm", "gemm residual", "conv2d", "conv2d NCHW groups", "conv_transpose2d", "b2b_gemm", "b2b_conv2d"}
    assert all(ck.supports(op) for op in every_op.values())


def test_empty_results_launch_nothing():
    op = reduce((0, 6), (1,), "sum")
    source = ck.emit_instance(op).source
    assert "return 0;  // an empty result" in source and "<<<" not in source


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: softmax((4, 8), "f64"), "'op.softmax' has no compute kernel: the input has element type f64"),
        (lambda: pool((1, 8, 8, 4), (1, 4, 4, 4), "i8", "max", "kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>"),
         "element type i8; compute kernels take f16, bf16, f32"),
        (lambda: reduce((0, 6), (0,), "sum"), "the input is empty (tensor<0x6xf32>) but the result is not"),
        (lambda: b2b_gemm(n0=32768, element="f16"), "does not fit the 49152 bytes of shared memory"),
    ],
)
def test_unsupported_ops_say_why(make, message):
    op = make()
    assert not ck.supports(op)
    with pytest.raises(BoltError) as error:
        ck.emit_instance(op)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_other_ops_have_no_family():
    op = op_of({"x": tensor((4,), "f32")}, "op.unary relu %x : tensor<4xf32>", tensor((4,), "f32"))
    assert not ck.supports(op)
    with pytest.raises(BoltError, match="'op.unary' has no compute kernel family"):
        ck.kernel_name(op)


# ------------------------------------------------------------------ compile checks

NVCC_FLAGS = ["-std=c++17", "-O3", "-DNDEBUG", "-Xcompiler", "-fPIC", "-gencode=arch=compute_80,code=[sm_80,sm_90]"]

COMPILE_UNITS = {
    "reductions": ["max pool NHWC", "avg pool NCHW count_include_pad", "global avg pool NHWC", "global max pool NCHW",
                   "reduce inner", "reduce outer", "cumsum rows", "cumsum strided"],
    "rows": ["softmax lanes", "softmax block", "softmax stream", "softmax strided", "layer_norm lanes",
             "layer_norm lanes no bias", "layer_norm broadcast", "layer_norm stream"],
    "fallbacks": ["gemm", "gemm residual", "conv2d", "conv2d NCHW groups", "conv_transpose2d", "b2b_gemm", "b2b_conv2d"],
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Three units, two at a time: {unit: (ok, log, seconds, object, names)}."""
    import os

    nvcc = os.environ.get("BOLTIR_NVCC") or shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH (set BOLTIR_NVCC)")
    out = tmp_path_factory.mktemp("compute_nvcc")
    every = representative_ops()

    def build(unit: str):
        unit_ops = [every[label] for label in COMPILE_UNITS[unit]]
        path = out / f"{unit}.cu"
        path.write_text(ck.emit_translation_unit(unit_ops))
        obj = out / f"{unit}.o"
        command = [nvcc, *NVCC_FLAGS, "-c", str(path), "-o", str(obj)]
        start = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True)
        seconds = time.monotonic() - start
        log = " ".join(command) + "\n" + result.stdout + result.stderr
        return unit, (result.returncode == 0, log, seconds, obj, [ck.kernel_name(op) for op in unit_ops])

    with ThreadPoolExecutor(max_workers=2) as pool_:
        return dict(pool_.map(build, COMPILE_UNITS))


@pytest.mark.slow
@pytest.mark.parametrize("unit", list(COMPILE_UNITS))
def test_units_compile_with_nvcc(compiled, unit):
    ok, log, seconds, obj, names = compiled[unit]
    assert ok, f"nvcc failed on the {unit} unit after {seconds:.0f} s:\n{log[-6000:]}"
    assert "warning" not in log.lower(), log[-3000:]
    if shutil.which("nm"):
        symbols = subprocess.run(["nm", str(obj)], capture_output=True, text=True).stdout
        for name in names:
            assert re.search(rf"\bT {name}$", symbols, re.MULTILINE), f"{name} is not defined in {obj}"
        assert re.search(r"\bW boltir_error_string$", symbols, re.MULTILINE)


# ------------------------------------------------------------------------ on the GPU


def _run_on_gpu(op_list, tmp_path, rng):
    """Builds the ops into one library and runs each against the interpreter: the
    relative errors."""
    import torch

    from boltir.backends.cuda.codegen.generator import CompileJob
    from boltir.backends.cuda.toolchain.nvcc import build_shared_library

    library = ctypes.CDLL(str(build_shared_library([CompileJob("compute_test", ck.emit_translation_unit(op_list), "sm80")],
                                                   tmp_path / "compute.so", progress=False)))
    errors = []
    for op in op_list:
        module = op.parent_op().parent_op()
        entry = op.parent_op()
        inputs = {}
        for index, arg in enumerate(entry.body.block.args):
            values = rng.uniform(-1.0, 1.0, tuple(arg.type.get_shape()))
            inputs[f"arg{index}"] = values.astype(numpy_dtype(arg.type.element_type))
        (expected,) = run(module, inputs)

        def to_torch(array):
            if array.dtype.name == "bfloat16":
                return torch.from_numpy(array.view(np.uint16).copy()).view(torch.bfloat16).cuda()
            return torch.from_numpy(np.ascontiguousarray(array)).cuda()

        tensors = [to_torch(inputs[f"arg{value.index}"]) for value in ck.launch_operands(op)[:-1]]
        output = to_torch(np.full(expected.shape, np.nan, dtype=expected.dtype))
        function = getattr(library, ck.kernel_name(op))
        assert function(*(ctypes.c_void_p(t.data_ptr()) for t in (*tensors, output)), ctypes.c_void_p(0)) == 0
        torch.cuda.synchronize()
        got = output.float().cpu().numpy().astype(np.float64)
        ref = expected.astype(np.float64)
        errors.append(float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30)) if np.isfinite(got).all() else math.inf)
    return errors


@pytest.mark.gpu
def test_kernels_match_the_interpreter_on_the_gpu(tmp_path, rng):
    every = representative_ops()
    labels = list(every)
    errors = _run_on_gpu([every[label] for label in labels], tmp_path, rng)
    for label, error in zip(labels, errors):
        element = str(every[label].results[0].type.element_type)
        assert error < (1e-4 if element == "f32" else 1e-2), f"{label}: relative error {error:.2e}"
