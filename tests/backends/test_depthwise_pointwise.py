"""Our depthwise-then-pointwise conv (codegen/depthwise_pointwise_kernels.py, family
"depthwise_pointwise") and fuse-depthwise-pointwise, which makes its op.

Without a GPU: which pairs the pass fuses and that the module computes the same function;
the kernel's rules, tiles and shared memory; a numpy replay of the kernel (its band copy
with the padding as zeros, the depthwise strips' sliding window, the A tile, the mma.sync
fragments with lane t holding channels 4t .. 4t + 3 of a chunk for A and B alike, and the
epilogue's stores) against the interpreter; the `slow` test compiles units with nvcc.
bench/check_depthwise_pointwise.py runs the kernel on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from boltir.backends.cuda.codegen import compute_kernels
from boltir.backends.cuda.codegen import depthwise_pointwise_kernels as dp
from boltir.backends.cuda.passes.fuse_depthwise_pointwise import FuseDepthwisePointwisePass
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.dialects import op as ops
from boltir.interp import find_entry, run
from boltir.interp.op import apply_epilogue
from boltir.ir import make_context, parse_module
from boltir.passes import statistics
from tests.passes.equivalence import assert_equivalent, random_inputs, relative_error
from tests.support.op_modules import depthwise_pointwise_text as pair_text
from tests.support.op_modules import inverted_residual_text as block_text
from tests.support.own_kernel_units import assert_unit_compiles


def fused(text: str, tile: dp.PairTile | None = None, expand: bool = False, sms: int = 0):
    """The module after select-kernels and fuse-depthwise-pointwise (`expand`: with
    expansions; `sms`: its wave bound; the fused op's tile replaced by `tile`), and how many
    pairs were fused."""
    module = parse_module(text)
    SelectKernelsPass(arch="sm90", selector="heuristic").apply(make_context(), module)
    with statistics.collecting() as collected:
        FuseDepthwisePointwisePass(expand=expand, sms=sms).apply(make_context(), module)
    count = collected.get("fuse-depthwise-pointwise", "depthwise convs fused with the 1x1 conv after them")
    if tile is not None:
        for op in module.walk():
            if isinstance(op, ops.DepthwisePointwiseConv2dOp):
                op.attributes[KERNEL_ATTR] = KernelChoice(dp.FAMILY, "sm80", tile.as_tile(), (8, 8, 8)).to_attr()
    return module, count


def the_op(module) -> ops.DepthwisePointwiseConv2dOp:
    return next(o for o in module.walk() if isinstance(o, ops.DepthwisePointwiseConv2dOp))


# ------------------------------------------------------------------ the pass


@pytest.mark.parametrize("text", [
    pair_text(residual=True),
    pair_text(n=2, h=11, w=9, c=48, k=24, strides=(2, 2), pads=(0, 0, 1, 1)),
    pair_text(r=5, s=5, pads=(4, 4, 4, 4), dilations=(2, 2), bias=False),
    pair_text(element="bf16", residual=True),
])
def test_a_depthwise_conv_and_its_1x1_conv_become_one_op_computing_the_same(text, rng):
    before = parse_module(text)
    SelectKernelsPass(arch="sm90", selector="heuristic").apply(make_context(), before)
    after = assert_equivalent(before, [FuseDepthwisePointwisePass(), LowerOpToCutlassPass()], rng, tolerance=1e-12)
    assert [o.name for o in after.walk() if o.name.startswith("op.")] == ["op.depthwise_pointwise_conv2d"]
    assert dp.supports(the_op(after))


@pytest.mark.parametrize("text", [
    pair_text(users=2),                        # the depthwise result is returned too
    pair_text(c=40, k=16),                     # 40 channels: not a multiple of 16
    pair_text(k=12),                           # 12 output channels: not a multiple of 8
    pair_text(r=9, s=9, pads=(4, 4, 4, 4)),    # a 9x9 window
    pair_text(element="f32"),                  # the kernel takes f16 and bf16
])
def test_what_it_leaves_alone(text):
    module, count = fused(text)
    assert count == 0 and not any(isinstance(o, ops.DepthwisePointwiseConv2dOp) for o in module.walk())


MOBILENET_V2_PAIRS = [  # (side, C, K, stride, fused): MobileNetV2's 17 depthwise + projection pairs, distinct shapes
    (112, 32, 16, 1, True), (112, 96, 24, 2, True), (56, 144, 24, 1, True), (56, 144, 32, 2, True),
    (28, 192, 32, 1, True), (28, 192, 64, 2, True), (14, 384, 64, 1, True),
    (14, 384, 96, 1, False), (14, 576, 96, 1, False), (14, 576, 160, 2, False), (7, 960, 160, 1, False),
    (7, 960, 320, 1, False),
]


@pytest.mark.parametrize(("side", "c", "k", "stride", "fuses"), MOBILENET_V2_PAIRS)
def test_mobilenet_v2s_pairs_fuse_where_the_1x1_filter_is_no_larger_than_a_ctas_band(side, c, k, stride, fuses):
    """Each CTA reads the whole K x C filter from the L2: the deep blocks (K of 96 and more
    over 384 channels and more) stay two launches, their 1x1 convs on CUTLASS's GEMM tiles."""
    pads = (1, 1, 1, 1) if stride == 1 else (0, 0, 1, 1)
    text = pair_text(n=32, h=side, w=side, c=c, k=k, strides=(stride, stride), pads=pads)
    module, count = fused(text)
    assert count == int(fuses)
    if not fuses:
        depthwise, pointwise = (o for o in module.walk() if isinstance(o, ops.Conv2dOp))
        assert "bytes of 1x1 filters beside a band of" in dp.pair_reason(depthwise, pointwise)
        assert len(list(depthwise.output.uses)) == 1  # asking left no use behind


@pytest.mark.parametrize(("n", "side", "c", "k", "stride", "fuses"), [
    (1, 56, 144, 24, 1, True), (4, 28, 192, 32, 1, True), (32, 56, 144, 24, 1, False), (32, 28, 192, 64, 2, False)])
def test_with_the_targets_multiprocessors_it_fuses_only_one_wave(n, side, c, k, stride, fuses):
    """`sms`: past one wave of CTAs the fused kernel's tensor work (the halo rows computed
    again) costs more than the separate kernels' DRAM round trip saves; within one, the
    launches it removes pay (batch 1)."""
    pads = (1, 1, 1, 1) if stride == 1 else (0, 0, 1, 1)
    text = pair_text(n=n, h=side, w=side, c=c, k=k, strides=(stride, stride), pads=pads)
    module, count = fused(text, sms=132)
    assert count == int(fuses)
    assert fused(text)[1] == 1  # without a bound: any grid
    if not fuses:
        depthwise, pointwise = (o for o in module.walk() if isinstance(o, ops.Conv2dOp))
        reason = dp.pair_reason(depthwise, pointwise, sms=132)
        assert reason.endswith("more than one wave of 132 multiprocessors") and " CTAs of " in reason


def test_the_default_pipeline_fuses_one_wave_before_select_kernels():
    from boltir.compiler import backend_passes
    from boltir.target import get_target

    for arch in ("sm80", "sm90"):
        passes = backend_passes(arch, 3 if arch == "sm90" else 2, "heuristic")
        sms = get_target(arch).multiprocessors
        assert passes[:2] == [f"fuse-depthwise-pointwise{{expand=true sms={sms}}}", passes[1]]
        assert passes[1].startswith("select-kernels{")


B2B_AFTER_DEPTHWISE = """func.func @main(%x: tensor<1x8x8x32xf16>, %w0: tensor<32x3x3x1xf16>, %w1: tensor<16x1x1x32xf16>, %w2: tensor<64x1x1x16xf16>) -> tensor<1x8x8x64xf16> {
  %0 = op.conv2d %x, %w0 {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, epilogue = #op.epilogue<clip(0.0, 6.0)>} : (tensor<1x8x8x32xf16>, tensor<32x3x3x1xf16>) -> tensor<1x8x8x32xf16>
  %1 = op.b2b_conv2d %0, %w1, %w2 {epilogue1 = #op.epilogue<clip(0.0, 6.0)>} : (tensor<1x8x8x32xf16>, tensor<16x1x1x32xf16>, tensor<64x1x1x16xf16>) -> tensor<1x8x8x64xf16>
  func.return %1 : tensor<1x8x8x64xf16>
}
"""
"""A depthwise conv, then form-persistent-kernels' pair of the block's projection (32 -> 16)
and the next block's expansion (16 -> 64)."""


def test_a_back_to_back_conv_is_split_only_for_a_fusion(rng):
    """A b2b conv that follows no depthwise conv (nor feeds one) stays whole; one after a
    depthwise conv is split, its first conv fused with the depthwise conv, its second kept."""
    from tests.support.op_modules import b2b_conv_text

    module = parse_module(b2b_conv_text(1, 8, 8, 16, 32, 16))
    with statistics.collecting() as collected:
        FuseDepthwisePointwisePass(expand=True).apply(make_context(), module)
    assert collected.get("fuse-depthwise-pointwise", "back-to-back convs split for the fusion") == 0
    assert [o.name for o in module.walk() if o.name.startswith("op.")] == ["op.b2b_conv2d"]
    after = assert_equivalent(parse_module(B2B_AFTER_DEPTHWISE), FuseDepthwisePointwisePass(), rng, tolerance=1e-12)
    assert [o.name for o in after.walk() if o.name.startswith("op.")] == ["op.depthwise_pointwise_conv2d", "op.conv2d"]
    # 40 channels (not a multiple of 16): the kernel cannot take the pair, and the split is undone
    text = B2B_AFTER_DEPTHWISE.replace("32", "40")
    module = parse_module(text)
    FuseDepthwisePointwisePass(expand=True).apply(make_context(), module)
    assert str(module) == str(parse_module(text))


def test_a_second_conv_that_is_not_1x1_stays():
    text = pair_text().replace("tensor<16x1x1x32xf16>", "tensor<16x3x3x32xf16>").replace(
        "{epilogue = #op.epilogue<bias>}", "{pads = array<i64: 1, 1, 1, 1>, epilogue = #op.epilogue<bias>}")
    module, count = fused(text)
    assert count == 0


def test_the_fused_op_has_a_plain_fallback_and_a_roofline_rule():
    from boltir.backends.cuda.launch_costs import launch_cost

    op = the_op(fused(pair_text(n=2, residual=True))[0])
    assert compute_kernels.family(op) == "b2b_conv2d_fallback"
    source = compute_kernels.emit_instance(op).source
    assert "acc += to_f32(input[in + k]) * to_f32(filter0[" in source and "to_f32(residual[index * K1 + k])" in source
    cost = launch_cost(op)
    assert cost.flops == 2 * (2 * 10 * 10 * 32 * 9 + 2 * 10 * 10 * 16 * 32)
    # input, both filters and biases, the residual and the output once; no intermediate
    assert cost.bytes == 2 * (2 * 10 * 10 * 32 + 32 * 9 + 16 * 32 + 32 + 16 + 2 * 2 * 10 * 10 * 16)


@pytest.mark.parametrize("text", [
    block_text(n=2, h=12, w=12, cin=16, c=64, k=16),                                   # the skip connection
    block_text(n=1, h=11, w=9, cin=24, c=144, k=32, stride=2, pads=(0, 0, 1, 1)),        # 24 channels: a chunk half zeros
    block_text(n=1, h=8, w=8, cin=32, c=192, k=32, element="bf16"),
])
def test_a_whole_inverted_residual_becomes_one_op_computing_the_same(text, rng):
    before = parse_module(text)
    SelectKernelsPass(arch="sm90", selector="heuristic").apply(make_context(), before)
    after = assert_equivalent(before, [FuseDepthwisePointwisePass(expand=True), LowerOpToCutlassPass()], rng,
                              tolerance=1e-12)
    assert [o.name for o in after.walk() if o.name.startswith("op.")] == ["op.depthwise_pointwise_conv2d"]
    op = the_op(after)
    assert op.expand is not None and op.expand_bias is not None and dp.supports(op)


def test_an_expansion_with_a_second_user_or_without_the_option_stays():
    for text, expand in ((block_text(users=2), True), (block_text(), False)):
        module, count = fused(text, expand=expand)
        op = the_op(module)
        assert count == 1 and op.expand is None
        assert sum(isinstance(o, ops.Conv2dOp) for o in module.walk()) == 1  # the expansion, on its own kernel


# ------------------------------------------------------------------ the rules


def test_tiles_for_mobilenet_v2s_blocks():
    """Two CTAs a multiprocessor at most 113 KiB each; at most 64 pixels a tile above one row."""
    cases = {  # (h, c, k, stride): tile
        (112, 32, 16, 1): dp.PairTile(1, 4, 8),    # the first block, no expansion: 112 pixels a row
        (112, 96, 24, 2): dp.PairTile(1, 4, 8),    # 56 pixels a row
        (56, 144, 24, 1): dp.PairTile(1, 4, 8),
        (56, 144, 32, 2): dp.PairTile(2, 4, 8),    # 28 a row: two rows, 106 KiB
        (28, 192, 32, 1): dp.PairTile(2, 4, 8),
        (28, 192, 64, 2): dp.PairTile(2, 4, 8),    # 14 a row: four rows (a 9-row band) would take 134 KiB
    }
    for (h, c, k, stride), tile in cases.items():
        pads = (1, 1, 1, 1) if stride == 1 else (0, 0, 1, 1)
        op = the_op(fused(pair_text(n=32, h=h, w=h, c=c, k=k, strides=(stride, stride), pads=pads))[0])
        assert dp.default_tile(op) == tile, (h, c, k, stride)
        assert dp.geometry(op, tile).shared_bytes <= dp.TWO_CTAS


def test_the_a_rows_pitch_puts_a_half_warps_rows_in_distinct_banks():
    for c in (16, 32, 96, 144, 192, 384, 960):
        pitch = dp.a_pitch(c)
        assert pitch >= 2 * c and pitch % 16 == 0 and pitch - 2 * c < 128
        # lanes g = 0..3 read 32 bytes each at g * pitch: four distinct 32-byte bank groups
        assert len({(g * pitch) % 128 // 32 for g in range(4)}) == 4


def test_warp_items_cover_every_warp_where_they_can():
    op = the_op(fused(pair_text(n=32, h=28, w=28, c=192, k=32))[0])
    tile = dp.default_tile(op)  # 64 pixels: four fragments, four n8 tiles
    assert dp.warp_tiles(op, tile) == 2  # 4 fragments x 2 halves of K = 8 warp items
    op = the_op(fused(pair_text(n=32, h=112, w=112, c=32, k=16))[0])
    assert dp.warp_tiles(op, dp.default_tile(op)) == 1  # seven fragments of 112 pixels x two n8 tiles: 14 items


@pytest.mark.parametrize(("tile", "reason"), [
    (dp.PairTile(3, 4, 8), "a 3x4x8 tile"),
    (dp.PairTile(8, 4, 8), "bytes of shared memory: a block takes at most"),  # 8 rows of a 112-wide band at C = 192
])
def test_tiles_it_cannot_run_say_why(tile, reason):
    op = the_op(fused(pair_text(n=1, h=112, w=112, c=192, k=32))[0])
    assert reason in dp.tile_reason(op, tile)


def test_a_marked_choice_it_cannot_run_is_a_one_line_error():
    from boltir.diagnostics import BoltError

    module, _ = fused(pair_text(), dp.PairTile(3, 4, 8))
    with pytest.raises(BoltError, match="bad kernel attribute on op.depthwise_pointwise_conv2d: a 3x4x8 tile"):
        LowerOpToCutlassPass().apply(make_context(), module)


# ------------------------------------------------------------------ selection and tuning


def test_select_kernels_chooses_the_fused_op_and_the_tuner_races_its_tiles():
    """Run before select-kernels, the pass leaves an op that select-kernels chooses like any:
    the heuristic's tile (the same the pass gives), and the tuner's candidates are the
    kernel's tiles alone, each one that lowers; the tuning key tells windows and expansions
    apart."""
    from boltir.backends.cuda.select.candidates import candidates
    from boltir.backends.cuda.select.heuristic import HeuristicSelector
    from boltir.backends.cuda.tune.database import tuning_key
    from boltir.backends.cuda.tune.tuner import lower_alone, single_op_module

    module = parse_module(block_text(n=32, h=28, w=28, cin=32, c=192, k=32))
    FuseDepthwisePointwisePass(expand=True).apply(make_context(), module)
    op = the_op(module)
    chosen = KernelChoice.from_attr(op.attributes.pop(KERNEL_ATTR))
    SelectKernelsPass(arch="sm90", selector="heuristic").apply(make_context(), module)
    assert KernelChoice.from_attr(op.attributes[KERNEL_ATTR]) == chosen == HeuristicSelector().select(op, "sm90")
    found = candidates(op, "sm90", sms=132)
    tiles = [dp.PairTile.of(choice.tile) for choice in found.choices]
    assert {choice.family for choice in found.choices} == {dp.FAMILY} and tiles[0] == dp.default_tile(op)
    assert 4 <= len(tiles) == len(set(tiles)) <= 8
    single = single_op_module(op)
    for choice in found.choices:
        lower_alone(single, choice)
    strided = the_op(fused(block_text(n=32, h=28, w=28, cin=32, c=192, k=32, stride=2, pads=(0, 0, 1, 1), residual=False),
                           expand=True)[0])
    pair = the_op(fused(block_text(n=32, h=28, w=28, cin=32, c=192, k=32))[0])
    keys = {tuning_key(o, "sm90") for o in (op, strided, pair)}
    assert len(keys) == 3 and "strides=2x2" in tuning_key(strided, "sm90").problem
    assert tuning_key(op, "sm90").epilogue.count(";") == 2 and tuning_key(pair, "sm90").epilogue.count(";") == 1


# ------------------------------------------------------------------ the kernel, replayed


def by_argument(module, inputs: dict) -> dict:
    """The inputs keyed by the function's argument names (x, w0, w1, b0, b1, res)."""
    return {arg.name_hint: value for arg, value in zip(find_entry(module).body.block.args, inputs.values(), strict=True)}


def _epilogue(epilogue, acc, bias, residual):
    return apply_epilogue(np.asarray(acc, np.float32), epilogue, bias, residual, channel_axis=-1)


def mma_chunk(a_rows: np.ndarray, b_rows: np.ndarray) -> np.ndarray:
    """One mma.sync m16n8k16 on a k16 chunk as the kernels feed it: `a_rows` 16 pixels x 16
    channels and `b_rows` 8 filter rows x 16 channels, in memory order; lane (g, t) loads
    channels 4t .. 4t + 3 of its rows, and the registers mean what the PTX ISA says (a0 a1
    a2 a3 = A[g][2t..], A[g+8][2t..], A[g][2t+8..], A[g+8][2t+8..]; b0 b1 = B[2t..][g],
    B[2t+8..][g]). The 16 x 8 product."""
    a_frag, b_frag = np.zeros((16, 16), np.float32), np.zeros((16, 8), np.float32)
    for g in range(8):
        for t in range(4):
            lo, hi, weight = a_rows[g, 4 * t:4 * t + 4], a_rows[g + 8, 4 * t:4 * t + 4], b_rows[g, 4 * t:4 * t + 4]
            a_frag[g, 2 * t:2 * t + 2], a_frag[g + 8, 2 * t:2 * t + 2] = lo[:2], hi[:2]
            a_frag[g, 2 * t + 8:2 * t + 10], a_frag[g + 8, 2 * t + 8:2 * t + 10] = lo[2:], hi[2:]
            b_frag[2 * t:2 * t + 2, g], b_frag[2 * t + 8:2 * t + 10, g] = weight[:2], weight[2:]
    return a_frag @ b_frag


def replay(op: ops.DepthwisePointwiseConv2dOp, tile: dp.PairTile, x, w0, w1, b0, b1, res, we=None, be=None) -> np.ndarray:
    """What the kernel computes, step by step as the template does (the same loops,
    indices and roundings; numpy for the arithmetic inside a step)."""
    n, h, w, cin, k, r, s, p, q, pad_t, pad_l, sh, sw, dh, dw = dp.problem(op)
    c = op.channels()
    shape = dp.geometry(op, tile)
    rows, cols = tile.rows, tile.columns
    element = x.dtype
    span = (cols - 1) * sw + (s - 1) * dw + 1
    strips = -(-q // cols)
    taps = w0.reshape(c, r * s).T.astype(np.float32)  # [R*S][C], f32
    out = np.full((n, p, q, k), np.nan, np.float32)
    for block in range(n * -(-p // rows)):
        image, p0 = divmod(block, -(-p // rows))
        p0 *= rows
        h0 = p0 * sh - pad_t
        band = np.full((shape.band_rows * shape.band_columns, c), np.nan, element)
        if we is None:  # the cp.async copy, zeros outside the image
            for pixel in range(shape.band_rows * shape.band_columns):
                hh, ww = h0 + pixel // shape.band_columns, pixel % shape.band_columns - pad_l
                band[pixel] = x[image, hh, ww] if 0 <= hh < h and 0 <= ww < w else 0
        else:  # the expansion: warp items of 16 band pixels x NTW_E n8 tiles, A from the input
            pixels, ntw = shape.band_rows * shape.band_columns, dp.expand_warp_tiles(op, tile)
            chunks = -(-cin // 16)
            narrow = np.zeros((chunks * 16,), element)
            for f in range(-(-pixels // 16)):
                a_rows = np.zeros((16, chunks * 16), np.float32)
                inside = []
                for m in range(16):
                    pixel = 16 * f + m
                    hh, ww = h0 + pixel // shape.band_columns, pixel % shape.band_columns - pad_l
                    inside.append(pixel < pixels and 0 <= hh < h and 0 <= ww < w)
                    if inside[-1]:
                        narrow[:cin] = x[image, hh, ww]
                        a_rows[m] = narrow
                filters = np.zeros((c, chunks * 16), np.float32)
                filters[:, :cin] = we[:, 0, 0, :]
                for j0 in range(0, c // 8, ntw):
                    for j in range(j0, j0 + ntw):
                        d = sum(mma_chunk(a_rows[:, 16 * kc:16 * kc + 16], filters[8 * j:8 * j + 8, 16 * kc:16 * kc + 16])
                                for kc in range(chunks))
                        for m in range(16):
                            if 16 * f + m < pixels:
                                ch = slice(8 * j, 8 * j + 8)
                                bias = None if be is None else be[ch]
                                band[16 * f + m, ch] = (_epilogue(op.expand_epilogue, d[m], bias, None) if inside[m]
                                                        else np.zeros(8)).astype(element)
        band = band.reshape(shape.band_rows, shape.band_columns, c)
        a_tile = np.full((shape.tile_pixels, c), np.nan, element)  # rows past the pixels stay garbage
        for row in range(rows):
            if p0 + row >= p:
                break
            for strip in range(strips):
                q0 = strip * cols
                acc = np.zeros((cols, c), np.float32)
                for rr in range(r):
                    for u in range(span):
                        col = q0 * sw + u
                        if col >= shape.band_columns:
                            break
                        value = band[row * sh + rr * dh, col].astype(np.float32)
                        for cc in range(cols):
                            for ss in range(s):
                                if cc * sw + ss * dw == u:
                                    acc[cc] += value * taps[rr * s + ss]
                for cc in range(cols):
                    if q0 + cc < q:
                        a_tile[row * q + q0 + cc] = _epilogue(op.epilogue0, acc[cc], b0, None).astype(element)
        valid = min(rows, p - p0) * q
        nt, ntw = k // 8, dp.warp_tiles(op, tile)
        for item in range(shape.tile_pixels // 16 * (nt // ntw)):
            f, j0 = item // (nt // ntw), item % (nt // ntw) * ntw
            if 16 * f >= valid:
                break
            for j in range(j0, j0 + ntw):
                d = sum(mma_chunk(a_tile[16 * f:16 * f + 16, 16 * kc:16 * kc + 16].astype(np.float32),
                                  w1[8 * j:8 * j + 8, 0, 0, 16 * kc:16 * kc + 16].astype(np.float32))
                        for kc in range(c // 16))
                for m in range(16):
                    if 16 * f + m < valid:
                        pixel = (image, p0 + (16 * f + m) // q, (16 * f + m) % q)
                        ch = slice(8 * j, 8 * j + 8)
                        extra = None if res is None else res[pixel][ch]
                        bias = None if b1 is None else b1[ch]
                        out[pixel][ch] = _epilogue(op.epilogue1, d[m], bias, extra)
    return out.astype(element)


@pytest.mark.parametrize(("text", "tile"), [
    (pair_text(n=2, residual=True), dp.PairTile(2, 4, 8)),                                        # 10 rows in twos
    (pair_text(n=1, h=7, w=7, residual=True), dp.PairTile(4, 4, 4)),                               # a partial last tile
    (pair_text(n=1, h=11, w=9, c=48, k=24, strides=(2, 2), pads=(0, 0, 1, 1)), dp.PairTile(2, 2, 8)),
    (pair_text(n=1, h=9, w=9, r=5, s=5, pads=(4, 4, 4, 4), dilations=(2, 2), bias=False), dp.PairTile(1, 8, 4)),
    (pair_text(n=1, h=12, w=12, c=16, k=64, element="bf16"), dp.PairTile(2, 1, 8)),
])
def test_the_kernel_replayed_matches_the_interpreter(text, tile, rng):
    module, count = fused(text, tile)
    op = the_op(module)
    assert count == 1 and dp.tile_reason(op, tile) is None
    inputs = random_inputs(module, rng)
    expected = run(module, inputs)[0]
    named = by_argument(module, inputs)
    got = replay(op, tile, named["x"], named["w0"], named["w1"], named.get("b0"), named.get("b1"), named.get("res"))
    assert relative_error(got, expected) < 2e-3


@pytest.mark.parametrize(("text", "tile"), [
    (block_text(n=2, h=12, w=12, cin=16, c=64, k=16), dp.PairTile(4, 4, 8)),
    (block_text(n=1, h=11, w=9, cin=24, c=48, k=16, stride=2, pads=(0, 0, 1, 1)), dp.PairTile(2, 2, 4)),
    (block_text(n=1, h=5, w=7, cin=8, c=32, k=8, element="bf16"), dp.PairTile(4, 8, 8)),
])
def test_the_expanding_kernel_replayed_matches_the_interpreter(text, tile, rng):
    """The band by the expansion: its fragments straight from the input (zeros past Cin and
    outside the image), expand_epilogue rounded, then the rest as without it."""
    module, count = fused(text, tile, expand=True)
    op = the_op(module)
    assert count == 1 and op.expand is not None and dp.tile_reason(op, tile) is None
    inputs = random_inputs(module, rng)
    expected = run(module, inputs)[0]
    named = by_argument(module, inputs)
    got = replay(op, tile, named["x"], named["w0"], named["w1"], named["b0"], named["b1"],
                 named["x"] if op.residual is not None else None, named["we"], named["be"])
    assert relative_error(got, expected) < 2e-3


def test_the_replay_fails_when_b_takes_the_mmas_own_channel_order(rng, monkeypatch):
    """The permutation must be the same for A and B: B read at the MMA's own k order
    (channels 2t, 2t + 1, 2t + 8, 2t + 9) is wrong."""
    module, _ = fused(pair_text(n=1, h=4, w=4), dp.PairTile(1, 4, 8))
    inputs = random_inputs(module, rng)
    expected = run(module, inputs)[0]
    named = by_argument(module, inputs)
    w1 = named["w1"].copy()
    for chunk in range(w1.shape[3] // 16):  # B in the MMA's order: lane t's words from 2t and 2t + 8
        block = w1[..., 16 * chunk:16 * chunk + 16].copy()
        order = [i for t in range(4) for i in (2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9)]
        w1[..., 16 * chunk:16 * chunk + 16] = block[..., order]
    got = replay(the_op(module), dp.PairTile(1, 4, 8), named["x"], named["w0"], w1, named["b0"], named["b1"], None)
    assert relative_error(got, expected) > 1e-1


# ------------------------------------------------------------------ nvcc


@pytest.mark.slow
@pytest.mark.parametrize("text", [
    block_text(n=32, h=28, w=28, cin=32, c=192, k=32),
    block_text(n=32, h=56, w=56, cin=24, c=144, k=32, stride=2, pads=(0, 0, 1, 1), element="bf16"),
    pair_text(n=32, h=28, w=28, c=192, k=32, residual=True),
    pair_text(n=32, h=112, w=112, c=96, k=24, strides=(2, 2), pads=(0, 0, 1, 1), element="bf16"),
    pair_text(n=1, h=9, w=9, r=5, s=5, pads=(4, 4, 4, 4), dilations=(2, 2), bias=False),
])
def test_units_compile_with_nvcc_without_spills(text, tmp_path):
    """For sm_80 and sm_90, no warning (ptxas warns of spills) and the launchers defined."""
    module, _ = fused(text, expand=True)
    assert_unit_compiles(dp, [the_op(module)], tmp_path)


@pytest.mark.slow
def test_the_plain_fallback_compiles_with_nvcc(tmp_path):
    from tests.support.own_kernel_units import assert_fallback_compiles

    module, _ = fused(pair_text(n=2, h=12, w=12, c=48, k=24, strides=(2, 2), pads=(0, 0, 1, 1), residual=False))
    assert_fallback_compiles(the_op(module), tmp_path)
    module, _ = fused(pair_text(residual=True, element="bf16"))
    assert_fallback_compiles(the_op(module), tmp_path)
    module, _ = fused(block_text(n=2, h=12, w=12, cin=24, c=48, k=24), expand=True)
    assert the_op(module).expand is not None
    assert_fallback_compiles(the_op(module), tmp_path)


@pytest.mark.parametrize(("build", "expansions"), [("sm90-dwpw", 0), ("sm90-block", 4), ("sm90", 4)])
def test_a_small_mobilenet_v2_built_with_the_fusion_computes_what_the_unfused_build_does(build, expansions):
    """bench.models' `sm90-dwpw` and `sm90-block` builds, and the default build (batch 1:
    one wave of the fused kernel), on the importer tests' MobileNetV2:
    its five depthwise convs are each fused with the projection after them (the 12-channel
    ones too, padded to 16 by pad-alignment; block 0's projection split out of the
    back-to-back conv that form-persistent-kernels made of it and block 1's expansion), with
    `sm90-block` the four blocks' expansions too, and the lowered module computes what the
    heuristic build's does, to the bit (each intermediate is rounded as the separate convs'
    results) as the build without the fusion (`sm90-nodwpw`)."""
    from bench.models import HEURISTIC_DB, build_pipeline
    from boltir.compiler import lower_model
    from tests.frontends.onnx_models import image_inputs, mobilenet_v2_onnx

    rng = np.random.default_rng(0)
    model = mobilenet_v2_onnx(rng)
    fused_build, _, collected = lower_model(model, arch="sm90", dtype="f16", pipeline=build_pipeline(build, HEURISTIC_DB))
    # before select-kernels: form-persistent-kernels paired block 0's projection with block 1's expansion
    assert collected.get("fuse-depthwise-pointwise", "back-to-back convs split for the fusion") == 1
    default, _, _ = lower_model(model, arch="sm90", dtype="f16", pipeline=build_pipeline("sm90-nodwpw", HEURISTIC_DB))
    assert not any(isinstance(op, ops.DepthwisePointwiseConv2dOp) for op in default.walk())
    pairs = [op for op in fused_build.walk() if isinstance(op, ops.DepthwisePointwiseConv2dOp)]
    assert len(pairs) == 5 and all(dp.supports(op) for op in pairs)
    assert sum(op.expand is not None for op in pairs) == expansions
    assert not any(isinstance(op, ops.Conv2dOp) and op.prop_value("groups") > 1 for op in fused_build.walk())
    x = image_inputs(rng)
    assert relative_error(run(fused_build, x)[0], run(default, x)[0]) == 0.0


@pytest.mark.slow
def test_a_small_mobilenet_v2_compiles_with_its_blocks_fused_whole(tmp_path):
    """boltir.compile's default build at batch 1 (fuse-depthwise-pointwise{expand=true sms=...}
    in the pipeline, one wave): nvcc builds and links the library (the host program calls the fused launchers with their nine
    pointers), and the manifest lists one launch per block, none on a fallback."""
    import json
    import shutil

    import boltir.compiler
    from tests.frontends.onnx_models import mobilenet_v2_onnx

    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    pipeline = boltir.compiler.full_pipeline(dtype="f16", arch="sm80", cutlass=2, selector="heuristic")
    result = boltir.compiler.compile(mobilenet_v2_onnx(np.random.default_rng(0)), tmp_path / "out", arch="sm80",
                                     dtype="f16", pipeline=pipeline, progress=False)
    assert result.fallbacks == [] and result.compile_fallbacks == []
    families = [launch["family"] for launch in json.loads((tmp_path / "out/manifest.json").read_text())["launches"]]
    assert families.count(dp.FAMILY) == 5 and (tmp_path / "out/libmodel.so").exists()
