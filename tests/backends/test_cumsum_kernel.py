"""The cumsum compute kernel (compute_kernels.py's `cumsum` family, template
compute/cumsum.cu.j2). Without a GPU: rows along the innermost axis get a warp each with
the widest vector that divides them, a strided axis a thread per inner vector; integer
types are taken (summed as unsigned: they wrap), other element types are refused with one
line; keys carry the axis (normalized) and flags. The `slow` test compiles every case with
the real nvcc (no CUTLASS). bench/check_compute_kernels.py runs them on the GPU."""

from __future__ import annotations

import re
import subprocess

import pytest

from boltir.backends.cuda.codegen import compute_kernels as ck
from boltir.backends.cuda.roofline import LaunchCost, launch_cost
from boltir.backends.cuda.toolchain import nvcc
from boltir.diagnostics import BoltError
from boltir.ir import parse_module


def cumsum_op(shape, element, axis, flags=""):
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    attributes = f"axis = {axis} : i64" + "".join(f", {flag}" for flag in flags.split())
    text = f"func.func @main(%x: {t}) -> {t} {{\n  %0 = op.cumsum %x {{{attributes}}} : {t}\n  func.return %0 : {t}\n}}\n"
    return next(op for op in parse_module(text).walk() if op.name == "op.cumsum")


CASES = [
    ((2, 16), "i64", 1, ""),
    ((8, 512), "i32", 1, "reverse"),
    ((5, 7), "f32", -1, "exclusive reverse"),
    ((16, 1000), "f16", 1, "exclusive"),
    ((4, 4096), "bf16", 1, ""),
    ((4, 128, 6), "f16", 1, ""),
    ((3, 5, 7), "i64", 0, "reverse exclusive"),
    ((2, 512, 64), "f32", -2, "exclusive"),
]


@pytest.mark.parametrize(("shape", "element", "axis", "flags"), CASES)
def test_every_case_emits(shape, element, axis, flags):
    op = cumsum_op(shape, element, axis, flags)
    assert ck.supports(op) and ck.family(op) == "cumsum" and not ck.is_fallback(op)
    source = ck.emit_instance(op).source
    assert f"constexpr bool kExclusive = {'true' if 'exclusive' in flags else 'false'};" in source
    assert f"constexpr bool kReverse = {'true' if 'reverse' in flags else 'false'};" in source
    assert [value.name_hint or "x" for value in ck.launch_operands(op)[:1]] == ["x"]


@pytest.mark.parametrize(
    ("shape", "element", "axis", "strided", "vector", "launch"),
    [
        ((2, 16), "i64", 1, False, 2, (1, 128)),  # V = 16 bytes of i64
        ((8, 512), "i32", 1, False, 4, (2, 128)),  # 4 rows (warps) a block
        ((16, 1000), "f16", 1, False, 8, (4, 128)),
        ((5, 7), "f32", 1, False, 1, (2, 128)),
        ((4, 128, 6), "f16", 1, True, 2, (1, 256)),  # 4 x 6 / 2 threads
        ((2, 512, 64), "f32", 1, True, 4, (1, 256)),
        ((3, 5, 7), "i64", 0, True, 1, (1, 256)),
    ],
)
def test_plans(shape, element, axis, strided, vector, launch):
    context = ck._cumsum_context(cumsum_op(shape, element, axis))
    assert (context["strided"], context["vector"]) == (strided, vector)
    instance = ck.emit_instance(cumsum_op(shape, element, axis)).source
    assert f"::kernel, {launch[0]}, {launch[1]}, 0, stream, " in instance


def test_integers_sum_unsigned_and_floats_in_f32():
    assert "using Acc = unsigned int;" in ck.emit_instance(cumsum_op((2, 8), "i32", 1)).source
    assert "using Acc = unsigned long long;" in ck.emit_instance(cumsum_op((2, 8), "i64", 1)).source
    assert "using Acc = float;" in ck.emit_instance(cumsum_op((2, 8), "f16", 1)).source


def test_keys_normalize_the_axis_and_carry_the_flags():
    names = {ck.kernel_name(cumsum_op((2, 8), "i32", axis, flags))
             for axis in (1, -1) for flags in ("", "exclusive", "reverse", "exclusive reverse")}
    assert len(names) == 4
    assert ck.kernel_name(cumsum_op((2, 8), "i32", 1)) != ck.kernel_name(cumsum_op((2, 8), "i64", 1))


@pytest.mark.parametrize("element", ["f64", "i8", "i16", "ui32"])
def test_other_element_types_are_refused(element):
    op = cumsum_op((2, 8), element, 1)
    assert ck.unsupported_reason(op) == f"the input has element type {element}; compute kernels take f16, bf16, f32, i32, i64"
    with pytest.raises(BoltError, match=r"error: .op.cumsum. has no compute kernel: the input has element type"):
        ck.emit_instance(op)


def test_integers_stay_refused_by_the_float_families():
    t = "tensor<2x8xi32>"
    text = f"func.func @main(%x: {t}) -> {t} {{\n  %0 = op.softmax %x {{axis = 1 : i64}} : {t}\n  func.return %0 : {t}\n}}\n"
    softmax = next(op for op in parse_module(text).walk() if op.name == "op.softmax")
    assert ck.unsupported_reason(softmax) == "the input has element type i32; compute kernels take f16, bf16, f32"


def test_the_roofline_counts_bytes_only():
    """Read once, written once; no FLOPs (one add per element never nears the roof)."""
    assert launch_cost(cumsum_op((8, 512), "i64", 1)) == LaunchCost(0, 2 * 8 * 512 * 8)


@pytest.mark.slow
def test_the_cases_compile_with_nvcc(tmp_path):
    try:
        compiler = nvcc.find_nvcc()
    except BoltError as error:
        pytest.skip(f"needs nvcc: {error.message}")
    cases = [cumsum_op(*case) for case in CASES]
    source = tmp_path / "cumsum.cu"
    source.write_text(ck.emit_translation_unit(cases))
    flags = list(nvcc.CompileJob("cumsum", "", "sm80").flags)
    built = subprocess.run([str(compiler), *flags, "-c", "-o", str(tmp_path / "cumsum.o"), str(source)],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0 and "warning" not in built.stderr.lower(), built.stderr[-3000:]
    symbols = subprocess.run(["nm", str(tmp_path / "cumsum.o")], capture_output=True, text=True, check=False).stdout
    for op in cases:
        assert re.search(rf"\bT {ck.kernel_name(op)}$", symbols, re.MULTILINE), ck.kernel_name(op)
