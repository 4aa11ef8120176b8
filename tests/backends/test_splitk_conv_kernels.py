"""Our split-reduction conv for few output pixels (codegen/splitk_conv_kernels.py, family
"splitk_conv").

Without a GPU: which convs it takes and why not, the heuristic's rule and tiles
(`few_pixels=cutlass` turns it off), the choice through select-kernels and lower-op-to-cutlass (the
op.conv2d stays with its whole epilogue; a choice it cannot run is one line), the emitted
instance and its arch, the tuner's candidates, and a numpy replay of the kernel, lane by
lane (its copies into swizzled shared memory, the stage ring, ldmatrix's and mma.sync's
fragment layouts, the cluster's partial tiles and their reduction), against the
interpreter. The `slow` test compiles a unit with the real nvcc for sm_90a (skipped
without it). bench/check_splitk_conv.py runs it on a GPU.
"""

from __future__ import annotations


import numpy as np
import pytest

import boltir
from boltir.backends.cuda.codegen import splitk_conv_kernels as sk
from boltir.backends.cuda.codegen.host_program import GENERATORS, build_program
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass, make_selector
from boltir.backends.cuda.select.candidates import candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector, splitk_conv_problem
from boltir.backends.cuda.tune.database import Measurement, TuningDatabase, TuningRecord, tuning_key
from boltir.dialects import op as ops
from boltir.interp import find_entry
from boltir.ir import make_context, parse_module
from boltir.tools import bolt_opt
from tests.passes.equivalence import assert_equivalent
from tests.support.own_kernel_units import mark, SM90A, assert_unit_compiles, conv_of, selected, the_conv
from tests.support.op_modules import conv_text

F16_TOLERANCE = 2e-2

# ResNet-50's batch-1 convs the rule takes, and VGG-16's deepest
LAYER4_3X3 = {"n": 1, "h": 7, "w": 7, "c": 512, "k": 512, "r": 3, "s": 3}
LAYER3_3X3 = {"n": 1, "h": 14, "w": 14, "c": 256, "k": 256, "r": 3, "s": 3}
LAYER3_1X1 = {"n": 1, "h": 14, "w": 14, "c": 1024, "k": 256, "r": 1, "s": 1, "pad": 0}
LAYER2_3X3 = {"n": 1, "h": 28, "w": 28, "c": 128, "k": 128, "r": 3, "s": 3}
VGG_14 = {"n": 1, "h": 14, "w": 14, "c": 512, "k": 512, "r": 3, "s": 3}


def marked(op: ops.Conv2dOp, tile: sk.SplitTile) -> ops.Conv2dOp:
    return mark(op, sk, tile, "sm90")


# ------------------------------------------------------------------ the heuristic


@pytest.mark.parametrize(("shape", "tile"), [
    (LAYER4_3X3, (32, 64, 8)),   # 49 pixels: 16 tiles of 32 x 64, 8 CTAs each
    (LAYER3_3X3, (32, 64, 4)),   # 196 pixels: 28 tiles
    (LAYER3_1X1, (32, 64, 4)),   # a 1024-long 1x1 reduction, 4 k-tiles a CTA
    ({**LAYER4_3X3, "element": "bf16", "epilogue": "bias, relu, residual = add, then relu"}, (32, 64, 8)),
])
def test_the_heuristic_picks_our_kernel(shape, tile):
    module, collected = selected(conv_text(**shape))
    op = the_conv(module)
    choice = KernelChoice.from_attr(op.attributes[KERNEL_ATTR])
    assert (choice.family, choice.arch) == ("splitk_conv", "sm90")
    assert sk.SplitTile.of(choice.tile) == sk.SplitTile(*tile)
    assert sk.supports(op) and not sk.is_fallback(op) and sk.computes(op)
    assert collected.get("lower-op-to-cutlass", "splitk_conv kernels (op.conv2d kept)") == 1


def test_few_pixels_cutlass_keeps_cutlass_for_comparison():
    module, _ = selected(conv_text(**LAYER4_3X3), few_pixels="cutlass")
    assert [op.name for op in find_entry(module).body.ops][:1] == ["cutlass.conv2d_fprop"]
    assert HeuristicSelector(split_convs=False).select(conv_of(**LAYER4_3X3), "sm90").family == "conv2d_fprop"


@pytest.mark.parametrize(("shape", "arch", "cutlass"), [
    ({**LAYER4_3X3, "n": 32}, "sm90", 3),     # batch 32: the 3.x grid fills the GPU
    ({**LAYER2_3X3, "h": 56, "w": 56, "c": 64, "k": 64}, "sm90", 3),  # a 576-long reduction
    ({**LAYER3_1X1, "c": 512}, "sm90", 3),    # 8 k-tiles: too short
    (LAYER2_3X3, "sm90", 3),                  # a 3.x grid of 26 CTAs: a fifth of the SMs
    (VGG_14, "sm90", 3),                      # 32 CTAs: the 3.x conv was faster on the H200
    (LAYER4_3X3, "sm80", 3),                  # clusters need sm_90
    (LAYER4_3X3, "sm90", 2),                  # a build kept to CUTLASS 2.x
    ({**LAYER4_3X3, "c": 96}, "sm90", 3),     # C not a multiple of 64
])
def test_what_the_rule_leaves_to_cutlass(shape, arch, cutlass):
    assert HeuristicSelector(cutlass=cutlass).select(conv_of(**shape), arch).family == "conv2d_fprop"
    module, _ = selected(conv_text(**shape), arch, cutlass=cutlass)
    assert [op.name for op in find_entry(module).body.ops][:1] == ["cutlass.conv2d_fprop"]


def test_the_rule_weighs_the_3x_grid():
    """Taken where the 3.x grid is an eighth of the SMs or less and the clusters bring twice its CTAs."""
    assert splitk_conv_problem(conv_of(**LAYER4_3X3), sms=132) and splitk_conv_problem(conv_of(**LAYER3_3X3), sms=132)
    assert not splitk_conv_problem(conv_of(**{**LAYER4_3X3, "n": 4}), sms=132)  # 196 pixels: 4 x 8 tiles of 64 x 64 > 16
    assert not splitk_conv_problem(conv_of(**LAYER4_3X3), sms=32)  # the 3.x grid (8) is a quarter of 32 SMs


@pytest.mark.parametrize(("shape", "reason"), [
    ({**LAYER4_3X3, "c": 96}, "96 input channels: the kernel takes a multiple of 64"),
    ({**LAYER4_3X3, "k": 20}, "20 output channels: the kernel takes a multiple of 8"),
    ({**LAYER4_3X3, "element": "f32"}, "the input has element type f32; the kernel takes f16, bf16"),
    ({**LAYER4_3X3, "c": 64, "k": 64, "depthwise": True}, "a grouped conv (64 groups)"),
])
def test_convs_it_does_not_take(shape, reason):
    assert sk.conv_reason(conv_of(**shape)) == reason


@pytest.mark.parametrize(("tile", "reason"), [
    (sk.SplitTile(128, 64, 4), "a 128x64 tile: rows and columns are each one of 32, 64"),
    (sk.SplitTile(64, 64, 9), "a split of 9: a cluster takes 1 to 8 CTAs"),
    (sk.SplitTile(64, 64, 0), "a split of 0: a cluster takes 1 to 8 CTAs"),
])
def test_tiles_it_cannot_run(tile, reason):
    assert sk.tile_reason(conv_of(**LAYER4_3X3), tile) == reason


def test_a_split_needs_a_k_tile_per_cta():
    op = conv_of(n=1, h=7, w=7, c=64, k=64, r=1, s=1, pad=0)  # one k-tile
    assert sk.tile_reason(op, sk.SplitTile(64, 64, 2)) == "a split of 2 over 1 k-tiles of 64: a CTA would have none"
    assert sk.default_tile(op, sms=132).split == 1


def test_a_choice_it_cannot_run_is_one_line(tmp_path, capsys):
    text = conv_text(1, 7, 7, 512, 512, 3, 3).replace(
        "epilogue = #op.epilogue<bias, relu>}",
        'epilogue = #op.epilogue<bias, relu>, kernel = {family = "splitk_conv", arch = "sm90", threadblock = array<i64: 64, 48, 4>, '
        "warp = array<i64: 64, 48, 4>, instruction = array<i64: 1, 1, 1>, stages = 4 : i64, alignment = array<i64: 8, 8, 8>, "
        "swizzle = 1 : i64, split_k = 1 : i64}}")
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    assert bolt_opt.main([str(path), "-p", "lower-op-to-cutlass"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad kernel attribute on op.conv2d: a 64x48 tile: rows and columns" in err


def test_a_bad_few_pixels_option_is_one_line(tmp_path, capsys):
    path = tmp_path / "conv.mlir"
    path.write_text(conv_text(**LAYER4_3X3))
    assert bolt_opt.main([str(path), "-p", "select-kernels{few_pixels=splitq}"]) == 1
    assert capsys.readouterr().err == "error: few_pixels must be one of splitk, cutlass; got 'splitq'\n"


def test_select_and_lower_compute_the_same_function(rng):
    """The chosen conv keeps its whole epilogue (bias, activation, residual, activation)."""
    text = conv_text(1, 7, 7, 512, 512, 3, 3, epilogue="bias, hardswish, residual = add, then relu")
    module = parse_module(text)
    after = assert_equivalent(module, [SelectKernelsPass(arch="sm90"), LowerOpToCutlassPass()], rng,
                              tolerance=F16_TOLERANCE)
    op = the_conv(after)
    assert op.residual is not None and op.epilogue == the_conv(module).epilogue and sk.supports(op)


def test_the_tuner_measures_ours_and_cutlass():
    op = conv_of(**LAYER4_3X3)
    found = candidates(op, "sm90", sms=132)
    families = [choice.family for choice in found.choices]
    assert families[0] == "splitk_conv" and "conv2d_fprop" in families
    tiles = [sk.SplitTile.of(c.tile) for c in found.choices if c.family == "splitk_conv"]
    assert tiles[0] == sk.SplitTile(32, 64, 8) and len(tiles) == len(set(tiles)) > 1
    assert all(sk.tile_reason(op, tile) is None for tile in tiles)
    assert "splitk_conv" not in [c.family for c in candidates(op, "sm90", sms=132, split_convs=False).choices]


def test_a_record_that_never_raced_it_gives_way(tmp_path):
    """A tuning record measured without our kernel does not overrule it."""
    op = conv_of(**LAYER4_3X3)
    cutlass_choice = HeuristicSelector(split_convs=False).select(op, "sm90")
    ours = HeuristicSelector().select(op, "sm90")
    assert ours.family == "splitk_conv"
    with TuningDatabase.open(tmp_path / "old.sqlite") as database:
        database.store(TuningRecord(tuning_key(op, "sm90"), cutlass_choice, 0.0123,
                                    [Measurement(cutlass_choice, "ok", 0.0123, 0.0, timing="graph")]))
    selector = make_selector("db", tuning_db=str(tmp_path / "old.sqlite"))
    assert selector.select(op, "sm90") == ours
    assert any("never raced the heuristic's splitk_conv choice" in note for note in selector.notes)
    # with few_pixels=cutlass the record stands
    assert make_selector("db", tuning_db=str(tmp_path / "old.sqlite"), few_pixels="cutlass").select(op, "sm90") == cutlass_choice


# ------------------------------------------------------------------- the instance


def test_the_instance():
    op = marked(conv_of(**LAYER4_3X3), sk.SplitTile(64, 32, 8))
    assert next(g for g in GENERATORS if g.supports(op)) is sk  # before the plain fallbacks
    assert sk.kernel_arch(op) == "sm90"
    instance = sk.emit_instance(op)
    source = instance.source
    assert instance.family == "splitk_conv" and instance.name == sk.kernel_name(op)
    for constant in ("C = 512", "K = 512", "R = 3", "S = 3", "P = 7", "Q = 7", "BM = 64, BN = 32, SPLIT = 8, STAGES = 4"):
        assert constant in source, constant
    for needed in ("__cluster_dims__(SPLIT, 1, 1)", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ldmatrix.sync",
                   "cp.async.cg", "map_shared_rank", "dim3(SPLIT, 16)", "boltir_pdl::enter();"):
        assert needed in source, needed
    assert "const int baked[15] = {1, 7, 7, 512, 512, 3, 3, 7, 7, 1, 1, 1, 1, 1, 1};" in source
    arguments = sk.launch_arguments(op)
    assert arguments.operands == (op.input, op.filter, op.bias, None, op.output) and arguments.workspace


def test_its_unit_compiles_for_sm90_in_any_build():
    """Clusters need sm_90: the unit's arch is the instance's, as a CUTLASS 3.x unit's."""
    from boltir.passes.plan_memory import PlanMemoryPass

    module, _ = selected(conv_text(**LAYER4_3X3))
    PlanMemoryPass().apply(make_context(), module)
    program = build_program(module)
    unit = next(job for job in program.units if job.name.startswith("boltir_splitk_conv_"))
    assert unit.arch == "sm90" and [step.family for step in program.steps] == ["splitk_conv"]


def test_instances_follow_tile_shapes_element_and_epilogue():
    names = set()
    for shape, tile in [(LAYER4_3X3, (64, 32, 8)), (LAYER4_3X3, (64, 64, 8)), ({**LAYER4_3X3, "element": "bf16"}, (64, 32, 8)),
                        ({**LAYER4_3X3, "epilogue": "bias, silu"}, (64, 32, 8)), (LAYER3_3X3, (64, 32, 8))]:
        names.add(sk.kernel_name(marked(conv_of(**shape), sk.SplitTile(*tile))))
    assert len(names) == 5
    bf16 = sk.emit_instance(marked(conv_of(**{**LAYER4_3X3, "element": "bf16"}), sk.SplitTile(64, 32, 8))).source
    assert "f32.bf16.bf16.f32" in bf16 and "using T = __nv_bfloat16" in bf16


# ------------------------------------------- the kernel, lane by lane, in numpy

LANES = np.arange(32)
G, T = LANES // 4, LANES % 4


def swizzled(row, piece):
    return row * sk.K_TILE + ((piece ^ (row & 7)) << 3)


def ldmatrix_x4(smem: np.ndarray, addresses: np.ndarray) -> np.ndarray:
    """[lane, matrix, 2]: matrix j's row l // 4 (its address from lane 8j + l // 4), halves 2(l % 4) and +1."""
    regs = np.empty((32, 4, 2))
    for j in range(4):
        rows = addresses[8 * j + LANES // 4]
        regs[:, j, 0] = smem[rows + 2 * T]
        regs[:, j, 1] = smem[rows + 2 * T + 1]
    return regs


def mma(acc: np.ndarray, a: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> None:
    """m16n8k16 row.col: a [lane, 4, 2] (rows g, g + 8 at k 2t, then at k 2t + 8), b [lane, 2]
    (k 2t / 2t + 8, column g); acc [lane, 4]: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)."""
    A, B = np.zeros((16, 16)), np.zeros((16, 8))
    for x in range(2):
        A[G, 2 * T + x], A[G + 8, 2 * T + x] = a[:, 0, x], a[:, 1, x]
        A[G, 2 * T + 8 + x], A[G + 8, 2 * T + 8 + x] = a[:, 2, x], a[:, 3, x]
        B[2 * T + x, G], B[2 * T + 8 + x, G] = b0[:, x], b1[:, x]
    D = A @ B
    acc[:, 0], acc[:, 1], acc[:, 2], acc[:, 3] = acc[:, 0] + D[G, 2 * T], acc[:, 1] + D[G, 2 * T + 1], \
        acc[:, 2] + D[G + 8, 2 * T], acc[:, 3] + D[G + 8, 2 * T + 1]


def replay(op: ops.Conv2dOp, tile: sk.SplitTile, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The sums the kernel forms (before the epilogue) as [pixels, K], in float64: what the
    template does, thread by thread and lane by lane."""
    c = sk._context(op, tile)
    n, h, w, ch, k, r, s, p, q = (c[key] for key in ("n", "h", "w", "c", "k", "r", "s", "p", "q"))
    bm, bn, split, stages, bk = tile.block_m, tile.block_n, tile.split, c["stages"], sk.K_TILE
    m_total, reduction = n * p * q, r * s * ch
    kt_total, tiles_n = reduction // bk, -(-k // bn)
    warp_m_size, warp_n_size = bm // 2, bn // 2
    mf, nf = warp_m_size // 16, warp_n_size // 8
    a_pieces, b_pieces, stage_halves, red_stride = bm * bk // 8 // 128, bn * bk // 8 // 128, (bm + bn) * bk, bn + 8
    xf, wf = x.reshape(-1), weight.reshape(-1)
    out = np.full((m_total, k), np.nan)
    for tile_index in range(c["tiles"]):
        m0, n0 = (tile_index // tiles_n) * bm, (tile_index % tiles_n) * bn
        partials = []
        for rank in range(split):
            begin, end = rank * kt_total // split, (rank + 1) * kt_total // split
            smem = np.full(stages * stage_halves, np.nan)  # a stage read before its copy shows as NaN

            def load_stage(kt, stage):
                base, k0 = stage * stage_halves, kt * bk
                tap, c0 = k0 // ch, k0 % ch
                rr, ss = tap // s, tap % s
                for tid in range(128):
                    piece = tid % 8
                    for i in range(a_pieces):
                        row = tid // 8 + i * 16
                        m = m0 + row
                        pixel = m if m < m_total else 0
                        qq, pp, image = pixel % q, (pixel // q) % p, pixel // (p * q)
                        hh, ww = pp * c["sh"] - c["pad_h"] + rr * c["dh"], qq * c["sw"] - c["pad_w"] + ss * c["dw"]
                        inside = m < m_total and 0 <= hh < h and 0 <= ww < w
                        at = base + swizzled(row, piece)
                        start = ((image * h + hh) * w + ww) * ch + c0 + piece * 8
                        smem[at:at + 8] = xf[start:start + 8] if inside else 0.0
                    for i in range(b_pieces):
                        row = tid // 8 + i * 16
                        at = base + bm * bk + swizzled(row, piece)
                        start = (n0 + row) * reduction + k0 + piece * 8
                        smem[at:at + 8] = wf[start:start + 8] if n0 + row < k else 0.0

            acc = np.zeros((4, mf, nf, 32, 4))
            for stage in range(stages - 1):
                if begin + stage < end:
                    load_stage(begin + stage, stage)
            for kt in range(begin, end):
                nxt = kt + stages - 1
                if nxt < end:
                    load_stage(nxt, (nxt - begin) % stages)
                a_base = ((kt - begin) % stages) * stage_halves
                b_base = a_base + bm * bk
                for warp in range(4):
                    warp_m, warp_n = (warp // 2) * warp_m_size, (warp % 2) * warp_n_size
                    for ks in range(bk // 16):
                        a = [ldmatrix_x4(smem, a_base + swizzled(warp_m + i * 16 + LANES % 16, 2 * ks + LANES // 16))
                             for i in range(mf)]
                        b = {}
                        for j in range(0, nf, 2):
                            d = ldmatrix_x4(smem, b_base + swizzled(warp_n + j * 8 + (LANES & 7) + ((LANES >> 4) << 3),
                                                                     2 * ks + ((LANES >> 3) & 1)))
                            b[j], b[j + 1] = (d[:, 0], d[:, 1]), (d[:, 2], d[:, 3])
                        for i in range(mf):
                            for j in range(nf):
                                mma(acc[warp, i, j], a[i], *b[j])
            partial = np.full((bm, red_stride), np.nan)
            for warp in range(4):
                warp_m, warp_n = (warp // 2) * warp_m_size, (warp % 2) * warp_n_size
                for i in range(mf):
                    for e in range(2):
                        rows = warp_m + i * 16 + G + 8 * e
                        for j in range(nf):
                            columns = warp_n + j * 8 + 2 * T
                            partial[rows, columns] = acc[warp, i, j, :, 2 * e]
                            partial[rows, columns + 1] = acc[warp, i, j, :, 2 * e + 1]
            partials.append(partial)
        groups = bm * bn // 8
        for rank in range(split):
            for group in range(rank * groups // split, (rank + 1) * groups // split):
                row, column = group // (bn // 8), (group % (bn // 8)) * 8
                m, nn = m0 + row, n0 + column
                if m >= m_total or nn >= k:
                    continue
                assert np.isnan(out[m, nn:nn + 8]).all(), "an output written twice"
                out[m, nn:nn + 8] = sum(part[row, column:column + 8] for part in partials)
    return out


@pytest.mark.parametrize(("shape", "tile"), [
    ({"n": 1, "h": 5, "w": 5, "c": 128, "k": 48, "r": 3, "s": 3}, (32, 32, 4)),  # 18 k-tiles over 4; a partial column tile
    ({"n": 2, "h": 9, "w": 7, "c": 64, "k": 64, "r": 3, "s": 3, "stride": 2, "pads": (1, 0, 2, 1), "dilation": 2}, (32, 64, 3)),
    ({"n": 1, "h": 6, "w": 6, "c": 256, "k": 32, "r": 1, "s": 1, "pad": 0}, (64, 32, 2)),  # 1x1, 36 pixels of a 64-row tile
    ({"n": 1, "h": 4, "w": 4, "c": 64, "k": 16, "r": 3, "s": 3}, (64, 32, 8)),  # 9 k-tiles over 8: one CTA takes two
    ({"n": 1, "h": 3, "w": 5, "c": 64, "k": 40, "r": 2, "s": 2, "pad": 0}, (32, 64, 1)),  # no split
])
def test_the_kernel_replayed_matches_the_interpreter(rng, shape, tile):
    op = conv_of(**shape, epilogue="none")
    tile = sk.SplitTile(*tile)
    assert sk.tile_reason(marked(op, tile), tile) is None
    x = rng.standard_normal(op.input.type.get_shape()).astype(np.float16)
    weight = rng.standard_normal(op.filter.type.get_shape()).astype(np.float16)
    (expected,) = boltir.interp.run(op.parent_op().parent_op(), {"arg0": x, "arg1": weight})
    got = replay(op, tile, x.astype(np.float64), weight.astype(np.float64))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got.reshape(expected.shape), expected.astype(np.float64), rtol=1e-2, atol=3e-2)


# ------------------------------------------------------------------- with nvcc


@pytest.mark.slow
def test_the_unit_compiles_with_nvcc_for_sm90a(tmp_path):
    shapes = [(LAYER4_3X3, None), (LAYER3_3X3, None), ({**LAYER4_3X3, "element": "bf16",
               "epilogue": "bias, relu, residual = add, then relu"}, None), (LAYER2_3X3, (32, 32, 5))]
    op_list = [marked(conv_of(**shape), sk.SplitTile(*tile) if tile else sk.default_tile(conv_of(**shape), sms=132))
               for shape, tile in shapes]
    assert_unit_compiles(sk, op_list, tmp_path, SM90A)
