"""Our streaming conv for narrow channel counts (codegen/stream_conv_kernels.py, family
"stream_conv"): 1x1 convs, and small windows over a padded input (MobileNet's blocked stem).

Without a GPU: which convs it takes and why not, its tiles, the heuristic's rule, the
choice through select-kernels and lower-op-to-cutlass (the op.conv2d stays with its whole
epilogue; a choice it cannot run and a bad option are one line), the tuner's candidates,
and a numpy replay of the kernel's fragment maths (the permuted k order of the A and B
loads, each tap's shifted rows, the interleaved n8 tiles of the stores) against the
interpreter. The `slow` test
compiles a unit with the real nvcc (skipped without it).
"""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import stream_conv_kernels as pk
from boltir.backends.cuda.codegen.host_program import GENERATORS
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import MAX_POINTWISE, candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.interp.op import apply_epilogue
from boltir.tools import bolt_opt
from tests.passes.equivalence import assert_equivalent
from tests.support.op_modules import conv_text
from tests.support.own_kernel_units import assert_unit_compiles, conv_of, mark, selected

RELU6 = "bias, clip(0.0, 6.0)"
EXPAND = {"n": 32, "h": 112, "w": 112, "c": 16, "k": 96, "r": 1, "s": 1, "pad": 0, "epilogue": RELU6}
PROJECT = {"n": 32, "h": 56, "w": 56, "c": 144, "k": 24, "r": 1, "s": 1, "pad": 0, "epilogue": "bias, residual = add"}
NARROW_IN = {"n": 32, "h": 56, "w": 56, "c": 24, "k": 144, "r": 1, "s": 1, "pad": 0, "epilogue": RELU6}
BLOCKED_STEM = {"n": 32, "h": 113, "w": 113, "c": 16, "k": 32, "r": 2, "s": 2, "pad": 0, "epilogue": RELU6}
"""MobileNetV2's stem after space-to-depth-stem: 3x3/2 on 3 channels as 2x2/1 on 16."""


def marked(op, tile: pk.StreamTile):
    return mark(op, pk, tile, "sm80")


# ------------------------------------------------------------------ what it takes


def test_it_is_a_generator_of_the_host_program():
    assert pk in GENERATORS


@pytest.mark.parametrize(("shape", "reason"), [
    ({**EXPAND, "r": 3, "s": 3, "pad": 1}, "convs of stride 1 without padding or dilation"),
    ({**EXPAND, "stride": 2}, "convs of stride 1 without padding or dilation"),
    ({**EXPAND, "pad": 1}, "convs of stride 1 without padding or dilation"),
    ({**BLOCKED_STEM, "r": 5, "s": 5}, "a 5x5 window: the kernel takes at most 16 taps"),
    ({**EXPAND, "c": 18}, "18 input channels: the kernel takes a multiple of 4 up to 256"),
    ({**EXPAND, "c": 320}, "320 input channels"),
    ({**EXPAND, "k": 100}, "100 output channels: the kernel takes a multiple of 8"),
    ({**EXPAND, "element": "f32"}, "the kernel takes f16, bf16"),
])
def test_convs_it_does_not_take(shape, reason):
    assert reason in pk.conv_reason(conv_of(**shape))


def test_a_depthwise_conv_is_not_its():
    assert "groups" in pk.conv_reason(conv_of(n=1, h=8, w=8, c=32, k=32, r=1, s=1, pad=0, depthwise=True))


@pytest.mark.parametrize(("tile", "reason"), [
    (pk.StreamTile(3, 1, 4), "fragments of (1, 2, 4)"),
    (pk.StreamTile(1, 8, 4), "8 slices of 96 output channels in 4 warps"),
    (pk.StreamTile(1, 1, 4), None),
    (pk.StreamTile(2, 2, 8), None),
])
def test_tiles(tile, reason):
    got = pk.tile_reason(conv_of(**EXPAND), tile)
    assert got is None if reason is None else reason in got


def test_registers_bound_the_channels_a_warp_takes():
    """24 -> 144 on one warp: 2 k-chunks x 18 n8 tiles x 2 = 72 filter words and 72
    accumulators, over 64: two slices (36 and 36) fit."""
    op = conv_of(**NARROW_IN)
    assert "72 accumulators" in pk.tile_reason(op, pk.StreamTile(1, 1, 4))
    assert pk.default_tile(op) == pk.StreamTile(1, 2, 4)
    assert pk.default_tile(conv_of(**EXPAND)) == pk.StreamTile(1, 1, 4)


def test_a_windows_taps_count_in_the_registers():
    """The blocked stem: 4 taps x 1 chunk x 4 n8 tiles x 2 = 32 filter words. 3x3 taps of 16
    channels to 64: 9 x 8 x 2 = 144 words on one warp, 72 on two. 3x3 taps of 64 channels:
    two units' A fragments alone are 288 words, so no tile fits (the heuristic passes)."""
    assert pk.default_tile(conv_of(**BLOCKED_STEM)) == pk.StreamTile(2, 1, 4)  # a window: two fragments a unit
    assert pk.tile_reason(conv_of(**BLOCKED_STEM), pk.StreamTile(1, 1, 4)) is None
    nine = conv_of(**{**BLOCKED_STEM, "r": 3, "s": 3, "k": 64})
    assert "3x3 taps of 16 input channels hold 144 filter words" in pk.tile_reason(nine, pk.StreamTile(1, 1, 4))
    assert pk.default_tile(nine) == pk.StreamTile(1, 2, 4)  # two fragments a unit do not fit it
    assert pk.default_tile(conv_of(**{**BLOCKED_STEM, "r": 3, "s": 3, "c": 64})) is None


def test_two_units_in_flight_must_fit_the_registers():
    """144 -> 24 with its residual: one fragment a unit takes 150 words, four 402."""
    op = conv_of(**PROJECT)
    assert pk.tile_reason(op, pk.StreamTile(1, 1, 4)) is None
    assert "take 402 words a thread" in pk.tile_reason(op, pk.StreamTile(4, 1, 4))
    assert all(tile.fragments == 1 for tile in pk.tiles(op))


def test_the_tuners_tiles_start_from_the_default_and_change_one_number_first():
    op = conv_of(**EXPAND)
    tiles = pk.tiles(op)
    assert tiles[0] == pk.default_tile(op) and len(set(tiles)) == len(tiles)
    assert all(pk.tile_reason(op, tile) is None for tile in tiles)
    changed = [sum(a != b for a, b in zip((t.fragments, t.slices, t.warps), (1, 1, 4))) for t in tiles[1:]]
    assert changed == sorted(changed) and changed[0] == 1


# ------------------------------------------------------------------ the heuristic


@pytest.mark.parametrize(("shape", "family"), [
    (EXPAND, "stream_conv"),
    (PROJECT, "stream_conv"),
    (NARROW_IN, "stream_conv"),
    ({**EXPAND, "c": 32, "k": 16, "epilogue": "bias"}, "stream_conv"),
    # 64 or more on both sides: the persistent 3.x GEMM streams these at 2.9-3.3 TB/s
    ({**EXPAND, "h": 56, "w": 56, "c": 64, "k": 256}, "conv2d_fprop"),
    # too few bytes to stream (batch 1 at 14²): the conv kernels' rules
    ({**EXPAND, "n": 1, "h": 14, "w": 14}, "gemm"),
])
def test_the_heuristic_gives_it_memory_bound_narrow_1x1_convs(shape, family):
    choice = HeuristicSelector(sms=132).select(conv_of(**shape), "sm90")
    assert choice.family == family or (family == "gemm" and choice.family != "stream_conv")


@pytest.mark.parametrize(("shape", "family"), [
    (BLOCKED_STEM, "stream_conv"),  # 1.6 GFLOP against 39 MB: DRAM-bound
    # ResNet-50's blocked stem (4x4 on 16 channels to 64): 13 GFLOP, bound by the tensor cores
    ({**BLOCKED_STEM, "h": 115, "w": 115, "k": 64, "r": 4, "s": 4}, "halo_conv"),
    # too few bytes to stream (1.2 MB at batch 1), past 16 channels (not a stem), or padded
    # (the streaming kernel reads no halo): the halo conv's general form, as its 32 output
    # channels end inside a 64-channel block (1% faster than our stem conv on MobileNetV2
    # b1's stem, timed in turns: bench/RESULTS.md, thirty-sixth session)
    ({**BLOCKED_STEM, "n": 1}, "halo_conv"),
    ({**BLOCKED_STEM, "c": 32}, "halo_conv"),
    ({**BLOCKED_STEM, "pad": 1}, "halo_conv"),
    ({**BLOCKED_STEM, "n": 1, "c": 4}, "stem_conv"),  # 4 channels: under the halo conv's multiple of 8, our stem conv
])
def test_the_heuristic_gives_it_memory_bound_small_window_convs_on_few_channels(shape, family):
    assert HeuristicSelector(sms=132).select(conv_of(**shape), "sm90").family == family


def test_the_window_rule_can_be_turned_off():
    """narrow_windows=stem: the rules after it (with narrow_convs=halo-aligned, our stem conv)."""
    op = conv_of(**BLOCKED_STEM)
    assert HeuristicSelector(sms=132).select(op, "sm80").family == "stem_conv"
    assert HeuristicSelector(sms=132, stream_windows=False).select(op, "sm90").family == "halo_conv"
    assert HeuristicSelector(sms=132, stream_windows=False, halo_general=False).select(op, "sm90").family == "stem_conv"
    module, _ = selected(conv_text(**BLOCKED_STEM), narrow_windows="stem", narrow_convs="halo-aligned")
    (conv,) = [o for o in module.walk() if o.name == "op.conv2d"]
    assert KernelChoice.from_attr(conv.attributes[KERNEL_ATTR]).family == "stem_conv"


def test_it_is_an_sm90_builds_rule_and_can_be_turned_off():
    op = conv_of(**EXPAND)
    assert HeuristicSelector(sms=132).select(op, "sm80").family != "stream_conv"
    assert HeuristicSelector(sms=132, narrow_pointwise=False).select(op, "sm90").family == "conv2d_fprop"


def test_select_and_lower_keep_the_conv_with_its_choice():
    module, collected = selected(conv_text(**EXPAND))
    (op,) = [o for o in module.walk() if o.name == "op.conv2d"]
    assert KernelChoice.from_attr(op.attributes[KERNEL_ATTR]).family == "stream_conv"
    assert pk.computes(op) and pk.supports(op)
    module, _ = selected(conv_text(**EXPAND), narrow_pointwise="cutlass")
    assert not [o for o in module.walk() if o.name == "op.conv2d"]


@pytest.mark.parametrize("window", [1, 2])
def test_select_and_lower_compute_the_same_function(rng, window):
    from boltir.ir import parse_module

    module = parse_module(conv_text(n=2, h=9, w=7, c=24, k=40, r=window, s=window, pad=0,
                                    epilogue="bias, relu, residual = add, then relu"))
    assert_equivalent(module, [SelectKernelsPass(arch="sm90"), LowerOpToCutlassPass()], rng, tolerance=2e-2)


def test_the_tuner_measures_ours_then_the_stem_conv_for_a_window():
    found = candidates(conv_of(**BLOCKED_STEM), "sm90", 132)
    assert found.choices[0].family == "stream_conv"
    assert {c.family for c in found.choices} >= {"stream_conv", "stem_conv"}


def test_the_tuner_measures_ours_and_cutlass():
    op = conv_of(**EXPAND)
    found = candidates(op, "sm90", 132)
    ours = [c for c in found.choices if c.family == "stream_conv"]
    assert found.choices[0].family == "stream_conv" and 1 < len(ours) <= MAX_POINTWISE
    assert {c.family for c in found.choices} >= {"stream_conv", "conv2d_fprop"}


def test_a_choice_it_cannot_run_is_one_line(tmp_path, capsys):
    text = conv_text(1, 8, 8, 16, 96, 1, 1, pad=0).replace(
        "epilogue = #op.epilogue<bias, relu>}",
        'epilogue = #op.epilogue<bias, relu>, kernel = {family = "stream_conv", arch = "sm80", threadblock = array<i64: 1, 8, 4>, '
        "warp = array<i64: 1, 8, 4>, instruction = array<i64: 1, 1, 1>, stages = 2 : i64, alignment = array<i64: 8, 8, 8>, "
        "swizzle = 1 : i64, split_k = 1 : i64}}")
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    assert bolt_opt.main([str(path), "-p", "lower-op-to-cutlass"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad kernel attribute on op.conv2d: 8 slices of 96 output channels in 4 warps" in err


def test_a_bad_narrow_pointwise_option_is_one_line(tmp_path, capsys):
    path = tmp_path / "conv.mlir"
    path.write_text(conv_text(1, 8, 8, 16, 96, 1, 1, pad=0))
    assert bolt_opt.main([str(path), "-p", "select-kernels{narrow_pointwise=wide}"]) == 1
    assert capsys.readouterr().err == "error: narrow_pointwise must be one of stream, cutlass; got 'wide'\n"


def test_a_bad_narrow_windows_option_is_one_line(tmp_path, capsys):
    path = tmp_path / "conv.mlir"
    path.write_text(conv_text(**BLOCKED_STEM))
    assert bolt_opt.main([str(path), "-p", "select-kernels{narrow_windows=cutlass}"]) == 1
    assert capsys.readouterr().err == "error: narrow_windows must be one of stream, stem; got 'cutlass'\n"


# ------------------------------------------------------------------- the instance


@pytest.mark.parametrize(("tiles", "groups"), [
    (12, [(0, 4), (4, 4), (8, 4)]),
    (9, [(0, 4), (4, 4), (8, 1)]),
    (7, [(0, 4), (4, 2), (6, 1)]),
    (3, [(0, 2), (2, 1)]),
    (1, [(0, 1)]),
])
def test_store_groups_take_fours_then_a_two_and_a_one(tiles, groups):
    assert pk.store_groups(tiles) == groups


def test_the_instance_bakes_the_problem_and_the_tile():
    op = marked(conv_of(**EXPAND), pk.StreamTile(2, 1, 4))
    source = pk.emit_instance(op).source
    assert "constexpr index_t M = 401408;" in source and "constexpr int C = 16, K = 96;" in source
    assert "constexpr int FR = 2;" in source and "constexpr int SLICES = 1;" in source
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in source and "__shared__" not in source
    bf16 = pk.emit_instance(marked(conv_of(**{**EXPAND, "element": "bf16"}), pk.StreamTile(1, 1, 4))).source
    assert "f32.bf16.bf16.f32" in bf16 and pk.kernel_name(op) != pk.kernel_name(marked(conv_of(**EXPAND), pk.StreamTile(1, 1, 4)))
    stem = pk.emit_instance(marked(conv_of(**BLOCKED_STEM), pk.StreamTile(1, 1, 4))).source
    assert "constexpr int R = 2, S = 2, TAPS = R * S;" in stem and "constexpr int HI = 113, WI = 113, HO = 112, WO = 112;" in stem


def replay(op, tile: pk.StreamTile, x: np.ndarray, weight: np.ndarray, bias, residual) -> np.ndarray:
    """The kernel's fragment maths in numpy: each lane's 8-byte loads (channels 4t .. 4t + 3
    of a k16 chunk) placed where mma.sync's m16n8k16 fragments put them, the products, and
    each lane's accumulators stored at its interleaved channels."""
    n, h, w, c = x.shape
    k, r, s, _ = weight.shape
    p, q = h - r + 1, w - s + 1
    chunks = -(-c // 16)
    m_total = n * p * q

    def source(m, tap):  # the input pixel under output pixel m's tap
        image, rest = divmod(m, p * q)
        y, x_ = divmod(rest, q)
        return x[image, y + tap // s, x_ + tap % s]

    kw = k // tile.slices
    nt = kw // 8
    group_of = {j: (start, size) for start, size in pk.store_groups(nt) for j in range(start, start + size)}
    out = np.full((m_total, k), np.nan)

    def channel(slice_, j, col):
        start, size = group_of[j]
        return slice_ * kw + 8 * start + 2 * size * (col // 2) + 2 * (j - start) + col % 2

    def four(row, kc, t):
        first = 16 * kc + 4 * t
        return row[first:first + 4] if first < c else np.zeros(4)

    for slice_ in range(tile.slices):
        for base in range(0, m_total, 16):
            d = np.zeros((16, 8 * nt))
            for tap, kc in ((tap, kc) for tap in range(r * s) for kc in range(chunks)):
                rows = [source(base + i, tap) if base + i < m_total else np.zeros(c) for i in range(16)]
                wt = weight[:, tap // s, tap % s, :]
                a, b = np.zeros((16, 16)), np.zeros((16, 8 * nt))
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for e in (0, 1):
                        word = four(rows[g + 8 * e], kc, t)
                        a[g + 8 * e, 2 * t:2 * t + 2], a[g + 8 * e, 2 * t + 8:2 * t + 10] = word[:2], word[2:]
                    for j in range(nt):
                        word = four(wt[channel(slice_, j, g)], kc, t)
                        b[2 * t:2 * t + 2, 8 * j + g], b[2 * t + 8:2 * t + 10, 8 * j + g] = word[:2], word[2:]
                d += a @ b
            for lane in range(32):
                g, t = lane // 4, lane % 4
                for e in (0, 1):
                    m = base + g + 8 * e
                    if m >= m_total:
                        continue
                    for j in range(nt):
                        for col in (2 * t, 2 * t + 1):
                            out[m, channel(slice_, j, col)] = d[g + 8 * e, 8 * j + col]
    acc = out.reshape(n, p, q, k)
    return apply_epilogue(acc, op.epilogue, bias, residual, channel_axis=3)


@pytest.mark.parametrize(("shape", "tile"), [
    ({"n": 1, "h": 5, "w": 7, "c": 16, "k": 96}, pk.StreamTile(1, 1, 4)),      # 35 pixels: a partial fragment
    ({"n": 2, "h": 3, "w": 5, "c": 24, "k": 48}, pk.StreamTile(2, 2, 4)),      # half a k16 chunk; 3 n8 tiles a warp
    ({"n": 1, "h": 4, "w": 4, "c": 36, "k": 16}, pk.StreamTile(1, 1, 8)),      # C = 36: a quarter chunk; 2 n8 tiles
    ({"n": 1, "h": 6, "w": 6, "c": 144, "k": 24}, pk.StreamTile(1, 1, 4)),     # MobileNet's project: 9 chunks, 3 tiles
    ({"n": 1, "h": 2, "w": 9, "c": 32, "k": 128}, pk.StreamTile(4, 4, 8)),
    ({"n": 1, "h": 3, "w": 7, "c": 24, "k": 144}, pk.StreamTile(1, 2, 4)),     # 9 n8 tiles a warp: groups 4 + 4 + 1
    ({"n": 1, "h": 3, "w": 7, "c": 16, "k": 56}, pk.StreamTile(1, 1, 4)),      # 7: 4 + 2 + 1
    ({"n": 2, "h": 5, "w": 7, "c": 16, "k": 32, "r": 2, "s": 2}, pk.StreamTile(1, 1, 4)),  # the blocked stem's window
    ({"n": 1, "h": 6, "w": 5, "c": 8, "k": 16, "r": 3, "s": 3}, pk.StreamTile(2, 2, 4)),   # half a chunk a tap
    ({"n": 1, "h": 3, "w": 9, "c": 20, "k": 24, "r": 1, "s": 3}, pk.StreamTile(1, 1, 8)),  # a row window, rows crossed
])
def test_the_kernels_fragment_maths_match_the_interpreter(rng, shape, tile):
    shape = {"r": 1, "s": 1, **shape}
    op = conv_of(**shape, pad=0, epilogue="bias, relu, residual = add, then relu")
    assert pk.conv_reason(op) is None and pk.tile_reason(op, tile) is None
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float16)
    weight = rng.standard_normal(op.filter.type.get_shape()).astype(np.float16)
    bias = rng.standard_normal(shape["k"]).astype(np.float16)
    residual = rng.standard_normal(op.output.type.get_shape()).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight, "arg2": bias, "arg3": residual})
    got = replay(op, tile, *(v.astype(np.float64) for v in (x, weight, bias, residual)))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, expected.astype(np.float64), rtol=1e-2, atol=2e-2)


# ------------------------------------------------------------------- with nvcc


@pytest.mark.slow
def test_the_unit_compiles_with_nvcc(tmp_path):
    """MobileNetV2's expand and project convs (the second with a residual), a bf16 one on 24
    channels at the tuner's widest tile, and a partial last fragment."""
    ops_ = [marked(conv_of(**EXPAND), pk.StreamTile(1, 1, 4)),
            marked(conv_of(**PROJECT), pk.StreamTile(1, 1, 8)),
            marked(conv_of(**{**NARROW_IN, "element": "bf16"}), pk.StreamTile(4, 2, 8)),
            marked(conv_of(n=1, h=5, w=7, c=36, k=40, r=1, s=1, pad=0), pk.StreamTile(1, 1, 4)),
            marked(conv_of(**BLOCKED_STEM), pk.StreamTile(1, 1, 4))]
    assert_unit_compiles(pk, ops_, tmp_path)
