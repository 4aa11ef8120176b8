"""Our depthwise conv kernel (codegen/depthwise_kernels.py, family "depthwise_direct").

Without a GPU: which convs it takes and why not, the heuristic's tiles (vector, strip,
rows), the choice through select-kernels and lower-op-to-cutlass (the op.conv2d stays, its
whole epilogue fused; a choice it cannot run is one line), the emitted instance (constants,
the CUTLASS conv launcher's ABI, deduplication), the tuner's candidates (ours and
CUTLASS's). The `slow` test compiles a unit of instances with the real nvcc (skipped
without it); the `gpu` test runs them against the interpreter (skipped without a GPU).
"""

from __future__ import annotations

import dataclasses


import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import depthwise_kernels as dk
from boltir.backends.cuda.codegen.host_program import GENERATORS
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import MAX_DIRECT_DEPTHWISE, candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.dialects import op as ops
from boltir.interp import find_entry
from boltir.ir import parse_module
from boltir.tools import bolt_opt
from tests.passes.equivalence import assert_equivalent
from tests.support.own_kernel_units import assert_unit_compiles, selected, the_conv
from tests.support.op_modules import conv_text

F16_TOLERANCE = 2e-2


def depthwise_text(n=2, h=12, w=12, c=32, r=3, stride=1, element="f16", epilogue="bias, clip(0.0, 6.0)", pad=None):
    return conv_text(n, h, w, c, c, r, r, stride=stride, pad=pad, element=element, epilogue=epilogue, depthwise=True)


def marked(text: str, tile: dk.DirectTile) -> ops.Conv2dOp:
    """The module's conv with a depthwise_direct choice of this tile."""
    op = the_conv(parse_module(text))
    op.attributes[KERNEL_ATTR] = KernelChoice(dk.FAMILY, "sm80", tile.as_tile(), (tile.vector,) * 3).to_attr()
    return op


# ------------------------------------------------------------------ the heuristic


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
@pytest.mark.parametrize(("shape", "r", "stride", "element", "tile"), [
    # MobileNetV2 at batch 32: 8 f16 channels, strips of 4 (or 7 where Q is 7 or 14)
    ((32, 112, 112, 96), 3, 2, "f16", (1, 4, 8)),
    ((32, 28, 28, 192), 3, 1, "f16", (1, 4, 8)),
    ((32, 14, 14, 384), 3, 1, "f16", (1, 7, 8)),
    ((32, 7, 7, 960), 3, 1, "bf16", (1, 7, 8)),
    # a big image walks 2 or 4 rows per thread; f32 vectors are 4 channels
    ((64, 224, 224, 64), 3, 1, "f16", (4, 4, 8)),
    ((2, 20, 20, 32), 3, 1, "f32", (1, 4, 4)),
    # big filters and odd channels: narrower vectors
    ((4, 28, 28, 96), 5, 1, "f16", (1, 4, 4)),
    ((4, 28, 28, 96), 7, 1, "f16", (1, 4, 2)),
    ((2, 9, 9, 12), 3, 1, "f16", (1, 3, 4)),
    ((2, 9, 9, 6), 3, 1, "bf16", (1, 3, 2)),
    ((1, 13, 13, 3), 3, 1, "f16", (1, 4, 1)),
])
def test_the_heuristic_picks_our_kernel(arch, shape, r, stride, element, tile):
    n, h, w, c = shape
    module, collected = selected(depthwise_text(n, h, w, c, r, stride, element), arch)
    op = the_conv(module)
    choice = KernelChoice.from_attr(op.attributes[KERNEL_ATTR])
    assert (choice.family, choice.arch) == ("depthwise_direct", "sm80")
    if arch == "sm90" and dk.moved_bytes(op) >= dk.STAGED_MIN_BYTES:
        tile = dataclasses.astuple(dk.staged_tile(op, 132))  # test_an_sm90_build_stages_big_convs
    assert dk.DirectTile.of(choice.tile) == dk.DirectTile(*tile)
    assert choice.alignment == (tile[2],) * 3
    assert dk.supports(op) and not dk.is_fallback(op)
    assert collected.get("lower-op-to-cutlass", "depthwise_direct kernels (op.conv2d kept)") == 1


def test_the_sms_set_how_many_rows_a_thread_walks():
    """A thread walks more rows only while the grid keeps 16 CTAs per multiprocessor:
    56² x 144 at batch 32 is 2 rows on the A100's 108, 1 on the H200's 132."""
    op = the_conv(parse_module(depthwise_text(32, 56, 56, 144)))
    assert dk.row_walk_tile(op, sms=108) == dk.DirectTile(2, 4, 8)
    assert dk.row_walk_tile(op, sms=132) == dk.DirectTile(1, 4, 8)
    assert dk.default_tile(op, sms=108, staged=False) == dk.DirectTile(2, 4, 8)
    big = the_conv(parse_module(depthwise_text(64, 224, 224, 64)))
    assert dk.row_walk_tile(big, sms=132).rows == 4 and dk.row_walk_tile(big, sms=4000).rows == 1


@pytest.mark.parametrize(("shape", "stride", "tile"), [
    # MobileNetV2's four depthwise convs over 32 MB at batch 32: strips of two columns at
    # stride 1, one at stride 2; 8 rows where 4 CTAs a multiprocessor remain; two rows ahead
    ((32, 112, 112, 32), 1, (8, 2, 8, 2)),
    ((32, 112, 112, 96), 2, (8, 1, 8, 2)),
    ((32, 56, 56, 144), 1, (8, 2, 8, 2)),
    ((32, 56, 56, 144), 2, (4, 1, 8, 2)),
])
def test_an_sm90_build_stages_big_convs(shape, stride, tile):
    op = the_conv(parse_module(depthwise_text(*shape, 3, stride)))
    assert dk.moved_bytes(op) >= dk.STAGED_MIN_BYTES
    assert dk.default_tile(op, sms=132) == dk.staged_tile(op, 132) == dk.DirectTile(*tile)
    assert dk.default_tile(op, sms=132, staged=False) == dk.row_walk_tile(op, 132)


def test_under_32_mb_an_sm90_build_keeps_the_row_walk():
    op = the_conv(parse_module(depthwise_text(32, 28, 28, 192)))  # 19 MB
    assert dk.default_tile(op, sms=132) == dk.row_walk_tile(op, 132) == dk.DirectTile(1, 4, 8)


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_depthwise_cutlass_keeps_cutlass(arch):
    module, _ = selected(depthwise_text(c=64), arch, depthwise="cutlass")
    assert [op.name for op in find_entry(module).body.ops][:1] == ["cutlass.depthwise_conv2d_fprop"]


NCHW_DEPTHWISE = """
func.func @main(%x: tensor<1x32x8x8xf16>, %w: tensor<32x1x3x3xf16>) -> tensor<1x32x8x8xf16> {
  %0 = op.conv2d %x, %w {layout = "NCHW", filter_layout = "OIHW", groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x8x8xf16>
  func.return %0 : tensor<1x32x8x8xf16>
}
"""


def test_what_our_kernel_does_not_take_goes_to_cutlass():
    """An NCHW depthwise conv is not ours: the heuristic gives it CUTLASS's choice (which
    lower-op-to-cutlass then leaves, for want of an NCHW template)."""
    op = the_conv(parse_module(NCHW_DEPTHWISE))
    assert dk.conv_reason(op) == "the kernel takes an NHWC input and an OHWI filter"
    assert HeuristicSelector().select(op, "sm90").family != "depthwise_direct"


def test_select_and_lower_compute_the_same_function(rng):
    """The chosen conv keeps its whole epilogue (bias, activation, residual, activation)."""
    text = depthwise_text(2, 9, 11, 16, epilogue="bias, hardswish, residual = add, then relu")
    module = parse_module(text)
    after = assert_equivalent(module, [SelectKernelsPass(arch="sm90"), LowerOpToCutlassPass()], rng, tolerance=F16_TOLERANCE)
    op = the_conv(after)
    assert op.residual is not None and op.epilogue == the_conv(module).epilogue
    assert dk.supports(op)


def test_the_tuner_measures_ours_and_cutlass():
    op = the_conv(parse_module(depthwise_text(32, 56, 56, 144)))
    found = candidates(op, "sm90", sms=132)
    families = [choice.family for choice in found.choices]
    assert families[0] == "depthwise_direct" and "depthwise_conv2d_fprop" in families
    tiles = [dk.DirectTile.of(c.tile) for c in found.choices if c.family == "depthwise_direct"]
    assert len(tiles) == len(set(tiles)) <= MAX_DIRECT_DEPTHWISE and {t.columns for t in tiles} >= {2, 4, 8}
    assert all(dk.tile_reason(op, tile) is None for tile in tiles)


# ------------------------------------------------------------- what is refused


@pytest.mark.parametrize(("text", "tile", "reason"), [
    (depthwise_text(c=32), dk.DirectTile(1, 4, 16), "the vector of 16 channels must be a power of two of at most 16 bytes (8) dividing C = 32"),
    (depthwise_text(c=12), dk.DirectTile(1, 4, 8), "the vector of 8 channels must be a power of two of at most 16 bytes (8) dividing C = 12"),
    (depthwise_text(c=32, r=5), dk.DirectTile(1, 4, 8), "8 channels of 5x5 taps exceed the 128 tap registers of a thread"),
    (depthwise_text(c=32), dk.DirectTile(1, 16, 8), "a strip of 16 columns of 8 channels must be 1 to 16 columns and at most 64 accumulators"),
    (depthwise_text(c=32), dk.DirectTile(0, 4, 8), "a thread walks 1 to 16 rows, not 0"),
])
def test_tiles_it_cannot_run(text, tile, reason):
    assert dk.unsupported_reason(marked(text, tile)) == reason


def test_convs_it_does_not_take():
    plain = the_conv(parse_module(conv_text(1, 8, 8, 16, 32, 3, 3)))
    assert dk.conv_reason(plain) == "not a depthwise conv (1 groups of 16 channels into 32)"
    big = the_conv(parse_module(depthwise_text(c=8, r=13, h=16, w=16)))
    assert dk.conv_reason(big) == "a 13x13 filter has more taps than a thread keeps in registers (128)"
    unmarked = the_conv(parse_module(depthwise_text()))
    assert dk.unsupported_reason(unmarked) == "the op has no depthwise_direct kernel choice"
    assert not dk.supports(unmarked)  # the host program gives it to the next generator
    assert [g for g in GENERATORS if g.supports(unmarked)][0].__name__.endswith("compute_kernels")


def test_a_choice_it_cannot_run_is_one_line(tmp_path, capsys):
    op = marked(depthwise_text(c=12), dk.DirectTile(1, 4, 8))
    path = tmp_path / "bad.mlir"
    path.write_text(str(op.parent_op().parent_op()))
    assert bolt_opt.main([str(path), "-p", "lower-op-to-cutlass"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert "Traceback" not in captured.err and len(lines) == 1
    assert lines[0].endswith("error: bad kernel attribute on op.conv2d: the vector of 8 channels must be a power of two "
                             "of at most 16 bytes (8) dividing C = 12")


def test_a_bad_depthwise_option_is_one_line(tmp_path, capsys):
    path = tmp_path / "dw.mlir"
    path.write_text(depthwise_text())
    assert bolt_opt.main([str(path), "-p", "select-kernels{depthwise=im2col}"]) == 1
    assert capsys.readouterr().err.strip() == "error: depthwise must be one of direct, cutlass; got 'im2col'"


# ---------------------------------------------------------------------- emission


def test_the_instance():
    op = marked(depthwise_text(32, 56, 56, 144), dk.DirectTile(2, 4, 8))
    instance = dk.emit_instance(op)
    assert instance.name == dk.kernel_name(op) and instance.name.startswith("boltir_depthwise_direct_")
    assert instance.key.startswith("depthwise_direct tile=2x4x8 ")
    source = instance.source
    assert "constexpr int N = 32, H = 56, W = 56, C = 144, P = 56, Q = 56, R = 3, S = 3;" in source
    assert "constexpr int V = 8, TW = 4, TH = 2;" in source
    assert "constexpr int CV = C / V, QT = 14, PT = 28;" in source
    assert "constexpr index_t kThreads = 225792;" in source  # 32 images x 28 row pairs x 14 strips x 18 vectors
    assert "using T = __half;" in source and "load<T, V>(bias + c, bias_v);" in source
    assert "load<T, V>(residual + o, residual_v);" not in source
    assert "x = boltir_compute::clip(x, 0.0f, 6.0f);" in source
    assert f"launch(kernel, {-(-225792 // dk.BLOCK_THREADS)}, kBlock, 0, stream, " in source
    assert f"extern \"C\" size_t {instance.name}_workspace_size(" in source
    assert "const int baked[15] = {32, 56, 56, 144, 144, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1};" in source
    arguments = dk.launch_arguments(op)
    assert arguments.operands == (op.input, op.filter, op.bias, None, op.output) and arguments.workspace
    assert arguments.problem == (32, 56, 56, 144, 144, 3, 3, 56, 56, 1, 1, 1, 1, 1, 1)


def test_instances_follow_tile_shapes_and_epilogue():
    text = depthwise_text(2, 12, 12, 32)
    a, b = marked(text, dk.DirectTile(1, 4, 8)), marked(text, dk.DirectTile(1, 4, 8))
    assert dk.kernel_name(a) == dk.kernel_name(b)
    assert dk.kernel_name(marked(text, dk.DirectTile(1, 2, 8))) != dk.kernel_name(a)
    assert dk.kernel_name(marked(depthwise_text(2, 12, 12, 32, stride=2), dk.DirectTile(1, 4, 8))) != dk.kernel_name(a)
    unit = dk.emit_translation_unit([a, b])
    assert unit.count(f"extern \"C\" int {dk.kernel_name(a)}(") == 1
    residual = marked(depthwise_text(epilogue="residual = add, then relu"), dk.DirectTile(1, 4, 8))
    source = dk.emit_instance(residual).source
    assert "if (residual == nullptr) return 2003;" in source and "bias == nullptr" not in source


def test_a_module_unit_holds_only_the_marked_convs():
    module, _ = selected(depthwise_text())
    assert dk.kernel_name(the_conv(module)) in dk.emit_translation_unit(module)


def test_an_empty_output_launches_nothing():
    op = marked(depthwise_text(0, 12, 12, 32), dk.DirectTile(1, 4, 8))
    source = dk.emit_instance(op).source
    assert "return 0;  // an empty result" in source and "<<<" not in source


# ------------------------------------------------------------------- with nvcc


COMPILED = [
    (depthwise_text(4, 28, 28, 144), (1, 4, 8)),
    (depthwise_text(4, 29, 29, 96, stride=2, epilogue="bias, hardswish, residual = add, then relu"), (2, 4, 8)),
    (depthwise_text(2, 14, 14, 24, r=5, element="bf16", epilogue="bias, relu"), (1, 7, 4)),
    (depthwise_text(2, 9, 9, 12, element="f32", epilogue=""), (1, 3, 4)),
    (depthwise_text(1, 13, 13, 3, r=7, pad=3, epilogue="bias, silu"), (1, 4, 1)),
    (depthwise_text(2, 12, 12, 32), (2, 4, 8, 3)),  # staged, a 72 KB ring: past 48 KB it opts in
]


def compiled_ops():
    return [marked(text, dk.DirectTile(*tile)) for text, tile in COMPILED]


@pytest.mark.slow
def test_the_unit_compiles_with_nvcc(tmp_path):
    assert_unit_compiles(dk, compiled_ops(), tmp_path)


@pytest.mark.gpu
def test_on_the_gpu_against_the_interpreter(tmp_path, rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    from boltir.backends.cuda.codegen.generator import CompileJob
    from boltir.backends.cuda.toolchain.kernel_library import KernelLibrary
    from boltir.backends.cuda.toolchain.nvcc import build_shared_library
    from boltir.dtypes import numpy_dtype
    from tests.passes.equivalence import random_inputs, relative_error
    from tests.support.torch_arrays import to_numpy_f32, to_torch

    op_list = compiled_ops()
    library = KernelLibrary(build_shared_library([CompileJob("depthwise", dk.emit_translation_unit(op_list), "sm80")],
                                                 tmp_path / "depthwise.so", progress=False))
    for op in op_list:
        module = op.parent_op().parent_op()
        inputs = random_inputs(module, rng)
        (expected,) = boltir.interp.run(module, inputs)
        arguments = dk.launch_arguments(op)
        names = {arg: f"arg{i}" for i, arg in enumerate(find_entry(module).body.block.args)}
        tensors = [None if v is None else to_torch(inputs[names[v]]) for v in arguments.operands[:-1]]
        output = to_torch(np.full(expected.shape, np.nan, numpy_dtype(op.output.type.element_type)))
        library.launch(op, [None if t is None else t.data_ptr() for t in tensors] + [output.data_ptr()])
        torch.cuda.synchronize()
        error = relative_error(to_numpy_f32(output), expected.astype(np.float32))
        assert error < (1e-4 if "f32" in str(op.output.type) else 1e-2), f"{dk.instance_key(op)}: {error:.2e}"
