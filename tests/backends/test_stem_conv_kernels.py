"""Our conv kernel for few input channels (codegen/stem_conv_kernels.py, family "stem_conv").

Without a GPU: which convs it takes and why not, the heuristic's tiles, the choice through
select-kernels and lower-op-to-cutlass (the op.conv2d stays with its whole epilogue; a
choice it cannot run is one line), the shared-memory layout, the emitted instance, the
tuner's candidates (ours and CUTLASS's), and a numpy replay of the kernel's index maths
(patch, filter, k and pixel offsets) against the interpreter. The `slow` test compiles a
unit with the real nvcc (skipped without it); the `gpu` test runs it against the
interpreter (skipped without a GPU).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import stem_conv_kernels as sk
from boltir.backends.cuda.codegen.host_program import GENERATORS
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import MAX_STEM, candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.dialects import op as ops
from boltir.interp import find_entry
from boltir.ir import parse_module
from boltir.tools import bolt_opt
from tests.passes.equivalence import assert_equivalent
from tests.support.own_kernel_units import mark, assert_unit_compiles, conv_of, selected, the_conv
from tests.support.op_modules import conv_text

F16_TOLERANCE = 2e-2

VGG = {"n": 32, "h": 224, "w": 224, "c": 4, "k": 64, "r": 3, "s": 3}  # VGG-16's first conv, input padded to 4 channels
RESNET = {"n": 32, "h": 115, "w": 115, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0}  # ResNet-50's stem after space-to-depth
MOBILENET = {"n": 32, "h": 113, "w": 113, "c": 16, "k": 32, "r": 2, "s": 2, "pad": 0, "epilogue": "bias, clip(0.0, 6.0)"}


def marked(op: ops.Conv2dOp, tile: sk.StemTile) -> ops.Conv2dOp:
    return mark(op, sk, tile, "sm80")


# ------------------------------------------------------------------ the heuristic


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
@pytest.mark.parametrize(("shape", "tile"), [
    # the three stems at batch 32: 128-pixel row segments (256 at K = 32)
    (VGG, (1, 112, 2)),
    (RESNET, (1, 112, 2)),
    (MOBILENET, (2, 112, 4)),
    # few images: smaller tiles where the grid would not fill the GPU (the H200's 132 SMs
    # want more row segments than the A100's 108)
    ({**VGG, "n": 1}, {"sm80": (1, 112, 2), "sm90": (1, 56, 1)}),
    ({**RESNET, "n": 4}, {"sm80": (1, 112, 2), "sm90": (1, 56, 1)}),
    # ResNet's 7x7/2 stem on 3 channels where space-to-depth does not run; bf16
    ({"n": 32, "h": 224, "w": 224, "c": 3, "k": 64, "r": 7, "s": 7, "stride": 2, "element": "bf16"}, (1, 112, 2)),
])
def test_the_heuristic_picks_our_kernel(arch, shape, tile):
    # the stem rule itself: on sm90 the halo conv's rule comes first and takes ResNet-50's
    # blocked stem at batch 32 (test_halo_conv_kernels), and the streaming conv's window rule
    # MobileNet's (test_stream_conv_kernels), so both are off here
    sm90 = {"narrow_convs": "cutlass", "narrow_windows": "stem"}
    module, collected = selected(conv_text(**shape), arch, **(sm90 if arch == "sm90" else {}))
    op = the_conv(module)
    choice = KernelChoice.from_attr(op.attributes[KERNEL_ATTR])
    assert (choice.family, choice.arch) == ("stem_conv", "sm80")
    assert sk.StemTile.of(choice.tile) == sk.StemTile(*(tile[arch] if isinstance(tile, dict) else tile))
    assert sk.supports(op) and not sk.is_fallback(op) and sk.computes(op)
    assert collected.get("lower-op-to-cutlass", "stem_conv kernels (op.conv2d kept)") == 1


def test_the_sms_set_the_tile_at_batch_1():
    """Tiles halve while the grid has fewer than 4 per multiprocessor: VGG's 448 row
    segments at batch 1 are enough for the A100's 108, not for the H200's 132."""
    op = conv_of(**{**VGG, "n": 1})
    assert sk.default_tile(op, sms=108) == sk.StemTile(1, 112, 2)
    assert sk.default_tile(op, sms=132) == sk.StemTile(1, 56, 1)


@pytest.mark.parametrize(("shape", "family"), [
    ({"n": 2, "h": 14, "w": 14, "c": 32, "k": 64, "r": 3, "s": 3}, "conv2d_fprop"),  # 32 channels: CUTLASS's
    ({"n": 2, "h": 14, "w": 14, "c": 16, "k": 64, "r": 1, "s": 1, "pad": 0}, "conv2d_fprop"),  # 1x1: a GEMM, the pointwise rules'
    ({"n": 2, "h": 14, "w": 14, "c": 4, "k": 64, "r": 3, "s": 3, "element": "f32"}, "conv2d_fprop"),  # f32
    ({"n": 2, "h": 14, "w": 14, "c": 4, "k": 20, "r": 3, "s": 3}, "conv2d_fprop"),  # K not a multiple of 8
    ({"n": 2, "h": 14, "w": 14, "c": 4, "k": 256, "r": 3, "s": 3}, "conv2d_fprop"),  # K over 128
    ({**RESNET, "n": 1}, "conv2d_fprop"),  # a 256-long reduction at one image: CUTLASS's was 1.9x faster
    ({"n": 2, "h": 14, "w": 14, "c": 16, "k": 64, "r": 3, "s": 3}, "conv2d_fprop"),  # 144-long, 392 pixels
])
def test_what_our_kernel_does_not_take_goes_to_cutlass(shape, family):
    op = conv_of(**shape)
    assert HeuristicSelector().select(op, "sm80").family == family


@pytest.mark.parametrize(("shape", "reason"), [
    ({"n": 2, "h": 14, "w": 14, "c": 32, "k": 64, "r": 3, "s": 3}, "32 input channels: the kernel takes at most 16"),
    ({"n": 2, "h": 14, "w": 14, "c": 4, "k": 20, "r": 3, "s": 3}, "20 output channels: the kernel takes a multiple of 8 up to 128"),
    ({"n": 2, "h": 14, "w": 14, "c": 4, "k": 64, "r": 3, "s": 3, "element": "f32"}, "the input has element type f32; the kernel takes f16, bf16"),
    ({"n": 2, "h": 14, "w": 14, "c": 16, "k": 128, "r": 9, "s": 9}, "the filter takes 333824 bytes of shared memory, more than 81920"),
    ({"n": 2, "h": 14, "w": 14, "c": 4, "k": 4, "r": 3, "s": 3, "depthwise": True}, "a grouped conv (4 groups)"),
])
def test_convs_it_does_not_take(shape, reason):
    assert sk.conv_reason(conv_of(**shape)) == reason


def test_cutlass_keeps_cutlass_for_comparison():
    module, _ = selected(conv_text(**{**VGG, "n": 2, "h": 32, "w": 32}), "sm90", few_channels="cutlass")
    assert [op.name for op in find_entry(module).body.ops][:1] == ["cutlass.conv2d_fprop"]


def test_select_and_lower_compute_the_same_function(rng):
    """The chosen conv keeps its whole epilogue (bias, activation, residual, activation)."""
    text = conv_text(2, 9, 11, 4, 16, 3, 3, stride=2, epilogue="bias, hardswish, residual = add, then relu")
    module = parse_module(text)
    after = assert_equivalent(module, [SelectKernelsPass(arch="sm90"), LowerOpToCutlassPass()], rng, tolerance=F16_TOLERANCE)
    op = the_conv(after)
    assert op.residual is not None and op.epilogue == the_conv(module).epilogue and sk.supports(op)


def test_the_tuner_measures_ours_and_cutlass():
    op = conv_of(**RESNET)
    found = candidates(op, "sm90", sms=132, halo_mode=None)  # the halo conv races too by default: test_halo_conv_kernels
    families = [choice.family for choice in found.choices]
    assert families[0] == "stem_conv" and "conv2d_fprop" in families
    tiles = [sk.StemTile.of(c.tile) for c in found.choices if c.family == "stem_conv"]
    assert tiles[0] == sk.StemTile(1, 112, 2) and len(tiles) == len(set(tiles)) <= MAX_STEM and len(tiles) > 1
    assert all(sk.tile_reason(op, tile) is None for tile in tiles)


# ------------------------------------------------------------- what is refused


@pytest.mark.parametrize(("tile", "reason"), [
    (sk.StemTile(1, 112, 4), "4 fragments per warp of 64 channels: 1, 2 or 4, at most 64 accumulators a thread"),
    (sk.StemTile(1, 112, 1), "a 1x112 tile does not fit 4 warps of 1 fragments of 16 pixels"),
    (sk.StemTile(0, 16, 1), "a 0x16 tile does not fit 4 warps of 1 fragments of 16 pixels"),
])
def test_tiles_it_cannot_run(tile, reason):
    assert sk.tile_reason(conv_of(**VGG), tile) == reason


def test_a_choice_it_cannot_run_is_one_line(tmp_path, capsys):
    text = conv_text(1, 8, 8, 4, 64, 3, 3).replace(
        "epilogue = #op.epilogue<bias, relu>}",
        'epilogue = #op.epilogue<bias, relu>, kernel = {family = "stem_conv", arch = "sm80", threadblock = array<i64: 1, 8, 4>, '
        "warp = array<i64: 1, 8, 4>, instruction = array<i64: 1, 1, 1>, stages = 2 : i64, alignment = array<i64: 8, 8, 8>, "
        "swizzle = 1 : i64, split_k = 1 : i64}}")
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    assert bolt_opt.main([str(path), "-p", "lower-op-to-cutlass"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad kernel attribute on op.conv2d: 4 fragments per warp of 64 channels" in err


def test_a_bad_few_channels_option_is_one_line(tmp_path, capsys):
    path = tmp_path / "conv.mlir"
    path.write_text(conv_text(1, 8, 8, 4, 64, 3, 3))
    assert bolt_opt.main([str(path), "-p", "select-kernels{few_channels=im2col}"]) == 1
    assert capsys.readouterr().err == "error: few_channels must be one of stem, cutlass; got 'im2col'\n"


# ------------------------------------------------------------------- the instance


def test_the_shared_layout_spares_bank_conflicts():
    """ResNet's 16 channels take 24-half pixels (12 words: 8 pixels hit distinct banks);
    VGG's 4 channels stay 4; filter rows are K + 8 halves."""
    resnet, vgg = conv_of(**RESNET), conv_of(**VGG)
    layout = sk.shared_layout(resnet, sk.StemTile(1, 112, 2))
    assert (layout.pixel, layout.filter) == (24, 256 + 8) and layout.row % 8 == 0 and layout.row >= 115 * 24
    layout = sk.shared_layout(vgg, sk.StemTile(1, 112, 2))
    assert (layout.pixel, layout.filter) == (4, 48 + 8) and layout.row >= 114 * 4
    assert sk.gemm_k(vgg) == 48 and sk.padded_channels(3) == 4 and sk.padded_channels(12) == 16


def test_the_instance():
    op = marked(conv_of(**VGG), sk.StemTile(1, 112, 2))
    assert next(g for g in GENERATORS if g.supports(op)) is sk  # before the plain fallbacks
    instance = sk.emit_instance(op)
    source = instance.source
    assert instance.family == "stem_conv" and instance.name == sk.kernel_name(op)
    for constant in ("C = 4", "K = 64", "R = 3", "S = 3", "P = 224", "Q = 224", "CP = 4", "TP = 1, TQ = 112", "WM = 2",
                     "PS = 4", "BS = 56", "VEC = 4", "B_IN_REGISTERS = true"):
        assert constant in source, constant
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in source and "cp.async" in source
    assert f'extern "C" int {instance.name}(const void *input, const void *filter, const void *bias' in source
    assert "const int baked[15] = {32, 224, 224, 4, 64, 3, 3, 224, 224, 1, 1, 1, 1, 1, 1};" in source
    arguments = sk.launch_arguments(op)
    assert arguments.operands == (op.input, op.filter, op.bias, None, op.output) and arguments.workspace


def test_instances_follow_tile_shapes_element_and_epilogue():
    names = set()
    for shape, tile in [(VGG, (1, 112, 2)), (VGG, (1, 64, 1)), ({**VGG, "element": "bf16"}, (1, 112, 2)),
                        ({**VGG, "epilogue": "bias, silu"}, (1, 112, 2)), (RESNET, (1, 112, 2))]:
        names.add(sk.kernel_name(marked(conv_of(**shape), sk.StemTile(*tile))))
    assert len(names) == 5
    bf16 = sk.emit_instance(marked(conv_of(**{**VGG, "element": "bf16"}), sk.StemTile(1, 112, 2))).source
    assert "f32.bf16.bf16.f32" in bf16 and "using T = __nv_bfloat16" in bf16


def test_a_module_unit_holds_only_the_marked_convs():
    module, _ = selected(conv_text(2, 16, 16, 4, 64, 3, 3))
    unit = sk.emit_translation_unit(module)
    assert unit.count('extern "C" int boltir_stem_conv_') == 1


# ------------------------------------------------ the kernel's index maths in numpy


def replay(op: ops.Conv2dOp, tile: sk.StemTile, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The products the kernel forms (before the epilogue), with its patch and filter
    layouts and its k and pixel offsets, in float64: what the template does, in numpy."""
    context = sk._context(op, tile)
    n, h, w, c, k, r, s, p, q = (context[key] for key in ("n", "h", "w", "c", "k", "r", "s", "p", "q"))
    cp, ps, rs, bs = context["cp"], context["pixel_stride"], context["row_stride"], context["filter_stride"]
    steps, fragments = sk.gemm_k(op) // 16, tile.fragments
    patch_rows, patch_columns = sk.patch_extent(op, tile)
    filter_s = np.zeros((k, bs))
    for tap, channel in itertools.product(range(r * s), range(c)):
        filter_s[:, tap * cp + channel] = weight[:, tap // s, tap % s, channel]

    def k_offset(kk: int) -> int:
        tap = kk // cp
        return (tap // s) * context["dh"] * rs + (tap % s) * context["dw"] * ps + kk % cp if tap < r * s else -1

    out = np.full((n, p, q, k), np.nan)
    tiles_q, tiles_p = -(-q // tile.columns), -(-p // tile.rows)
    for index in range(n * tiles_p * tiles_q):
        q0, p0, image = (index % tiles_q) * tile.columns, (index // tiles_q % tiles_p) * tile.rows, index // (tiles_q * tiles_p)
        patch = np.zeros(patch_rows * rs)
        h0, w0 = p0 * context["sh"] - context["pad_h"], q0 * context["sw"] - context["pad_w"]
        for row, column in itertools.product(range(patch_rows), range(patch_columns)):
            if 0 <= h0 + row < h and 0 <= w0 + column < w:
                patch[row * rs + column * ps:][:c] = x[image, h0 + row, w0 + column]
        for m in range(fragments * 16):
            base = (m // tile.columns) * context["sh"] * rs + (m % tile.columns) * context["sw"] * ps if m < tile.rows * tile.columns else 0
            a = np.array([patch[base + k_offset(kk - kk % 2) + kk % 2] if k_offset(kk - kk % 2) >= 0 else 0.0
                          for kk in range(steps * 16)])
            pp, qq = p0 + m // tile.columns, q0 + m % tile.columns
            if m < tile.rows * tile.columns and pp < p and qq < q:
                out[image, pp, qq] = a @ filter_s[:, :steps * 16].T
    return out


@pytest.mark.parametrize(("shape", "tile"), [
    ({"n": 2, "h": 12, "w": 13, "c": 4, "k": 16, "r": 3, "s": 3}, None),
    ({"n": 1, "h": 15, "w": 15, "c": 16, "k": 32, "r": 4, "s": 4, "pad": 0}, (3, 7, 2)),
    ({"n": 2, "h": 11, "w": 9, "c": 3, "k": 8, "r": 7, "s": 7, "stride": 2}, (1, 5, 1)),
    ({"n": 1, "h": 9, "w": 10, "c": 5, "k": 16, "r": 5, "s": 5, "stride": 2, "pads": (2, 1, 0, 2)}, None),
    ({"n": 1, "h": 13, "w": 11, "c": 1, "k": 24, "r": 3, "s": 3, "dilation": 2, "pad": 2}, None),
    ({"n": 1, "h": 8, "w": 30, "c": 12, "k": 64, "r": 2, "s": 2, "pad": 0}, (1, 16, 1)),
])
def test_the_kernels_index_maths_match_the_interpreter(rng, shape, tile):
    op = conv_of(**shape, epilogue="none")
    tile = sk.StemTile(*tile) if tile else sk.default_tile(op, sms=132)
    assert sk.tile_reason(marked(op, tile), tile) is None
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float16)
    weight = rng.standard_normal(op.filter.type.get_shape()).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight})
    got = replay(op, tile, x.astype(np.float64), weight.astype(np.float64))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, expected.astype(np.float64), rtol=1e-2, atol=2e-2)


# ------------------------------------------------------------------- with nvcc


def compiled_ops() -> list[ops.Conv2dOp]:
    """The three stems, a bf16 7x7/2 on 3 channels with a residual, and batch 1."""
    shapes = [VGG, RESNET, MOBILENET, {**RESNET, "n": 1},
              {"n": 2, "h": 17, "w": 19, "c": 3, "k": 16, "r": 7, "s": 7, "stride": 2, "element": "bf16",
                   "epilogue": "bias, relu, residual = add, then relu"}]
    return [marked(conv_of(**shape), sk.default_tile(conv_of(**shape), sms=132)) for shape in shapes]


@pytest.mark.slow
def test_the_unit_compiles_with_nvcc(tmp_path):
    assert_unit_compiles(sk, compiled_ops(), tmp_path)