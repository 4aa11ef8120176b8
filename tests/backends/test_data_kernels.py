"""The data-movement and elementwise kernels (boltir/backends/cuda/codegen/data_kernels.py).

Without a GPU: every family emits a namespaced instance with the ABI's launcher, keys
dedupe identical ops and separate different shapes, vectors are chosen where the innermost
extent allows and not elsewhere, bodies become the expected C++, and what has no kernel
is refused in one line. `slow`: representative units compile with the real nvcc (and the
vector kernels do use 16-byte accesses). `gpu`: every case of
tests/support/data_kernel_cases.py runs on the GPU and matches the interpreter.
"""

from __future__ import annotations

import re
import subprocess
import zlib
from pathlib import Path

import pytest

from boltir.backends.cuda.codegen import data_kernels as dk
from boltir.backends.cuda.toolchain import nvcc
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.dtypes import numpy_dtype
from boltir.interp import find_entry, run
from boltir.ir import make_context, parse_module
from boltir.passes.fuse_elementwise import FuseElementwisePass
from tests.support import data_kernel_cases


def tensor(shape, element: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{element}>"


def module_ops(text: str, fuse: bool = False) -> list:
    """The data ops of `func.func @main`, whose arguments are written `%name: type`."""
    ctx = make_context()
    module = parse_module(text, "test.mlir", ctx=ctx)
    if fuse:
        FuseElementwisePass().apply(ctx, module)
    return [op for op in find_entry(module).body.ops if type(op) in dk.FAMILIES]


def one_op(args: str, line: str, out: str, fuse: bool = False):
    """The single op of `%0 = <line>` in a function of `args` returning `out`."""
    (op,) = module_ops(f"func.func @main({args}) -> {out} {{\n  %0 = {line}\n  func.return %0 : {out}\n}}", fuse)
    return op


def unary(fn: str, shape, element: str = "f16", args: str = ""):
    t = tensor(shape, element)
    attr = f" {{args = array<f64: {args}>}}" if args else ""
    return one_op(f"%x: {t}", f"op.unary {fn} %x{attr} : {t}", t)


def binary(fn: str, a, b, element: str = "f16"):
    ta, tb = tensor(a, element), tensor(b, element)
    out = tensor(tuple(max(x, y) for x, y in zip((1,) * (len(b) - len(a)) + tuple(a), (1,) * (len(a) - len(b)) + tuple(b))),
                 "i1" if fn in ops.COMPARISON_FUNCTIONS else element)
    return one_op(f"%a: {ta}, %b: {tb}", f"op.binary {fn} %a, %b : ({ta}, {tb}) -> {out}", out)


def layout(shape, perm, element: str = "f16"):
    out = tensor([shape[p] for p in perm], element)
    return one_op(f"%x: {tensor(shape, element)}", f"op.layout_transform %x {{perm = array<i64: {', '.join(map(str, perm))}>}} : "
                  f"{tensor(shape, element)} -> {out}", out)


def pad(shape, pads, element: str = "f16", mode: str = "constant", value: float = 0.0):
    rank = len(shape)
    out = tensor([d + pads[i] + pads[i + rank] for i, d in enumerate(shape)], element)
    return one_op(f"%x: {tensor(shape, element)}", f"op.pad %x {{pads = array<i64: {', '.join(map(str, pads))}>, mode = \"{mode}\", "
                  f"value = {value} : f64}} : {tensor(shape, element)} -> {out}", out)


def slice_(shape, start: int, end: int, axis: int, step: int = 1, element: str = "f16"):
    from boltir.dialects.shapes import slice_shape

    out = tensor(slice_shape(tuple(shape), [start], [end], [axis], [step]), element)
    return one_op(f"%x: {tensor(shape, element)}", f"op.slice %x {{starts = array<i64: {start}>, ends = array<i64: {end}>, "
                  f"axes = array<i64: {axis}>, steps = array<i64: {step}>}} : {tensor(shape, element)} -> {out}", out)


def concat(shapes, axis: int, element: str = "f16"):
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    args = ", ".join(f"%x{i}: {tensor(s, element)}" for i, s in enumerate(shapes))
    names = ", ".join(f"%x{i}" for i in range(len(shapes)))
    types = ", ".join(tensor(s, element) for s in shapes)
    return one_op(args, f"op.concat {names} {{axis = {axis} : i64}} : ({types}) -> {tensor(out, element)}", tensor(out, element))


def gather(shape, index_shape, axis: int, element: str = "f32"):
    out = tensor(tuple(shape[:axis]) + tuple(index_shape) + tuple(shape[axis + 1 :]), element)
    ti = tensor(index_shape, "i64")
    return one_op(f"%d: {tensor(shape, element)}, %i: {ti}",
                  f"op.gather %d, %i {{axis = {axis} : i64}} : ({tensor(shape, element)}, {ti}) -> {out}", out)


def resize(shape, scales, out, mode: str = "linear", coordinate: str = "half_pixel", element: str = "f16"):
    attrs = f"scales = array<f64: {', '.join(map(str, scales))}>, mode = \"{mode}\", coordinate_transformation_mode = \"{coordinate}\""
    return one_op(f"%x: {tensor(shape, element)}", f"op.resize %x {{{attrs}}} : {tensor(shape, element)} -> {tensor(out, element)}",
                  tensor(out, element))


def elementwise(args: list[tuple[str, tuple, str]], out, out_element: str, body: str):
    params = ", ".join(f"%{n}: {tensor(s, e)}" for n, s, e in args)
    block = ", ".join(f"%{n}e: {e}" for n, _, e in args)
    types = ", ".join(tensor(s, e) for _, s, e in args)
    line = (f"op.elementwise ({', '.join('%' + n for n, _, _ in args)}) {{\n  ^bb0({block}):\n{body}\n  }} : "
            f"({types}) -> {tensor(out, out_element)}")
    return one_op(params, line, tensor(out, out_element))


def mask_chain():
    """An attention mask (row >= column, and not padding) selecting scores: one fused kernel."""
    t, c = tensor((2, 12, 128), "f16"), tensor((2, 12, 128), "i1")
    (op,) = module_ops(
        f"func.func @main(%i: tensor<12x1xi64>, %j: tensor<128xi64>, %m: tensor<2x1x128xi1>, %x: {t}, %f: tensor<f16>) -> {t} {{\n"
        "  %0 = op.binary greater_equal %i, %j : (tensor<12x1xi64>, tensor<128xi64>) -> tensor<12x128xi1>\n"
        "  %1 = op.unary not %m : tensor<2x1x128xi1>\n"
        f"  %2 = op.binary and %0, %1 : (tensor<12x128xi1>, tensor<2x1x128xi1>) -> {c}\n"
        f"  %3 = op.select %2, %x, %f : ({c}, {t}, tensor<f16>) -> {t}\n"
        f"  func.return %3 : {t}\n}}",
        fuse=True,
    )
    return op


def vector_of(op) -> int:
    return int(re.search(r"vector=(\d+)", dk.instance_key(op)).group(1))


def representative_ops() -> dict[str, list]:
    """A few ops of every family, the fast and the awkward paths."""
    t = tensor((2, 7, 7, 64), "f16")
    return {
        "elementwise": [
            unary("gelu", (4, 64)), unary("relu", (3, 37, 5), "bf16"), unary("clip", (4, 33), "i32", "-3.5, 7.2"),
            binary("add", (2, 1, 64), (64,)), binary("equal", (6, 32), (32,), "f32"), binary("pow", (3, 20), (20,), "i32"),
            binary("div", (4, 33), (33,), "i64"),
            binary("greater", (6, 32), (32,), "f16"), binary("greater_equal", (2, 128), (128,), "i64"),
            binary("less", (3, 64), (), "bf16"), binary("less_equal", (3, 7, 16), (7, 1), "i1"),
            binary("and", (3, 7, 16), (7, 1), "i1"), binary("or", (4, 64), (64,), "i1"), binary("xor", (5, 8), (5, 1), "i1"),
            unary("not", (5, 64), "i1"), mask_chain(),
            one_op(f"%c: tensor<2x1x32xi1>, %a: {tensor((2, 4, 32), 'f16')}, %b: tensor<f16>",
                   "op.select %c, %a, %b : (tensor<2x1x32xi1>, tensor<2x4x32xf16>, tensor<f16>) -> tensor<2x4x32xf16>", "tensor<2x4x32xf16>"),
            one_op("%x: tensor<4x96xf32>", "op.cast %x : tensor<4x96xf32> to tensor<4x96xbf16>", "tensor<4x96xbf16>"),
            one_op("%x: tensor<4x16xf32>", "op.cast %x : tensor<4x16xf32> to tensor<4x16xi8>", "tensor<4x16xi8>"),
            one_op(f"%x: {t}, %b: tensor<64xf16>", f"op.binary add %x, %b : ({t}, tensor<64xf16>) -> {t}", t, fuse=True),
            elementwise([("x", (8, 16), "f32"), ("y", (8, 16), "f32")], (8, 16), "i32",
                        "    %c = arith.cmpf uge, %xe, %ye : f32\n    %one = arith.constant 1 : i32\n"
                        "    %zero = arith.constant 0 : i32\n    %s = arith.select %c, %one, %zero : i32\n    op.yield %s : i32"),
        ],
        "layout_transform": [layout((2, 3, 17, 19), (0, 2, 3, 1)), layout((4, 6, 8, 16), (1, 0, 2, 3)), layout((5, 33, 65), (2, 0, 1), "i8")],
        "pad": [pad((2, 5, 7, 16), (0, 1, 2, 0, 0, 1, 2, 0)), pad((3, 10), (2, 3, 1, 4), "f32", "reflect"),
                pad((4, 6), (1, 0, 0, 2), "bf16", "edge"), pad((3, 5), (4, -2, 3, 6), "i32", "wrap")],
        "slice": [slice_((1, 4, 4, 24), 8, 16, 3), slice_((2, 96, 8), -1, -1000, 1, -2, "f32")],
        "concat": [concat([(1, 8, 8, 16), (1, 8, 8, 8)], 3), concat([(3, 5), (3, 7)], 1, "i1")],
        "reshape": [one_op("%x: tensor<2x64x1x1xf16>", "op.reshape %x : tensor<2x64x1x1xf16> -> tensor<2x64xf16>", "tensor<2x64xf16>")],
        "gather": [gather((50, 32), (2, 8), 0), gather((4, 6, 10), (3,), 2, "bf16")],
        "resize": [resize((2, 6, 5, 16), (1.0, 2.0, 2.0, 1.0), (2, 12, 10, 16)),
                   resize((1, 3, 9, 7), (1.0, 1.0, 0.5, 1.75), (1, 3, 4, 12), "cubic", "align_corners", "f32"),
                   resize((1, 2, 7, 5), (1.0, 1.0, 1.5, 2.5), (1, 2, 10, 12), "nearest", "asymmetric", "f32")],
        "space_to_depth": [
            one_op("%x: tensor<2x3x9x7xf32>", "op.space_to_depth %x {blocksize = 2 : i64, layout = \"NCHW\", "
                   "pads = array<i64: 1, 1, 0, 2>} : tensor<2x3x9x7xf32> -> tensor<2x5x5x16xf16>", "tensor<2x5x5x16xf16>"),
            one_op("%x: tensor<2x3x8x6xi8>", "op.space_to_depth %x {blocksize = 2 : i64, layout = \"NCHW\", "
                   "result_layout = \"NCHW\"} : tensor<2x3x8x6xi8> -> tensor<2x12x4x3xi8>", "tensor<2x12x4x3xi8>"),
        ],
    }


# --------------------------------------------------------------- every family


def test_every_op_class_has_a_family():
    classes = {ops.ElementwiseOp, ops.UnaryOp, ops.BinaryOp, ops.SelectOp, ops.CastOp, ops.LayoutTransformOp, ops.PadOp,
               ops.SliceOp, ops.ConcatOp, ops.ReshapeOp, ops.GatherOp, ops.ResizeOp, ops.SpaceToDepthOp}
    assert set(dk.FAMILIES) == classes


@pytest.mark.parametrize(
    "kind", ["elementwise", "layout_transform", "pad", "slice", "concat", "reshape", "gather", "resize", "space_to_depth"]
)
def test_every_family_emits_a_namespaced_instance_with_the_abi_launcher(kind):
    for op in representative_ops()[kind]:
        assert dk.supports(op) and dk.unsupported_reason(op) is None
        instance = dk.emit_instance(op)
        name = dk.kernel_name(op)
        assert re.fullmatch(rf"boltir_{kind}_[0-9a-f]{{12}}", name) and instance.name == name and instance.family == kind
        pointers = len(dk.launch_operands(op)) - 1
        params = "".join(f"const void *in{i}, " for i in range(pointers))
        assert f'extern "C" int {name}({params}void *out, cudaStream_t stream) {{' in instance.source
        assert f"namespace boltir_instances {{\nnamespace {name} {{" in instance.source
        assert "boltir_data::launch_status()" in instance.source


def test_launch_operands_are_the_operands_then_the_result():
    op = concat([(1, 2), (1, 3), (1, 4)], 1)
    assert dk.launch_operands(op) == [*op.inputs, op.output]
    op = gather((50, 32), (2, 8), 0)
    assert dk.launch_operands(op) == [op.data, op.indices, op.output]
    op = binary("sub", (3, 4), (4,))
    assert dk.launch_operands(op) == [op.lhs, op.rhs, op.output]


def test_the_unit_is_self_contained_and_lists_its_instances():
    op = pad((2, 5, 7, 16), (0, 1, 2, 0, 0, 1, 2, 0))
    unit = dk.emit_translation_unit([op])
    for header in ("<cuda_runtime.h>", "<cuda_fp16.h>", "<cuda_bf16.h>"):
        assert f"#include {header}" in unit
    assert "cutlass" not in unit.lower().replace("no cutlass", "")
    assert "namespace boltir_data {" in unit and "#pragma once" not in unit
    assert f"//   {dk.kernel_name(op)}: pad" in unit


# ------------------------------------------------------------------ instance keys


def test_identical_ops_share_one_instance_and_shapes_separate_them():
    a, b = unary("gelu", (4, 64)), unary("gelu", (4, 64))
    assert dk.instance_key(a) == dk.instance_key(b) and dk.kernel_name(a) == dk.kernel_name(b)
    c = unary("gelu", (4, 65))
    assert dk.kernel_name(c) != dk.kernel_name(a)
    assert dk.kernel_name(unary("gelu", (4, 64), "bf16")) != dk.kernel_name(a)
    unit = dk.emit_translation_unit([a, b, c, a])
    assert unit.count('extern "C" int boltir_elementwise_') == 2


def test_keys_see_every_attribute():
    assert dk.kernel_name(pad((3, 10), (2, 3, 1, 4), "f32", "reflect")) != dk.kernel_name(pad((3, 10), (2, 3, 1, 4), "f32", "edge"))
    assert dk.kernel_name(pad((3, 10), (2, 3, 1, 4), "f32")) != dk.kernel_name(pad((3, 10), (2, 3, 1, 4), "f32", value=1.0))
    assert dk.kernel_name(unary("clip", (8,), "f32", "0.0, 6.0")) != dk.kernel_name(unary("clip", (8,), "f32", "0.0, 5.0"))
    linear = resize((1, 4, 4, 8), (1.0, 2.0, 2.0, 1.0), (1, 8, 8, 8))
    cubic = resize((1, 4, 4, 8), (1.0, 2.0, 2.0, 1.0), (1, 8, 8, 8), "cubic")
    assert dk.kernel_name(linear) != dk.kernel_name(cubic)


def test_data_movement_keys_name_the_width_not_the_type():
    assert dk.kernel_name(layout((2, 3, 8, 8), (0, 2, 3, 1), "f16")) == dk.kernel_name(layout((2, 3, 8, 8), (0, 2, 3, 1), "bf16"))
    assert dk.kernel_name(layout((2, 3, 8, 8), (0, 2, 3, 1), "f16")) != dk.kernel_name(layout((2, 3, 8, 8), (0, 2, 3, 1), "f32"))
    # axes that move together merge: the same transpose in other clothes
    assert dk.kernel_name(layout((1, 3, 4, 12), (0, 2, 3, 1))) == dk.kernel_name(layout((3, 48), (1, 0)))


def test_a_standalone_op_and_its_fused_form_share_a_kernel():
    t = tensor((4, 64), "f16")
    standalone = unary("silu", (4, 64))
    fused = one_op(f"%x: {t}", f"op.unary silu %x : {t}", t, fuse=True)
    assert isinstance(fused, ops.ElementwiseOp)
    assert dk.kernel_name(fused) == dk.kernel_name(standalone)
    # and emitting the standalone op left its operand without stray uses
    assert len(list(standalone.input.uses)) == 1


# ---------------------------------------------------------------- vectorization


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: unary("relu", (4, 64)), 8),  # 8 x f16 = 16 bytes
        (lambda: unary("relu", (2, 3, 128), "f32"), 4),
        (lambda: unary("relu", (3, 37, 5)), 1),  # innermost 5 (merged: 555) is odd
        (lambda: unary("relu", (3, 12)), 4),  # 36 elements: halved to 4 (8 bytes)
        (lambda: binary("add", (2, 1, 64), (64,)), 8),  # the bias is a vector too
        (lambda: binary("mul", (33, 7), (33, 1), "f32"), 1),  # broadcast along an odd innermost axis
        (lambda: binary("mul", (4, 1, 6), (1, 5, 1), "f32"), 2),
        (lambda: one_op("%x: tensor<4x96xf32>", "op.cast %x : tensor<4x96xf32> to tensor<4x96xf16>", "tensor<4x96xf16>"), 4),
        (lambda: pad((2, 5, 7, 16), (0, 1, 2, 0, 0, 1, 2, 0)), 8),  # C is not padded
        (lambda: pad((1, 9, 9, 3), (0, 0, 0, 0, 0, 0, 0, 1)), 1),  # C is padded
        (lambda: slice_((1, 4, 4, 24), 8, 16, 3), 8),
        (lambda: slice_((1, 4, 4, 24), 4, 16, 3), 4),  # starts 8 bytes into a row
        (lambda: slice_((2, 96, 8), 32, 64, 1, 2, "f32"), 4),  # every other row: each row is still contiguous
        (lambda: slice_((6, 10), 0, 10, 1, 2, "f32"), 1),  # every other element
        (lambda: concat([(1, 8, 8, 16), (1, 8, 8, 8)], 3), 8),
        (lambda: concat([(3, 5), (3, 7)], 1, "f32"), 1),
        (lambda: gather((50, 32), (2, 8), 0), 4),
        (lambda: gather((4, 6, 10), (3,), 2), 1),
        (lambda: layout((4, 6, 8, 16), (1, 0, 2, 3)), 8),  # whole innermost rows move
        (lambda: resize((2, 6, 5, 16), (1.0, 2.0, 2.0, 1.0), (2, 12, 10, 16)), 8),  # NHWC: C is not resized
        (lambda: resize((1, 4, 6, 6), (1.0, 1.0, 2.0, 2.0), (1, 4, 12, 12)), 1),  # NCHW: W is resized
        (lambda: one_op("%x: tensor<2x64x1x1xf16>", "op.reshape %x : tensor<2x64x1x1xf16> -> tensor<2x64xf16>", "tensor<2x64xf16>"), 8),
    ],
)
def test_vectors_where_the_innermost_extent_allows(make, expected):
    op = make()
    assert vector_of(op) == expected
    source = dk.emit_instance(op).source
    assert re.findall(r"launch<(\d+)>", source) == ([str(expected)] if expected > 1 else []) + ["1"]  # 1: the fallback


def test_the_launcher_checks_each_vector_pointer_for_its_own_width():
    op = one_op("%x: tensor<4x96xf32>", "op.cast %x : tensor<4x96xf32> to tensor<4x96xf16>", "tensor<4x96xf16>")
    source = dk.emit_instance(op).source
    assert "boltir_data::aligned(in0, 16) && boltir_data::aligned(out, 8)" in source  # 4 x f32 in, 4 x f16 out
    bias = binary("add", (2, 1, 64), (64,))
    assert "boltir_data::aligned(in1, 16)" in dk.emit_instance(bias).source


def test_a_transpose_of_the_innermost_axis_goes_through_shared_memory():
    op = layout((2, 3, 17, 19), (0, 2, 3, 1))
    assert "tiled" in dk.instance_key(op) and "shape=[2,3,323] perm=[0,2,1]" in dk.instance_key(op)
    source = dk.emit_instance(op).source
    assert "__shared__ S tile[kTile][kTile + 1];" in source and "__syncthreads();" in source


# ------------------------------------------------------------------------ bodies


def body_of(op) -> str:
    source = dk.emit_instance(op).source
    return source[source.index(" body(") : source.index("template <int V>")]


def test_f16_math_is_done_in_f32_and_rounded_per_op():
    op = elementwise([("x", (8,), "f16"), ("y", (8,), "f16")], (8,), "f16",
                     "    %s = arith.addf %xe, %ye : f16\n    %e = math.exp %s : f16\n    op.yield %e : f16")
    body = body_of(op)
    assert "float a0, float a1" in body
    assert "boltir_data::round_f16(__fadd_rn(a0, a1))" in body and "boltir_data::round_f16(expf(v0))" in body
    # the fused form computes in f32 and rounds once, at the end
    body = body_of(unary("exp", (8,)))
    assert body.count("round_f16") == 1 and "expf(" in body


def test_integer_and_boolean_ops_follow_numpy():
    body = body_of(binary("div", (4, 33), (33,), "i64"))
    assert "boltir_data::div_trunc(a0, a1)" in body
    body = body_of(unary("clip", (4, 33), "i32", "-3.5, 7.2"))  # integer bounds: ceil(low), floor(high)
    assert "int32_t(-3LL)" in body and "int32_t(7LL)" in body and "maximum" in body and "minimum" in body
    assert "boltir_data::ipow(a0, a1)" in body_of(binary("pow", (3, 20), (20,), "i32"))
    op = elementwise([("x", (4,), "i32"), ("y", (4,), "i32")], (4,), "i1",
                     "    %c = arith.cmpi ult, %xe, %ye : i32\n    op.yield %c : i1")
    assert "(uint32_t(a0) < uint32_t(a1))" in body_of(op)


@pytest.mark.parametrize(
    ("fn", "element", "expression"),
    [
        ("greater", "f16", "(v0 > v1)"),  # f16 compared in f32: exact
        ("greater_equal", "f32", "(a0 >= a1)"),  # C++'s ordered comparisons: false on NaN, as numpy
        ("less", "bf16", "(v0 < v1)"),
        ("less_equal", "f64", "(a0 <= a1)"),
        ("greater", "i64", "(a0 > a1)"),
        ("less", "ui32", "(a0 < a1)"),
        ("greater_equal", "i1", "(a0 >= a1)"),  # bool compares as 0 and 1, as numpy's True > False
        ("and", "i1", "(a0 & a1)"),
        ("or", "i1", "(a0 | a1)"),
        ("xor", "i1", "(a0 ^ a1)"),
    ],
)
def test_comparisons_and_logical_ops_become_cpp(fn, element, expression):
    op = binary(fn, (4, 33), (33,), element)
    body = body_of(op)
    assert f"const bool v{2 if element in ('f16', 'bf16') else 0} = {expression};" in body
    assert dk.instance_key(op).startswith("elementwise out=i1[4x33]")


def test_not_is_xor_with_true():
    body = body_of(unary("not", (4, 33), "i1"))
    assert "const bool v0 = true;" in body and "const bool v1 = (a0 ^ v0);" in body


def test_an_attention_mask_is_one_kernel():
    op = mask_chain()
    assert isinstance(op, ops.ElementwiseOp)
    body = body_of(op)
    assert "int64_t a0, int64_t a1, bool a2, float a3, float a4" in body
    assert "(a0 >= a1)" in body and "(a2 ^ " in body and " & " in body and " ? " in body


def test_constants_are_the_interpreters_values():
    op = elementwise([("x", (4,), "f16")], (4,), "f16",
                     "    %c = arith.constant 0.1 : f16\n    %s = arith.mulf %xe, %c : f16\n    op.yield %s : f16")
    assert "const float v0 = 0.099975586f;" in body_of(op)  # 0.1 rounded to f16, exactly
    op = elementwise([("x", (4,), "i64")], (4,), "i64",
                     "    %c = arith.constant -9223372036854775808 : i64\n    %s = arith.addi %xe, %c : i64\n    op.yield %s : i64")
    assert "int64_t(-9223372036854775807LL - 1)" in body_of(op)


@pytest.mark.parametrize(
    ("predicate", "expression"),
    [("oeq", "(a0 == a1)"), ("one", "(a0 < a1 || a0 > a1)"), ("ueq", "!(a0 < a1 || a0 > a1)"), ("une", "(a0 != a1)"),
     ("ult", "!(a0 >= a1)"), ("uno", "(a0 != a0 || a1 != a1)"), ("ord", "(a0 == a0 && a1 == a1)")],
)
def test_cmpf_predicates_treat_nan_as_mlir_does(predicate, expression):
    op = elementwise([("x", (4,), "f32"), ("y", (4,), "f32")], (4,), "i1",
                     f"    %c = arith.cmpf {predicate}, %xe, %ye : f32\n    op.yield %c : i1")
    assert f"const bool v0 = {expression};" in body_of(op)


def test_resize_tables_come_from_the_interpreter():
    from boltir.interp import graph as graph_kernels

    op = resize((1, 4, 4, 8), (1.0, 2.0, 2.0, 1.0), (1, 8, 8, 8))
    coords = graph_kernels.source_coordinates(8, 4, 2.0, "half_pixel", (0.0, 1.0))
    index, _ = graph_kernels.interpolation_taps(coords, 4, "linear", -0.75, False)
    source = dk.emit_instance(op).source
    assert f"kIndex0[16] = {{\n    {', '.join(str(int(i)) for i in index.reshape(-1))}," in source
    assert "kIndex1" in source and "kIndex2" not in source  # N and C are not resized


def test_an_empty_output_launches_nothing():
    op = slice_((4, 8), 5, 5, 0, 1, "f32")
    source = dk.emit_instance(op).source
    assert "return 0;" in source and "<<<" not in source


# ------------------------------------------------------------------------- errors


def test_what_has_no_kernel_is_refused_in_one_line():
    f8 = one_op("%x: tensor<4xf32>", "op.cast %x : tensor<4xf32> to tensor<4xf8E4M3FN>", "tensor<4xf8E4M3FN>")
    assert not dk.supports(f8)
    assert "element type f8E4M3FN is not computed on here" in dk.unsupported_reason(f8)
    with pytest.raises(BoltError, match=r"test.mlir:\d+:\d+: error: 'op.cast' has no CUDA kernel: element type f8E4M3FN"):
        dk.emit_instance(f8)
    sine = elementwise([("x", (4,), "f32")], (4,), "f32", "    %s = math.sin %xe : f32\n    op.yield %s : f32")
    with pytest.raises(BoltError, match="the body op math.sin has no CUDA expression"):
        dk.instance_key(sine)
    with pytest.raises(BoltError, match="axis 1 is cropped to nothing"):
        dk.kernel_name(pad((2, 3), (0, -3, 0, 2), "f32", "edge"))
    int4 = one_op("%x: tensor<8xi4>", "op.reshape %x : tensor<8xi4> -> tensor<2x4xi4>", "tensor<2x4xi4>")
    with pytest.raises(BoltError, match="element type i4 has no byte-addressable layout"):
        dk.emit_instance(int4)
    boolean = elementwise([("x", (4,), "i1")], (4,), "i1", "    %s = arith.subi %xe, %xe : i1\n    op.yield %s : i1")
    with pytest.raises(BoltError, match="numpy defines no boolean subtraction"):
        dk.emit_instance(boolean)
    for error in (dk.unsupported_reason(f8), dk.unsupported_reason(sine)):
        assert "\n" not in error


def test_an_op_of_another_kind_is_refused():
    ctx = make_context()
    module = parse_module(
        "func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {\n  %0 = op.softmax %x {axis = 1 : i64} : tensor<2x8xf32>\n"
        "  func.return %0 : tensor<2x8xf32>\n}", "t.mlir", ctx=ctx)
    (op,) = [o for o in find_entry(module).body.ops if o.name == "op.softmax"]
    with pytest.raises(BoltError, match="'op.softmax' is not an elementwise or data-movement op"):
        dk.kernel_name(op)
    assert not dk.supports(op)


# --------------------------------------------------------------------- with nvcc


def _nvcc() -> Path:
    try:
        return nvcc.find_nvcc()
    except BoltError as error:
        pytest.skip(f"needs nvcc: {error.message}")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Every representative op in one unit, compiled as the driver does (sm80 flags)
    and to PTX for sm_80 to see the accesses."""
    compiler = _nvcc()
    directory = tmp_path_factory.mktemp("data_kernels")
    source = directory / "data.cu"
    ops_ = [op for family in representative_ops().values() for op in family]
    source.write_text(dk.emit_translation_unit(ops_))
    flags = list(nvcc.CompileJob("data", "", "sm80").flags)
    results = {}
    for what, extra in (("object", ["-c", "-o", str(directory / "data.o")]), ("ptx", ["-arch=sm_80", "-ptx", "-o", str(directory / "data.ptx")])):
        command = [str(compiler), *([f for f in flags if not f.startswith("-gencode")] if what == "ptx" else flags), *extra, str(source)]
        results[what] = subprocess.run(command, capture_output=True, text=True)
    return ops_, directory, results


@pytest.mark.slow
def test_every_family_compiles_with_nvcc(compiled):
    _, directory, results = compiled
    result = results["object"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert "warning" not in result.stderr, result.stderr[-3000:]
    assert (directory / "data.o").stat().st_size > 0


@pytest.mark.slow
def test_vector_kernels_use_16_byte_accesses(compiled):
    ops_, directory, results = compiled
    assert results["ptx"].returncode == 0, results["ptx"].stderr[-3000:]
    ptx = (directory / "data.ptx").read_text()
    checked = 0
    for op in ops_:
        if {numpy_dtype(v.type.element_type).itemsize for v in (*op.operands, *op.results)} == {1}:
            continue  # i1 logic: V = 8 is 8 bytes a thread
        if "vector=8" in dk.instance_key(op) and dk.family(op) in ("elementwise", "slice", "gather"):
            name = dk.kernel_name(op)
            # the V = 8 kernel of this instance (f16 / 2-byte elements: 16 bytes a thread)
            entry = re.search(rf"\.entry (_ZN16boltir_instances\d+{name}6kernelILi8\w*)\(", ptx)
            assert entry, f"{name}: no kernel<8> in the PTX"
            body = ptx[entry.end() : ptx.index("\n}", entry.end())]
            assert re.search(r"ld\.global(\.nc)?\.v4\.(u|b)32", body), name
            if op.results[0].type.element_type.bitwidth == 1:  # an i1 result: 8 bytes (1 each) a thread
                assert re.search(r"st\.global\.(v4\.(u|b)16|v2\.(u|b)32|(u|b)64)\s", body), name
            else:
                assert re.search(r"st\.global\.v4\.(u|b)32", body), name
            checked += 1
    assert checked >= 3


# ----------------------------------------------------------------------- on a GPU


@pytest.fixture(scope="module")
def gpu_library(tmp_path_factory):
    check = data_kernel_cases
    cases = [check.prepare(case) for case in check.cases()]
    try:
        library = check.build_library(cases, str(tmp_path_factory.mktemp("gpu") / "data_kernels.so"))
    except BoltError as error:
        pytest.skip(f"cannot build the kernels here: {error.message}")
    return check, {case.label: case for case in cases}, library


def _labels() -> list[str]:
    try:
        return [case.label for case in data_kernel_cases.cases()]
    except Exception:  # noqa: BLE001 - collection must not fail for the GPU tests' sake
        return []


@pytest.mark.gpu
@pytest.mark.parametrize("label", _labels())
def test_the_kernel_matches_the_interpreter_on_the_gpu(gpu_library, label):
    import numpy as np

    check, cases, library = gpu_library
    case = cases[label]
    rng = np.random.default_rng(zlib.crc32(label.encode()))
    inputs = check.random_inputs(case, rng)
    with np.errstate(all="ignore"):
        (expected,) = run(case.module, inputs)
    for offset in (0, 1):  # aligned (vector kernel) and one element off (the fallback)
        error, passed = check.compare(case, check.run_on_gpu(library, case, inputs, offset), np.asarray(expected))
        assert passed, f"{label} (offset {offset}): error {error}"
