"""fuse-output-cast (boltir/backends/cuda/passes/fuse_output_cast.py): a few-rows GEMM
writes the f32 its only user widened it to. Interpreter equivalence on random inputs (the
fused module skips one rounding to f16, so it is compared within that rounding), what it
leaves alone, the kernel's f32 output (its reasons, its source), the default pipeline's
batch-1 classifier, and a `slow` nvcc compile of an f32-output instance."""

from __future__ import annotations

import pytest

from boltir.backends.cuda.codegen import skinny_gemm_kernels as sk
from boltir.backends.cuda.passes.fuse_output_cast import FuseOutputCastPass
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.dialects import op as ops
from boltir.ir import make_context, parse_module
from boltir.passes import statistics
from tests.passes.equivalence import assert_equivalent
from tests.support.op_modules import tensor
from tests.support.own_kernel_units import assert_unit_compiles


def classifier_text(m: int = 1, n: int = 1000, k: int = 2048, epilogue: str = "bias", element: str = "f16",
                    cast: str = "elementwise", second_user: bool = False) -> str:
    """A GEMM with an N x K weight, then its result widened to f32 (an op.elementwise of one
    extf, or an op.cast)."""
    x, w, b, out, wide = tensor((m, k), element), tensor((n, k), element), tensor((n,), element), tensor((m, n), element), tensor((m, n), "f32")
    if cast == "elementwise":
        widen = (f"  %1 = op.elementwise (%0) {{\n  ^bb0(%v: {element}):\n    %w32 = arith.extf %v : {element} to f32\n"
                 f"    op.yield %w32 : f32\n  }} : ({out}) -> {wide}\n")
    else:
        widen = f"  %1 = op.cast %0 : {out} to {wide}\n"
    results, returned = (f"({wide}, {out})", f"%1, %0 : {wide}, {out}") if second_user else (wide, f"%1 : {wide}")
    return (f"func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {results} {{\n"
            f"  %0 = op.gemm %x, %w bias %b {{layout_b = \"col\", epilogue = #op.epilogue<{epilogue}>}} : ({x}, {w}, {b}) -> {out}\n"
            f"{widen}  func.return {returned}\n}}\n")


def selected_and_fused(text: str, **options):
    module = parse_module(text)
    with statistics.collecting() as collected:
        SelectKernelsPass(arch="sm90", selector="heuristic", **options).apply(make_context(), module)
        FuseOutputCastPass().apply(make_context(), module)
    return module, collected


@pytest.mark.parametrize(("epilogue", "element", "cast"), [
    ("bias", "f16", "elementwise"), ("bias, relu", "f16", "cast"), ("bias, gelu", "bf16", "elementwise")])
def test_the_classifier_writes_f32_and_computes_the_same(epilogue, element, cast, rng):
    text = classifier_text(epilogue=epilogue, element=element, cast=cast)
    module, collected = selected_and_fused(text)
    assert [o.name for o in module.walk() if o.name in ("op.elementwise", "op.cast")] == []
    gemm = next(o for o in module.walk() if isinstance(o, ops.GemmOp))
    assert str(gemm.output.type) == "tensor<1x1000xf32>" and sk.supports(gemm)
    assert collected.get("fuse-output-cast", "output casts fused into skinny_gemm") == 1
    # one rounding to f16 (bf16) fewer: equal within that rounding
    assert_equivalent(parse_module(text), [SelectKernelsPass(arch="sm90", selector="heuristic"), FuseOutputCastPass(),
                                           LowerOpToCutlassPass()], rng, tolerance=1e-3 if element == "f16" else 8e-3)


@pytest.mark.parametrize(("text", "options"), [
    (classifier_text(second_user=True), {}),            # the f16 result is used too
    (classifier_text(m=33), {}),                        # CUTLASS's GEMM (33 rows)
    (classifier_text(), {"small_m": "cutlass"}),        # CUTLASS's GEMM asked for
])
def test_what_it_leaves_alone(text, options, rng):
    module, collected = selected_and_fused(text, **options)
    assert any(o.name in ("op.elementwise", "op.cast") for o in module.walk())
    assert collected.get("fuse-output-cast", "output casts fused into skinny_gemm") == 0
    assert_equivalent(parse_module(text), [SelectKernelsPass(arch="sm90", selector="heuristic", **options),
                                           FuseOutputCastPass()], rng, tolerance=1e-12)


def test_the_kernel_takes_an_f32_output_and_no_other_mix():
    module, _ = selected_and_fused(classifier_text())
    gemm = next(o for o in module.walk() if isinstance(o, ops.GemmOp))
    assert sk.gemm_reason(gemm) is None
    source = sk.emit_instance(gemm).source
    assert "using TO = float;" in source and "output[o] = from_f32<TO>(" in source
    assert "static_cast<TO *>(d)" in source and "using T = __half;" in source
    bf16_out = next(o for o in parse_module(
        "func.func @main(%x: tensor<1x64xf16>, %w: tensor<8x64xf16>) -> tensor<1x8xbf16> {\n"
        "  %0 = op.gemm %x, %w {layout_b = \"col\"} : (tensor<1x64xf16>, tensor<8x64xf16>) -> tensor<1x8xbf16>\n"
        "  func.return %0 : tensor<1x8xbf16>\n}\n").walk() if isinstance(o, ops.GemmOp))
    assert "the kernel writes A's type or f32" in sk.gemm_reason(bf16_out)


def test_a_batch1_model_build_has_no_cast_launch():
    """The default backend passes put the pass between select-kernels and the lowering."""
    from boltir.compiler import backend_passes

    passes = backend_passes("sm90", selector="heuristic")
    assert [p.split("{")[0] for p in passes] == ["fuse-depthwise-pointwise", "select-kernels", "fuse-conv-pool", "fuse-conv-space-to-depth",
                                                    "fuse-output-cast", "lower-op-to-cutlass", "plan-memory"]


@pytest.mark.slow
def test_an_f32_output_instance_compiles_with_nvcc(tmp_path):
    module, _ = selected_and_fused(classifier_text(m=3, n=37, k=72, epilogue="bias, relu"))
    gemm = next(o for o in module.walk() if isinstance(o, ops.GemmOp))
    assert KernelChoice.from_attr(gemm.attributes[KERNEL_ATTR]).family == sk.FAMILY
    assert_unit_compiles(sk, [gemm], tmp_path)
