"""Our wgmma conv for 64 input channels (codegen/halo_conv_kernels.py, family "halo_conv").

Without a GPU: which convs it takes and why not, its tiles and shared memory, the heuristic's
rule (`narrow_convs=halo`; off by default), the choice through select-kernels and
lower-op-to-cutlass, and a numpy replay of the kernel's addressing against the interpreter:
its copies of the filter and of each tile's patch into 128-byte-swizzled shared memory, the
wgmma descriptors' windows as the hardware reads a K-major 128-byte-swizzled operand (rows
128 bytes apart, 8-row groups 1024 apart, 16-byte chunks XORed with address bits 7..9), the
accumulator fragment layout, the staged row and its 16-byte stores. Breaking the swizzle on
either side makes it fail. The `slow` test compiles units with the real nvcc for sm_90a.
bench/check_halo_conv.py runs the kernel on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import halo_conv_kernels as hc
from boltir.backends.cuda.codegen import tiled_families
from boltir.backends.cuda.codegen.host_program import GENERATORS, build_program
from boltir.backends.cuda.passes.select_kernels import make_selector
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.tune.tuner import lower_alone, single_op_module
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector, halo_conv_problem
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.interp import find_entry
from boltir.ir import make_context
from boltir.passes.plan_memory import PlanMemoryPass
from tests.support.op_modules import conv_text
from tests.support.own_kernel_units import mark, SM90A, assert_unit_compiles, conv_of, selected, the_conv

VGG_224 = {"n": 32, "h": 224, "w": 224, "c": 64, "k": 64, "r": 3, "s": 3}
VGG_112 = {"n": 32, "h": 112, "w": 112, "c": 64, "k": 128, "r": 3, "s": 3}
RESNET_56 = {"n": 32, "h": 56, "w": 56, "c": 64, "k": 64, "r": 3, "s": 3}


def marked(op: ops.Conv2dOp, tile: hc.HaloTile) -> ops.Conv2dOp:
    return mark(op, hc, tile, "sm90")


# ------------------------------------------------------------- what it takes


@pytest.mark.parametrize(("shape", "reason"), [
    ({**VGG_224, "c": 128}, "128 input channels: the kernel takes a multiple of 8 up to 64"),
    ({**VGG_224, "c": 4}, "4 input channels"),
    ({**VGG_224, "k": 100}, "100 output channels: the kernel takes a multiple of 8"),
    ({**VGG_224, "stride": 3}, "stride [3, 3]: the kernel takes 1 or 2 (both axes alike)"),
    ({**VGG_224, "dilation": 2, "pad": 2}, "a dilated conv"),
    ({**VGG_224, "r": 9, "s": 9}, "a 9x9 window"),
    ({**VGG_224, "element": "f32"}, "f32"),
])
def test_what_the_kernel_refuses_says_why(shape, reason):
    assert reason in hc.conv_reason(conv_of(**shape))


@pytest.mark.parametrize(("shape", "general"), [
    (VGG_224, False), ({**VGG_224, "c": 16}, False), ({**VGG_224, "k": 128}, False),
    ({**VGG_224, "stride": 2}, True), ({**VGG_224, "c": 48}, True), ({**VGG_224, "k": 96}, True),
])
def test_the_general_form_is_for_stride_2_padded_channels_and_partial_blocks(shape, general):
    """Its instances only take the general template paths: every other unit's source, and
    its compiled object, stays as it was."""
    op = conv_of(**shape)
    assert hc.conv_reason(op) is None and hc.general(op) == general
    source = hc.emit_translation_unit([marked(op, hc.default_tile(op))])
    assert ("constexpr int CIN = " in source) == general


def test_the_rule_gives_the_general_form_repvgg_a0_s_48_channel_convs():
    """RepVGG-A0's three 48-channel 3x3s at batch 32 (faster than CUTLASS's choice on the
    GPU): their default tiles with a ring of three patches that arrive by TMA (1.07-1.36x
    faster alone than every thread's cp.async on the H100); with halo_loads=cp_async the
    3x3/2 at 112² takes two rows in mode 2 (its default one row leaves a warpgroup a
    multiprocessor), the others a ring of three patches; at batch 1 too (faster than
    CUTLASS there as well): the 3x3/2 keeps one row (0.2 waves), and the 56² convs take the
    form although they are fewer tiles than HALO_MIN_TILES, from which 33-63 channels are
    exempt."""
    from boltir.backends.cuda.select import heuristic

    op = conv_of(n=32, h=112, w=112, c=48, k=48, r=3, s=3, stride=2)
    assert hc.conv_reason(op) is None
    assert hc.default_tile(op) == hc.HaloTile(56, 1, 4)  # two rows of a stride-2 patch and the filter take 233 KB
    assert heuristic.halo_conv_problem(op, 132) == hc.HaloTile(56, 1, 4, 3, True)
    assert heuristic.halo_conv_problem(op, 132, loads="cp_async") == hc.HaloTile(56, 2, 2)
    assert heuristic.halo_conv_problem(conv_of(n=1, h=112, w=112, c=48, k=48, r=3, s=3, stride=2), 132,
                                       loads="cp_async") == hc.HaloTile(56, 1, 4, 3)
    assert heuristic.halo_conv_problem(conv_of(n=1, h=112, w=112, c=48, k=48, r=3, s=3, stride=2), 132) == \
        hc.HaloTile(56, 1, 4, 3, True)
    assert HeuristicSelector(sms=132).select(op, "sm90").family == hc.FAMILY
    assert heuristic.halo_conv_problem(op, 132, general=False) is None
    assert HeuristicSelector(sms=132, halo_general=False).select(op, "sm90").family == "conv2d_fprop"
    assert hc.patch_extent(op, hc.HaloTile(56, 1, 4)) == (3, 2, 57)
    for shape, tile in (({"h": 56, "w": 56, "c": 48, "k": 48}, hc.HaloTile(56, 2, 4, 3)),
                        ({"h": 56, "w": 56, "c": 48, "k": 96, "stride": 2}, hc.HaloTile(32, 2, 4, 3))):
        by_tma = hc.HaloTile(tile.columns, tile.rows, tile.mode, tile.patches, True)
        for n in (32, 1):
            assert heuristic.halo_conv_problem(conv_of(n=n, r=3, s=3, **shape), 132) == by_tma
            assert heuristic.halo_conv_problem(conv_of(n=n, r=3, s=3, **shape), 132, loads="cp_async") == tile
    # the aligned convs keep cp.async under the default (their TMA form is not timed yet)
    assert not heuristic.halo_conv_problem(conv_of(**VGG_224), 132).tma
    assert heuristic.halo_conv_problem(conv_of(**VGG_224), 132, loads="tma").tma
    # ResNet-50's 56² 3x3 on 64 channels at batch 1 (0.21 tiles a multiprocessor) keeps CUTLASS
    assert heuristic.halo_conv_problem(conv_of(n=1, h=56, w=56, c=64, k=64, r=3, s=3), 132) is None
    assert heuristic.halo_conv_problem(conv_of(n=1, h=56, w=56, c=24, k=48, r=3, s=3), 132) is None
    # a general conv on 16, 32 or 64 channels keeps the default tile (MobileNetV2 b1's blocked stem)
    stem = conv_of(n=1, h=113, w=113, c=16, k=32, r=2, s=2, pad=0)
    assert hc.general(stem) and heuristic.halo_conv_problem(stem, 132) == hc.default_tile(stem)


RESNET_STEM = {"n": 32, "h": 115, "w": 115, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0}  # after space-to-depth
REPVGG_S2 = {"n": 32, "h": 112, "w": 112, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2}  # RepVGG-A0's first stage


def test_the_kernel_takes_vgg_and_resnet_stage_one_convs_and_the_blocked_stem():
    for shape in (VGG_224, VGG_112, RESNET_56, RESNET_STEM, {**RESNET_56, "c": 32},
                  {**VGG_224, "element": "bf16", "epilogue": "bias, relu, residual = add"}):
        assert hc.conv_reason(conv_of(**shape)) is None


@pytest.mark.parametrize(("shape", "tile"), [
    (VGG_224, (112, 2)),   # a 224-wide row: two tiles of 112
    (VGG_112, (112, 2)),
    (RESNET_56, (56, 2)),
    ({**RESNET_56, "w": 28, "h": 28}, (32, 2)),  # 28 wide: 32 columns, 4 of them padding
    (RESNET_STEM, (112, 2)),
])
def test_the_default_tile_pads_the_row_least(shape, tile):
    op = conv_of(**shape)
    assert hc.default_tile(op) == hc.HaloTile(*tile, mode=hc.DEFAULT_MODE)
    assert hc.default_tile(op, 1) == hc.HaloTile(*tile)
    assert hc.tile_reason(op, hc.default_tile(op)) is None


def test_shared_memory_counts_filter_two_patches_staging_bias_and_slack():
    op = conv_of(**VGG_224)
    # 9 taps x 8 KiB; 2 x (4 x 114 pixels x 128 B = 57 KiB); 2 rows x 112 x 144 B; bias; 1 KiB slack
    assert hc.shared_bytes(op, hc.HaloTile(112, 2)) == 9 * 8192 + 2 * 58368 + 2 * 112 * 144 + 256 + 1024
    assert hc.shared_bytes(op, hc.HaloTile(112, 2)) <= hc.SHARED_LIMIT
    # the blocked stem: 16 taps x 64 x 32 B; 2 x (5 x 115 x 32 B, rounded to 18 KiB)
    stem = conv_of(**RESNET_STEM)
    assert hc.shared_bytes(stem, hc.HaloTile(112, 2)) == 16 * 2048 + 2 * 18432 + 2 * 112 * 144 + 256 + 1024


@pytest.mark.parametrize(("tile", "reason"), [
    ((112, 5), "5 rows a tile"),
    ((112, 3), "270848 bytes of shared memory"),  # three rows at 112 columns: patches of 5 x 114 pixels
    ((56, 4, 2), "4 warpgroups leave 128 registers a thread; the tile needs about 224"),  # the filter's 144
    ((56, 3, 3), "mode 3 with 3 warpgroups"),
    ((100, 2), "100 columns a tile"),
    ((136, 2), "136 columns a tile"),
    ((112, 2, 7), "mode 7"),
])
def test_tiles_it_cannot_run_say_why(tile, reason):
    assert reason in hc.tile_reason(conv_of(**VGG_224), hc.HaloTile(*tile))


def test_three_and_four_rows_at_half_the_columns():
    """More warps a multiprocessor: four warpgroups of 56 columns fit VGG-16's 224² conv in
    193 KiB (9 taps x 8 KiB; 2 x (6 x 58 pixels x 128 B, rounded to 44 KiB); 4 x 56 x 144 B),
    in the 128 registers a thread that 512 threads leave (28 accumulators)."""
    op = conv_of(**VGG_224)
    assert hc.tile_reason(op, hc.HaloTile(56, 4)) is None and hc.tile_reason(op, hc.HaloTile(56, 3)) is None
    assert hc.shared_bytes(op, hc.HaloTile(56, 4)) == 9 * 8192 + 2 * 45056 + 4 * 56 * 144 + 256 + 1024
    assert hc.thread_registers(op, hc.HaloTile(56, 4)) == 28 + hc.BASE_REGISTERS
    assert hc.tiles(op, hc.HaloTile(56, 4)) == 32 * 56 * 4  # 224 rows in fours, 224 columns in 56s


@pytest.mark.parametrize(("shape", "tile", "ctas"), [
    ({**VGG_224, "c": 16}, (112, 2), 2),  # 108 registers of the 128 two CTAs of 256 threads leave
    ({**VGG_224, "c": 16}, (112, 3), 1),  # 108 of 80 (two CTAs of 384): ptxas refused it, so one CTA
    ({**VGG_224, "c": 16}, (56, 3), 2),   # 80 of 80
    (RESNET_STEM, (112, 4), 1),
    (VGG_224, (112, 2), 1),               # 2 x 8 KiB x 9 taps and its patches: past 113 KiB
    ({**VGG_224, "c": 16}, (112, 2, 2), 1),  # the filter in registers
    ({**VGG_224, "c": 16}, (112, 2, 3), 1),  # two accumulator sets
])
def test_two_ctas_a_multiprocessor_only_where_their_registers_and_shared_memory_fit(shape, tile, ctas):
    op = conv_of(**shape)
    assert hc.tile_reason(op, hc.HaloTile(*tile)) is None
    assert hc.ctas_per_multiprocessor(op, hc.HaloTile(*tile)) == ctas
    assert f"__launch_bounds__(kThreads, {ctas}) kernel(" in hc.emit_instance(marked(op, hc.HaloTile(*tile))).source


def test_the_bench_and_the_tuner_take_the_same_more_warps_tiles():
    """One rule (`more_warps_tiles`): the default columns where they fit, else half; whole
    pooled rows for a conv a pool joins. The tuner's candidates and check_halo_conv's timed
    cases both take it."""
    from bench.check_halo_conv import more_warps, pooled_text

    op = conv_of(**VGG_224)
    assert hc.more_warps_tiles(op, mode=1) == [hc.HaloTile(56, 3), hc.HaloTile(56, 4)]  # 112 columns: 270848 bytes
    assert hc.more_warps_tiles(op) == [hc.HaloTile(56, 3, 4), hc.HaloTile(56, 4, 4)]  # the default mode's
    assert hc.more_warps_tiles(op, pooled_rows=True, mode=1) == [hc.HaloTile(56, 4)]
    assert hc.more_warps_tiles(conv_of(**RESNET_STEM), mode=1) == [hc.HaloTile(112, 3), hc.HaloTile(112, 4)]
    found = candidates(op, "sm90", sms=132, halo_mode=1)
    tiles = [hc.HaloTile.of(c.tile) for c in found.choices if c.family == "halo_conv"]
    assert set(hc.more_warps_tiles(op, mode=1)) <= set(tiles) and hc.HaloTile(56, 2) in tiles
    tiles = [hc.HaloTile.of(c.tile) for c in candidates(op, "sm90", sms=132).choices if c.family == "halo_conv"]
    assert tiles[0] == hc.HaloTile(112, 2, 4) and set(hc.more_warps_tiles(op)) <= set(tiles)
    text = pooled_text(32, 224, 224, 64, 64)
    assert [case.label.split()[-2:] for case in more_warps("pooled", text, pooled=True)] == [["56x4", "m1"], ["56x4", "m4"]]


def test_a_pooled_tile_is_whole_pooled_rows():
    from bench.check_halo_conv import pooled_text
    from boltir.backends.cuda.passes.fuse_conv_pool import FuseConvPoolPass
    from boltir.ir import make_context, parse_module
    from tests.support.own_kernel_units import mark, the_conv

    for rows, fused in ((4, True), (3, False), (2, True), (1, False)):
        module = parse_module(pooled_text(2, 16, 16, 64, 64))
        mark(the_conv(module), hc, hc.HaloTile(8, rows), "sm90")
        FuseConvPoolPass().apply(make_context(), module)
        pooled = [op for op in module.walk() if isinstance(op, hc.ops.Conv2dMaxPoolOp)]
        assert bool(pooled) == fused, rows
        if pooled:
            assert hc.tile_reason(pooled[0], hc.HaloTile(8, rows)) is None
            assert "multiple of 2 rows" in hc.tile_reason(pooled[0], hc.HaloTile(8, 3))


def test_the_filter_in_registers_takes_at_most_a_3x3_on_64_channels():
    assert hc.tile_reason(conv_of(**VGG_224), hc.HaloTile(112, 2, 2)) is None  # 144 registers
    assert hc.tile_reason(conv_of(**RESNET_STEM), hc.HaloTile(112, 2, 2)) is None  # 64
    assert "takes 400 a thread" in hc.tile_reason(conv_of(**{**VGG_224, "r": 5, "s": 5, "pad": 2}), hc.HaloTile(112, 2, 2))
    # no filter in shared memory: 2 patches, the staged rows, the bias and the slack
    assert hc.shared_bytes(conv_of(**VGG_224), hc.HaloTile(112, 2, 2)) == 2 * 58368 + 2 * 112 * 144 + 256 + 1024


def test_the_default_tile_takes_the_mode_asked_or_its_shared_memory_twin():
    assert hc.default_tile(conv_of(**VGG_224), 2) == hc.HaloTile(112, 2, 2)
    four = conv_of(**{**RESNET_56, "r": 4, "s": 4, "pad": 1})  # 256 filter registers: mode 2 -> 1
    assert hc.default_tile(four, 2).mode == 1 and hc.tile_reason(four, hc.default_tile(four, 2)) is None


def test_halo_mode_reaches_the_choice():
    module, _ = selected(conv_text(**VGG_224), narrow_convs="halo", halo_mode=2)
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 2)
    module, _ = selected(conv_text(**VGG_224), halo_mode=3)  # narrow_convs=halo is the default
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 3)
    module, _ = selected(conv_text(**VGG_224), halo_mode=4)
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 4)
    module, _ = selected(conv_text(**VGG_224), halo_mode=5)  # the filter in registers, stmatrix stores
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 5)
    with pytest.raises(BoltError, match="halo_mode must be one of 1, 2, 3, 4, 5; got 6"):
        make_selector("heuristic", narrow_convs="halo", halo_mode=6)


def test_halo_loads_tma_reaches_the_choice_and_a_bad_value_is_one_line():
    module, _ = selected(conv_text(**VGG_224), halo_loads="tma")
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 4, 2, True)
    module, _ = selected(conv_text(**REPVGG_S2), halo_loads="tma", halo_mode=5)  # two rows fit, no third patch
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(56, 2, 5, 2, True)
    module, _ = selected(conv_text(**REPVGG_S2), halo_loads="cp_async")
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(56, 2, 2)
    module, _ = selected(conv_text(**VGG_224))  # the default: every thread's cp.async
    assert not hc.marked_tile(the_conv(module)).tma
    with pytest.raises(BoltError, match="halo_loads must be one of auto, cp_async, tma; got 'bulk'"):
        make_selector("heuristic", halo_loads="bulk")


def test_a_tma_tile_carries_its_flag_in_the_third_integer():
    tile = hc.HaloTile(56, 2, 2, 3, True)
    assert tile.numbers() == (56, 2, 112) and hc.HaloTile.decode(*tile.numbers()) == tile
    assert hc.HaloTile.decode(56, 2, 14) == hc.HaloTile(56, 2, 4, 3)  # older choices keep their meaning
    assert tile.describe() == "56x2m2p3t" and hc.HaloTile(112, 2, 5).describe() == "112x2m5"
    assert hc.HaloTile(112, 2, 5).filter_in_registers and hc.HaloTile(112, 2, 5).matrix_stores


def test_what_tma_tiles_refuse_and_the_planes_they_lay_out():
    op = conv_of(**REPVGG_S2)
    # each plane's box from a 1024-byte boundary: 5 rows x 57 pixels x 128 bytes = 36480 -> 36864
    assert hc.plane_bytes(op, hc.HaloTile(56, 2, 2, 2, True)) == 36864
    assert hc.patch_bytes(op, hc.HaloTile(56, 2, 2, 2, True)) == 2 * 36864
    assert hc.plane_bytes(op, hc.HaloTile(56, 2, 2)) == 0
    # and an mbarrier a patch buffer
    assert (hc.shared_bytes(op, hc.HaloTile(56, 2, 2, 3, True)) - hc.shared_bytes(op, hc.HaloTile(56, 2, 2, 3))
            == 3 * hc.BARRIER_BYTES + 3 * (hc.patch_bytes(op, hc.HaloTile(56, 2, 2, 3, True)) - hc.patch_bytes(op, hc.HaloTile(56, 2, 2, 3))))
    wide = conv_of(**{**REPVGG_S2, "h": 300, "w": 300, "c": 16})
    assert "a TMA box takes at most 256" in hc.tile_reason(wide, hc.HaloTile(128, 1, 4, 2, True))
    assert "TMA" not in (hc.tile_reason(wide, hc.HaloTile(128, 1, 4)) or "")


def test_tma_units_issue_boxes_and_the_others_stay_as_they_were():
    op = conv_of(**REPVGG_S2)
    tma = hc.emit_translation_unit([marked(op, hc.HaloTile(56, 2, 5, 2, True))])
    assert "cp.async.bulk.tensor.4d" in tma and "call_cuTensorMapEncodeTiled" in tma and "mbarrier.try_wait.parity" in tma
    plain = hc.emit_translation_unit([marked(op, hc.HaloTile(56, 2, 2))])
    assert "mbarrier" not in plain and "CUtensorMap" not in plain and "cuda_host_adapter" not in plain


def test_a_large_window_runs_out_of_shared_memory():
    op = conv_of(**{**VGG_224, "r": 7, "s": 7, "pad": 3})
    assert "bytes of shared memory" in hc.tile_reason(op, hc.HaloTile(128, 2))


# ------------------------------------------------------------------ the heuristic


def test_narrow_convs_halo_gives_the_kernel_vggs_and_resnets_convs():
    for shape in (VGG_224, VGG_112, RESNET_56, RESNET_STEM):  # the stem before the stem kernel's rule
        module, collected = selected(conv_text(**shape), narrow_convs="halo")
        op = the_conv(module)
        choice = KernelChoice.from_attr(op.attributes[KERNEL_ATTR])
        assert (choice.family, choice.arch) == ("halo_conv", "sm90")
        assert hc.computes(op) and hc.marked_tile(op) == hc.default_tile(op)
        assert collected.get("lower-op-to-cutlass", "halo_conv kernels (op.conv2d kept)") == 1


def test_the_halo_conv_is_the_default_and_narrow_convs_cutlass_keeps_cutlass():
    module, _ = selected(conv_text(**VGG_224))
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 4)  # stmatrix stores, the default mode
    module, _ = selected(conv_text(**VGG_224), halo_mode=1)
    assert hc.marked_tile(the_conv(module)) == hc.HaloTile(112, 2, 1)
    assert HeuristicSelector().select(conv_of(**VGG_224), "sm90").family == "halo_conv"
    module, _ = selected(conv_text(**VGG_224), narrow_convs="cutlass")
    assert [op.name for op in find_entry(module).body.ops][:1] == ["cutlass.conv2d_fprop"]
    assert HeuristicSelector(halo_convs=False).select(conv_of(**VGG_224), "sm90").family == "conv2d_fprop"


def test_the_rule_wants_enough_tiles_per_multiprocessor():
    """Batch 1 as measured on the H200: VGG-16's 224² (1.7 tiles a multiprocessor) and 112²
    (0.85) layers and ResNet-50's blocked stem (0.42) on the halo conv; ResNet-50's 56²
    3×3 conv (0.21) stays CUTLASS's."""
    assert halo_conv_problem(conv_of(**VGG_224), 132)
    assert halo_conv_problem(conv_of(**{**VGG_224, "n": 1}), 132)
    assert halo_conv_problem(conv_of(**{**VGG_224, "n": 1, "h": 112, "w": 112, "k": 128}), 132)
    assert halo_conv_problem(conv_of(**{**RESNET_STEM, "n": 1}), 132)
    assert not halo_conv_problem(conv_of(**{**RESNET_56, "n": 1}), 132)
    assert not halo_conv_problem(conv_of(**{**VGG_224, "c": 128}), 132)
    assert not halo_conv_problem(conv_of(**{**RESNET_56, "r": 1, "s": 1, "pad": 0}), 132)  # 1x1: the pointwise GEMMs


def test_the_tuner_races_the_halo_modes_against_cutlass():
    op = conv_of(**VGG_224)
    found = candidates(op, "sm90", sms=132, halo_mode=2)
    families = [choice.family for choice in found.choices]
    assert families[0] == "halo_conv" and "conv2d_fprop" in families
    tiles = [hc.HaloTile.of(c.tile) for c in found.choices if c.family == "halo_conv"]
    assert tiles[0] == hc.HaloTile(112, 2, 2) and len(tiles) == len(set(tiles)) > 3
    assert {tile.mode for tile in tiles} == set(hc.TUNED_MODES)
    assert all(hc.tile_reason(op, tile) is None for tile in tiles)
    module = single_op_module(op)
    for choice in found.choices:
        lower_alone(module, choice)  # every candidate, ours and CUTLASS's, is an instance the rules accept
    assert "halo_conv" not in [c.family for c in candidates(op, "sm90", sms=132, halo_mode=None).choices]


def test_the_tuner_races_the_other_patch_ring():
    """RepVGG-A0's 3x3 48 -> 48 at 56² (three patches by TMA in the heuristic) races two as
    well, and its patches by cp.async; VGG-16's 224² tile has no room for a third patch, so
    only its two race, by cp.async (the heuristic's) and by TMA."""
    op = conv_of(n=32, h=56, w=56, c=48, k=48, r=3, s=3)
    tiles = [hc.HaloTile.of(c.tile) for c in candidates(op, "sm90", sms=132).choices if c.family == "halo_conv"]
    assert tiles[:2] == [hc.HaloTile(56, 2, 4, 3, True), hc.HaloTile(56, 2, 4, 3)] and hc.HaloTile(56, 2, 4, 2, True) in tiles
    vgg = [hc.HaloTile.of(c.tile) for c in candidates(conv_of(**VGG_224), "sm90", sms=132).choices if c.family == "halo_conv"]
    assert all(tile.patches == 2 for tile in vgg) and vgg[:2] == [hc.HaloTile(112, 2, 4), hc.HaloTile(112, 2, 4, 2, True)]


def test_the_blocked_stem_races_the_halo_conv_our_stem_conv_and_cutlass():
    families = [choice.family for choice in candidates(conv_of(**RESNET_STEM), "sm90", sms=132).choices]
    assert families[0] == "halo_conv" and {"stem_conv", "conv2d_fprop"} <= set(families)
    assert families.index("stem_conv") < families.index("conv2d_fprop")


def test_a_tuned_selection_gives_the_tuner_its_configured_heuristic(monkeypatch):
    """Every select-kernels switch reaches the search (the halo mode among them), not
    only the ones the tuner once took as flags."""
    from boltir.backends.cuda.tune import selectors

    made = []

    class FakeTuner:
        def __init__(self, *args, **kwargs):
            made.append(kwargs)
            self.gpu, self.report = ("Fake GPU", 132, "sm90"), []

        def tune(self, ops):
            return {}

    monkeypatch.setattr(selectors, "Tuner", FakeTuner)
    for narrow, halo, general in (("halo", True, True), ("halo-aligned", True, False), ("cutlass", False, False)):
        selector = make_selector("tune", narrow_convs=narrow, halo_mode=2, depthwise="cutlass", small_m="cutlass",
                                 few_channels="cutlass", few_pixels="cutlass", conv_ctas=2)
        selector._database = object()  # never opened: the fake tuner does not read it
        selector.prepare([], "sm90")
        heuristic = made[-1]["heuristic"]
        assert (heuristic.halo_convs, heuristic.halo_general, heuristic.halo_mode) == (halo, general, 2)
        assert not (heuristic.direct_depthwise or heuristic.skinny_gemms or heuristic.stem_convs or heuristic.split_convs)
        assert heuristic.conv_ctas == 2


def test_a_bad_narrow_convs_value_is_one_line():
    with pytest.raises(BoltError, match="narrow_convs must be one of cutlass, halo, halo-aligned; got 'ours'"):
        make_selector("heuristic", narrow_convs="ours")


# ------------------------------------------------------------------ the instance


def test_the_instance():
    op = marked(conv_of(**VGG_224), hc.HaloTile(112, 2))
    assert next(g for g in GENERATORS if g.supports(op)) is hc  # before the plain fallbacks
    assert hc.kernel_arch(op) == "sm90"
    source = hc.emit_instance(op).source
    for needed in ("C = 64, K = 64", "ROWS = 2, COLUMNS = 112", "PATCH_BYTES = 58368",
                   "wgmma.mma_async.sync.aligned.m64n112k16.f32.f16.f16", "fence.proxy.async.shared::cta",
                   "cp.async.cg.shared.global", "boltir_pdl::enter();"):
        assert needed in source, needed
    assert "<< 49" not in source  # the descriptors' base offset stays 0 (bench/RESULTS.md: the window's bits were wrong)
    registers = hc.emit_instance(marked(conv_of(**VGG_224), hc.HaloTile(112, 2, 2))).source
    for needed in ("FILTER_IN_REGISTERS = true", "FILTER_BYTES = 0", "OVERLAP = false",
                   '"{%56, %57, %58, %59}, "', '"%60, p, 1, 1, 0;'):
        assert needed in registers, needed
    overlapped = hc.emit_instance(marked(conv_of(**VGG_224), hc.HaloTile(112, 2, 3))).source
    assert "OVERLAP = true" in overlapped and "FILTER_IN_REGISTERS = false" in overlapped
    assert "m64n112k16.f32.bf16.bf16" in hc.emit_instance(marked(conv_of(**VGG_224, element="bf16"), hc.HaloTile(112, 2))).source


def test_the_host_program_launches_it_from_an_sm90_unit():
    module, _ = selected(conv_text(**VGG_224), narrow_convs="halo")
    PlanMemoryPass().apply(make_context(), module)
    program = build_program(module)
    unit = next(job for job in program.units if job.name.startswith("boltir_halo_conv_"))
    assert unit.arch == "sm90" and [step.family for step in program.steps] == ["halo_conv"]


def test_every_tiled_family_has_a_host_generator():
    assert set(tiled_families.GENERATORS) <= set(GENERATORS)


# ------------------------------------------------------------------ the replay

def swizzle(offset: int, row_bytes: int) -> int:
    """Where a byte of a K-major operand with `row_bytes`-byte rows (32, 64 or 128: that
    swizzle) lives: its 16-byte chunk XORed with the address bits above the 128-byte line
    (1, 2 or 3 of them). The template's `swizzled`."""
    return offset ^ (((offset >> 7) & (row_bytes // 16 - 1)) << 4)


def read_operand(smem: np.ndarray, address: int, rows: int, row_bytes: int) -> np.ndarray:
    """A K-major operand of `rows` × 16 halves as wgmma reads it from a swizzled descriptor
    at `address` (base offset 0, the buffers 1024-aligned): row i at (i // 8) * SBO +
    (i % 8) * row_bytes with SBO = 8 rows, k-element e at 2e, then the swizzle."""
    out = np.empty((rows, 16), np.float16)
    for i in range(rows):
        for e in range(16):
            physical = swizzle(address + (i // 8) * 8 * row_bytes + (i % 8) * row_bytes + 2 * e, row_bytes)
            out[i, e] = smem[physical:physical + 2].view(np.float16)[0]
    return out


def register_operand(weight: np.ndarray, block: int, tap: int, kk: int, s: int) -> np.ndarray:
    """The 64 × 16 A operand of wgmma's register form, assembled from each thread's four
    registers as the template loads them (row 16 warp + lane / 4 + 8 (q % 2), channels
    kk·16 + 2 (lane % 4) + 8 (q / 2) and the next) and placed where the PTX ISA's A fragment
    layout puts register q of that thread: (row g + 8 (q % 2), columns 2t + 8 (q / 2), +1)."""
    a = np.full((64, 16), np.nan, np.float16)
    for warp in range(4):
        for lane in range(32):
            for q in range(4):
                row = block * 64 + 16 * warp + lane // 4 + 8 * (q % 2)
                channel = kk * 16 + 2 * (lane % 4) + 8 * (q // 2)
                pair = weight[row, tap // s, tap % s, channel:channel + 2]  # one 32-bit load
                g, t = lane // 4, lane % 4
                a[16 * warp + g + 8 * (q % 2), 2 * t + 8 * (q // 2):2 * t + 8 * (q // 2) + 2] = pair
    assert not np.isnan(a).any()
    return a


def deposit_blocked_patch(smem, patch: int, op: ops.SpaceToDepthConv2dOp, x: np.ndarray, image: int, h0: int, w0: int,
                          pr: int, pc: int, swz) -> None:
    """The template's block_patch for one tile: patch pixel i (row i / PC, column i % PC)
    takes its BLOCK² · IMG_C image values in channel order (dy · BLOCK + dx) · IMG_C + c,
    zero outside the image and the blocked tensor, rounded to f16, then zeros up to C, in
    16-byte chunks at their swizzled places."""
    n, h, w, c = op.blocked_shape()
    _, ic, ih, iw = x.shape
    block = op.prop_value("blocksize")
    top, left, _, _ = op.prop_value("image_pads")
    for i in range(pr * pc):
        row, column = divmod(i, pc)
        hh, ww = h0 + row, w0 + column
        values = np.zeros(c, np.float32)
        for dy in range(block):
            for dx in range(block):
                y, xx = hh * block + dy - top, ww * block + dx - left
                if 0 <= hh < h and 0 <= ww < w and 0 <= y < ih and 0 <= xx < iw:
                    values[(dy * block + dx) * ic:(dy * block + dx + 1) * ic] = x[image, :, y, xx]
        for chunk in range(c // 8):
            dst = patch + swz(i * 2 * c + chunk * 16)
            smem[dst:dst + 16] = values[chunk * 8:chunk * 8 + 8].astype(np.float16).view(np.uint8)


def replay(op: ops.Conv2dOp, tile: hc.HaloTile, x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
           grid_per_block: int = 2, writer_swizzle: bool = True, fragment_swap: bool = False, pool: int = 1,
           plane_split: bool = True) -> np.ndarray:
    """The kernel's data movement in numpy, every CTA of a `grid_per_block` × K/64 grid: the
    filter block and each tile's patch copied (zeros outside the image) into shared memory
    as the template's loops write them, every tap's wgmma read through `read_operand`, the
    epilogue (bias, ReLU) through the accumulator fragment layout into the staged row, and
    the 16-byte stores; with `pool` 2 (op.conv2d_max_pool), the tile's two staged rows
    leave as one row of their 2×2 maxima, as the template's pooled store reads them."""
    n, h, w, c, k, r, s, p, q, pad_h, pad_w, sh, sw = hc.problem(op)[:13]
    columns, rows = tile.columns, tile.rows
    if not hc.blocks_image(op):  # the general form's zeros past C and K: the template's predicated copies
        cp, kb = hc.shared_channels(c), -(-k // 64)
        x = np.pad(x, ((0, 0), (0, 0), (0, 0), (0, cp - c)))
        weight = np.pad(weight, ((0, kb * 64 - k), (0, 0), (0, 0), (0, cp - c)))
        bias = np.pad(bias, (0, kb * 64 - k))
        c = cp
    pixel_bytes, chunks = 2 * c, c // 8
    kb = -(-k // 64)
    pr, planes, pw = hc.patch_extent(op, tile)
    pc = (columns - 1) * sw + s
    patch_bytes = hc.patch_bytes(op, tile)
    filter_bytes = hc.filter_bytes(op, tile)
    stage_pitch = hc.STAGE_PITCH
    tiles_q, tiles_p = -(-q // columns), -(-p // rows)
    tiles = n * tiles_p * tiles_q
    out = np.full((n, p // pool, q // pool, k), np.nan, np.float32)
    swz = (lambda offset: swizzle(offset, pixel_bytes)) if writer_swizzle else (lambda offset: offset)
    for cta in range(kb * grid_per_block):
        smem = np.zeros(filter_bytes + tile.patches * patch_bytes + rows * columns * stage_pitch, np.uint8)
        block, step = cta % kb, grid_per_block
        for tap in range(r * s if not tile.filter_in_registers else 0):
            for o in range(64):
                for chunk in range(chunks):
                    src = weight[block * 64 + o, tap // s, tap % s, chunk * 8:chunk * 8 + 8]
                    dst = swz(tap * 64 * pixel_bytes + o * pixel_bytes + chunk * 16)
                    smem[dst:dst + 16] = src.astype(np.float16).view(np.uint8)
        buffer = 0
        for t in range(cta // kb, tiles, step):
            q0 = (t % tiles_q) * columns
            p0 = ((t // tiles_q) % tiles_p) * rows
            image = t // (tiles_q * tiles_p)
            patch = filter_bytes + buffer * patch_bytes
            if hc.blocks_image(op):  # x is the image; the patch is blocked as it is stored
                deposit_blocked_patch(smem, patch, op, x, image, p0 - pad_h, q0 - pad_w, pr, pc, swz)
            plane_bytes = hc.plane_bytes(op, tile)
            for plane, row, u in np.ndindex(planes if tile.tma else 0, pr, pw):
                # a TMA box a plane: element (chunk, u, row) from input column w0 + plane + u·SW, landing
                # at the plane's base + (row · PW + u) pixels, swizzled by address (zeros outside)
                hh, ww = p0 * sh - pad_h + row, q0 * sw - pad_w + plane + u * sw
                for chunk in range(chunks):
                    inside = 0 <= hh < h and 0 <= ww < w
                    value = x[image, hh, ww, chunk * 8:chunk * 8 + 8] if inside else np.zeros(8, np.float16)
                    dst = patch + plane * plane_bytes + swz((row * pw + u) * pixel_bytes + chunk * 16)
                    smem[dst:dst + 16] = value.astype(np.float16).view(np.uint8)
            for pixel in range(pr * pc if not hc.blocks_image(op) and not tile.tma else 0):
                row, column = divmod(pixel, pc)
                hh, ww = p0 * sh - pad_h + row, q0 * sw - pad_w + column
                slot = ((row * planes + column % planes) * pw + column // planes  # column j: plane j % SW, pixel j / SW
                        if plane_split else row * planes * pw + column)
                for chunk in range(chunks):
                    inside = 0 <= hh < h and 0 <= ww < w
                    value = x[image, hh, ww, chunk * 8:chunk * 8 + 8] if inside else np.zeros(8, np.float16)
                    dst = patch + swz(slot * pixel_bytes + chunk * 16)
                    smem[dst:dst + 16] = value.astype(np.float16).view(np.uint8)
            for group in range(rows):
                acc = np.zeros((64, columns), np.float64)
                for tap in range(r * s):
                    a_address = tap * 64 * pixel_bytes
                    if tile.tma:  # the planes one after another
                        b_address = (patch + tap % s % planes * plane_bytes
                                     + ((group * sh + tap // s) * pw + tap % s // planes) * pixel_bytes)
                    else:
                        b_address = patch + (((group * sh + tap // s) * planes + tap % s % planes) * pw + tap % s // planes) * pixel_bytes
                    for kk in range(c // 16):
                        if tile.filter_in_registers:
                            a = register_operand(weight, block, tap, kk, s).astype(np.float64)
                        else:
                            a = read_operand(smem, a_address + kk * 32, 64, pixel_bytes).astype(np.float64)
                        b = read_operand(smem, b_address + kk * 32, columns, pixel_bytes).astype(np.float64)
                        acc += a @ b.T
                stage = filter_bytes + 2 * patch_bytes + group * columns * stage_pitch
                for warp in range(4):
                    for lane in range(32):
                        for j in range(columns // 8):
                            for e in range(2):
                                for xx in range(2):
                                    channel = 16 * warp + lane // 4 + 8 * e
                                    pixel = 8 * j + 2 * (lane % 4) + xx
                                    if fragment_swap:
                                        channel, pixel = pixel % 64, channel % columns
                                    y = max(acc[channel, pixel] + float(bias[block * 64 + channel]), 0.0)
                                    at = stage + pixel * stage_pitch + channel * 2
                                    smem[at:at + 2] = np.float16(y).reshape(1).view(np.uint8)
                pp = p0 + group
                for i in range(columns * 8 if pool == 1 else 0):
                    pixel, piece = divmod(i, 8)
                    qq = q0 + pixel
                    if pp < p and qq < q and block * 64 + piece * 8 < k:
                        at = stage + pixel * stage_pitch + piece * 16
                        out[image, pp, qq, block * 64 + piece * 8:block * 64 + piece * 8 + 8] = \
                            smem[at:at + 16].view(np.float16).astype(np.float32)
            rows_at = filter_bytes + 2 * patch_bytes
            pieces = (columns // pool) * 8
            for i in range((rows // pool) * pieces if pool > 1 else 0):
                pair, (pixel, piece) = i // pieces, divmod(i % pieces, 8)
                qq, pooled_row = q0 // pool + pixel, p0 // pool + pair
                if pooled_row < p // pool and qq < q // pool:
                    taps = [smem[at:at + 16].view(np.float16).astype(np.float32) for at in
                            (rows_at + (pool * pair + row) * columns * stage_pitch + (pool * pixel + dq) * stage_pitch
                             + piece * 16 for row in range(pool) for dq in range(pool))]
                    out[image, pooled_row, qq, block * 64 + piece * 8:block * 64 + piece * 8 + 8] = np.max(taps, axis=0)
            buffer = (buffer + 1) % tile.patches
    return out


def replay_case(rng, shape: dict, tile: tuple, **knobs) -> tuple[np.ndarray, np.ndarray]:
    op = conv_of(**shape, epilogue="bias, relu")
    tile = hc.HaloTile(*tile)
    assert hc.conv_reason(op) is None and hc.tile_reason(marked(op, tile), tile) is None
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float16)
    weight = (rng.standard_normal(op.filter.type.get_shape()) * 0.1).astype(np.float16)
    bias = rng.standard_normal(op.filter.type.get_shape()[0]).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight, "arg2": bias})
    return replay(op, tile, x, weight, bias, **knobs), expected.astype(np.float32)


@pytest.mark.parametrize(("shape", "tile"), [
    ({"n": 2, "h": 5, "w": 16, "c": 64, "k": 128, "r": 3, "s": 3}, (16, 2)),  # 2 channel blocks; an odd row count
    ({"n": 1, "h": 4, "w": 11, "c": 64, "k": 64, "r": 3, "s": 3}, (8, 2)),    # a partial last column tile
    ({"n": 1, "h": 3, "w": 8, "c": 64, "k": 64, "r": 2, "s": 3, "pads": (1, 0, 0, 2)}, (8, 1)),  # asymmetric pads
    ({"n": 1, "h": 7, "w": 19, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0}, (16, 2)),  # the blocked stem's form: 32-byte rows
    ({"n": 1, "h": 4, "w": 9, "c": 32, "k": 64, "r": 3, "s": 3}, (8, 2)),   # 64-byte rows
    ({"n": 2, "h": 5, "w": 16, "c": 64, "k": 128, "r": 3, "s": 3}, (16, 2, 2)),  # the filter in registers
    ({"n": 1, "h": 7, "w": 19, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0}, (16, 2, 2)),
    ({"n": 1, "h": 5, "w": 16, "c": 64, "k": 64, "r": 3, "s": 3}, (16, 2, 3)),  # overlapped (same addressing)
    ({"n": 1, "h": 5, "w": 24, "c": 64, "k": 64, "r": 3, "s": 3}, (24, 2, 4)),  # stmatrix staging (same layout)
    ({"n": 2, "h": 5, "w": 16, "c": 64, "k": 64, "r": 3, "s": 3}, (16, 3)),  # three warpgroups, a partial row tile
    ({"n": 1, "h": 6, "w": 16, "c": 64, "k": 128, "r": 3, "s": 3}, (8, 4)),  # four, a partial row tile, two blocks
    # the general form: stride 2 (two column planes), channels padded to a swizzle row, K inside a block
    ({"n": 1, "h": 9, "w": 20, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2}, (8, 2, 4)),  # RepVGG-A0's 3x3/2 form
    ({"n": 2, "h": 8, "w": 17, "c": 64, "k": 128, "r": 3, "s": 3, "stride": 2}, (8, 1)),  # odd width, two blocks
    ({"n": 1, "h": 7, "w": 18, "c": 32, "k": 64, "r": 2, "s": 2, "stride": 2, "pad": 0}, (8, 2)),  # an even window
    ({"n": 1, "h": 9, "w": 16, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2}, (8, 2, 2)),  # the filter in registers
    ({"n": 1, "h": 6, "w": 16, "c": 48, "k": 48, "r": 3, "s": 3}, (16, 2, 4)),  # stride 1, 48 channels
    ({"n": 1, "h": 5, "w": 11, "c": 24, "k": 104, "r": 3, "s": 3, "pads": (1, 0, 2, 1)}, (8, 3)),  # 24 -> 32, a partial block
    # three patch buffers (a ring two tiles ahead)
    ({"n": 1, "h": 9, "w": 20, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2}, (8, 1, 4, 3)),
    ({"n": 2, "h": 5, "w": 16, "c": 64, "k": 128, "r": 3, "s": 3}, (16, 2, 2, 3)),
    # patches by TMA: a box a plane (stride 2: two planes, each from its own 1024-byte boundary)
    ({"n": 1, "h": 9, "w": 20, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2}, (8, 2, 5, 2, True)),
    ({"n": 2, "h": 8, "w": 17, "c": 64, "k": 128, "r": 3, "s": 3, "stride": 2}, (8, 1, 4, 3, True)),
    ({"n": 1, "h": 7, "w": 19, "c": 16, "k": 64, "r": 4, "s": 4, "pad": 0}, (16, 2, 2, 2, True)),
    ({"n": 1, "h": 4, "w": 11, "c": 64, "k": 64, "r": 3, "s": 3}, (8, 2, 4, 2, True)),
])
def test_the_kernel_replayed_matches_the_interpreter(rng, shape, tile):
    got, expected = replay_case(rng, shape, tile)
    assert not np.isnan(got).any(), "an output never written"
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("knob", [{"writer_swizzle": False}, {"fragment_swap": True}])
@pytest.mark.parametrize("c", [16, 64])
def test_the_replay_fails_when_the_layouts_disagree(rng, knob, c):
    got, expected = replay_case(rng, {"n": 1, "h": 4, "w": 16, "c": c, "k": 64, "r": 3, "s": 3}, (16, 2), **knob)
    assert np.isnan(got).any() or not np.allclose(got, expected, rtol=1e-2, atol=2e-2)


def test_the_replay_fails_when_a_stride_2_patch_is_stored_unsplit(rng):
    """The windows read a plane per column phase: a patch stored as one plane of input columns
    gives the wrong conv (the replay checks the planes, not only the swizzle)."""
    got, expected = replay_case(rng, {"n": 1, "h": 9, "w": 20, "c": 48, "k": 48, "r": 3, "s": 3, "stride": 2}, (8, 2, 4),
                                plane_split=False)
    assert not np.allclose(got, expected, rtol=1e-2, atol=2e-2)


# ------------------------------------------------------------------- with nvcc


@pytest.mark.slow
def test_three_patch_buffers_ride_in_the_mode_integer_and_keep_two_tiles_in_flight():
    """A ring of three patches (RepVGG-A0's 3x3/2: one row of one warpgroup a multiprocessor
    leaves one patch in flight): the choice's third integer is mode + PATCHES_STEP, older
    choices keep their meaning, and the unit waits for all but the newest copy group."""
    ring = hc.HaloTile(56, 1, 4, 3)
    assert ring.numbers() == (56, 1, 14) and ring.describe() == "56x1m4p3"
    assert hc.HaloTile.of(ring.as_tile()) == ring and hc.HaloTile.decode(112, 2, 4) == hc.HaloTile(112, 2, 4)
    op = conv_of(**REPVGG_S2)
    assert hc.shared_bytes(op, ring) - hc.shared_bytes(op, hc.HaloTile(56, 1, 4)) == hc.patch_bytes(op, ring)
    assert hc.tile_reason(op, ring) is None
    assert "mode 3" in hc.tile_reason(op, hc.HaloTile(56, 1, 3, 3))
    assert "patch buffers" in hc.tile_reason(op, hc.HaloTile(56, 1, 4, 4))
    assert "shared memory" in hc.tile_reason(op, hc.HaloTile(56, 2, 2, 3))  # two rows of a stride-2 patch, three times
    source = hc.emit_translation_unit([marked(op, ring)])
    assert "cp.async.wait_group 1;" in source and "(buffer == 0 ? 2 : buffer - 1) * PATCH_BYTES" in source
    two = hc.emit_translation_unit([marked(op, hc.HaloTile(56, 1, 4))])
    assert "cp.async.wait_group 1;" not in two and "FILTER_BYTES + 2 * PATCH_BYTES" in two


def test_the_unit_compiles_with_nvcc_for_sm90a(tmp_path):
    shapes = [(VGG_224, (112, 2)), ({**VGG_112, "element": "bf16"}, (112, 2, 2)),
              ({**RESNET_56, "epilogue": "bias, relu, residual = add, then relu"}, (56, 2)), (RESNET_56, (56, 1)),
              (RESNET_STEM, (112, 2)), ({**RESNET_56, "c": 32}, (56, 2)), (VGG_224, (112, 2, 2)), (RESNET_STEM, (112, 2, 2)),
              (VGG_224, (112, 2, 3)), ({**RESNET_56, "epilogue": "bias, relu, residual = add, then relu"}, (56, 2, 3)),
              (VGG_224, (56, 4)), (RESNET_56, (56, 3)),  # four and three warpgroups: 128 and 168 registers a thread
              (VGG_224, (112, 2, 4)), ({**RESNET_56, "epilogue": "bias, relu, residual = add, then relu"}, (56, 2, 4)),
              ({**RESNET_56, "element": "bf16"}, (24, 1, 4)),  # stmatrix: x4 pairs, an odd block count's x2
              ({**VGG_224, "c": 16}, (112, 3)), (RESNET_STEM, (112, 4)),  # more warps on 16 channels: one CTA
              # the general form: RepVGG-A0's 3x3/2 on 48 channels (mode 4, the filter in registers, three rows),
              # its 3x3 on 48 at 56², a residual on a partial block
              (REPVGG_S2, (56, 1, 4)), (REPVGG_S2, (56, 2, 2)), (REPVGG_S2, (32, 2, 4)),
              ({**REPVGG_S2, "h": 56, "w": 56, "stride": 1}, (56, 2, 4)),
              ({**RESNET_56, "k": 96, "stride": 2, "epilogue": "bias, relu, residual = add, then relu"}, (32, 1)),
              (REPVGG_S2, (56, 1, 4, 3)), ({**REPVGG_S2, "h": 56, "w": 56, "stride": 1}, (56, 2, 2, 3)),  # three patches
              # patches by TMA: two planes (mode 5, a ring of three), one plane on 64 and 16 channels, mode 3
              (REPVGG_S2, (56, 2, 5, 2, True)), (REPVGG_S2, (56, 1, 4, 3, True)), (VGG_224, (112, 2, 4, 2, True)),
              (RESNET_STEM, (112, 2, 2, 2, True)), ({**RESNET_56, "element": "bf16"}, (56, 2, 3, 2, True))]
    op_list = [marked(conv_of(**shape), hc.HaloTile(*tile)) for shape, tile in shapes]
    assert_unit_compiles(hc, op_list, tmp_path, SM90A)
