"""Our GEMM for few rows (codegen/skinny_gemm_kernels.py, family "skinny_gemm").

Without a GPU: which GEMMs it takes and why not, the heuristic's choice (sm80 and sm90,
and `small_m=cutlass` keeping CUTLASS's), its tiles, the choice through select-kernels and
lower-op-to-cutlass (the op.gemm stays, its epilogue whole; a choice it cannot run is one
line), the emitted instance (constants, the CUTLASS GEMM launcher's ABI, deduplication),
the tuner's candidates (ours, then CUTLASS's), and a tuning record that never raced it.
The `slow` test compiles a unit of instances with the real nvcc (skipped without it).
"""

from __future__ import annotations

import re

import pytest

from boltir.backends.cuda.codegen import skinny_gemm_kernels as sk
from boltir.backends.cuda.passes.lower_op_to_cutlass import LowerOpToCutlassPass
from boltir.backends.cuda.passes.select_kernels import SelectKernelsPass
from boltir.backends.cuda.select.candidates import MAX_SKINNY, candidates
from boltir.backends.cuda.select.choice import KERNEL_ATTR, KernelChoice
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.backends.cuda.tune.database import Measurement, TuningDatabase, TuningRecord, tuning_key
from boltir.backends.cuda.tune.selectors import DatabaseSelector
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.ir import make_context, parse_module
from tests.passes.equivalence import assert_equivalent
from tests.support.own_kernel_units import assert_unit_compiles, selected
from tests.support.op_modules import gemm_text, tensor


def the_gemm(module) -> ops.GemmOp:
    return next(op for op in module.walk() if isinstance(op, ops.GemmOp))


def marked(text: str, tile: sk.SkinnyTile) -> ops.GemmOp:
    op = the_gemm(parse_module(text))
    op.attributes[KERNEL_ATTR] = KernelChoice(sk.FAMILY, "sm80", tile.as_tile(), (8, 8, 1)).to_attr()
    return op


def row_b_text(m: int, n: int, k: int) -> str:
    """A GEMM whose weight is K x N ("row" B, a MatMul's)."""
    args = f"%x: {tensor((m, k), 'f16')}, %w: {tensor((k, n), 'f16')}"
    out = tensor((m, n), "f16")
    return (f"func.func @main({args}) -> {out} {{\n  %0 = op.gemm %x, %w : ({tensor((m, k), 'f16')}, "
            f"{tensor((k, n), 'f16')}) -> {out}\n  func.return %0 : {out}\n}}\n")


# ------------------------------------------------------------------ what it takes


@pytest.mark.parametrize("text", [
    gemm_text(1, 1000, 2048),
    gemm_text(16, 4096, 4096, element="bf16", epilogue="bias, gelu"),
    gemm_text(1, 37, 72, epilogue=""),
    gemm_text(4, 64, 128, epilogue="bias, relu, residual = add", batch=2, shared_b=True),  # 8 rows
    gemm_text(32, 1000, 1280),  # MobileNetV2's classifier at batch 32
    gemm_text(8, 64, 128, batch=4, shared_b=True),  # 32 rows
])
def test_it_takes_linear_layers_with_few_rows(text):
    assert sk.gemm_reason(the_gemm(parse_module(text))) is None


@pytest.mark.parametrize(("text", "reason"), [
    (gemm_text(33, 1000, 2048), "33 rows of A: the kernel takes at most 32"),
    (gemm_text(8, 64, 128, batch=8, shared_b=True), "64 rows of A"),
    (gemm_text(2, 64, 128, batch=2), "the weight has batch dimensions"),
    (gemm_text(1, 1000, 2044), "K = 2044 is not a multiple of 8"),
    (gemm_text(1, 1000, 2048, element="f32"), "A has element type f32"),
    (row_b_text(1, 768, 768), "an N x K weight"),
])
def test_what_it_refuses_and_why(text, reason):
    assert reason in sk.gemm_reason(the_gemm(parse_module(text)))


# ------------------------------------------------------------------ the heuristic


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
@pytest.mark.parametrize(("m", "n", "k", "tile"), [
    # the batch-1 classifiers: 8 weight rows (125 CTAs), 16 warps, four chunks ahead
    (1, 1000, 2048, (8, 16, 4)),
    (1, 1000, 1280, (8, 16, 4)),
    # VGG-16's FC layers: 16 rows once that still gives every multiprocessor a CTA
    (1, 4096, 25088, (16, 16, 2)),
    (1, 4096, 4096, (16, 16, 2)),
    # a warp per chunk of K where chunks are few (12 here: 16 warps, one round of loads)
    (1, 2304, 768, (16, 16, 2)),
    (1, 1000, 4096, (8, 16, 4)),
    # 9 to 16 rows: two column blocks, a shallower unroll
    (16, 1000, 2048, (8, 16, 2)),
    # a short K: no more warps than the power of two that covers its chunks
    (1, 37, 72, (8, 2, 4)),
])
def test_the_heuristic_picks_it(arch, m, n, k, tile):
    op = the_gemm(parse_module(gemm_text(m, n, k)))
    choice = HeuristicSelector().select(op, arch)
    sms = 108 if arch == "sm80" else 132
    assert choice.family == sk.FAMILY and choice.arch == "sm80"
    assert sk.SkinnyTile.of(choice.tile) == sk.default_tile(op, sms)
    if arch == "sm90":
        assert sk.SkinnyTile.of(choice.tile) == sk.SkinnyTile(*tile)


@pytest.mark.parametrize(("m", "n", "ours"), [(32, 1000, True), (17, 1000, True), (32, 4096, False), (17, 2112, False),
                                             (16, 4096, True)])
def test_past_16_rows_the_heuristic_takes_it_only_for_narrow_weights(m, n, ours):
    """Past 16 rows every CTA reads all of A from the L2: the kernel pays where CUTLASS's
    64-column tiles leave three quarters of the GPU idle (a batch-32 classifier), not with
    4096 columns (VGG-16's fc7 at batch 32, where CUTLASS was as fast)."""
    gemm = the_gemm(parse_module(gemm_text(m, n, 2048)))
    assert (sk.payoff_reason(gemm, 132) is None) is ours
    assert (HeuristicSelector().select(gemm, "sm90").family == sk.FAMILY) is ours
    if not ours:
        assert sk.payoff_reason(gemm, 132).endswith("fill a quarter of the 132 multiprocessors")


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_more_rows_or_small_m_cutlass_keep_cutlass(arch):
    assert HeuristicSelector().select(the_gemm(parse_module(gemm_text(33, 1000, 2048))), arch).family == "gemm"
    module, _ = selected(gemm_text(1, 1000, 2048), arch, small_m="cutlass")
    assert any(op.name == "cutlass.gemm" for op in module.walk())


def test_an_unknown_small_m_is_one_line():
    with pytest.raises(BoltError, match=r"^error: small_m must be one of skinny, cutlass; got 'tiles'$"):
        selected(gemm_text(1, 1000, 2048), small_m="tiles")


# ------------------------------------------------------- select and lower


@pytest.mark.parametrize("epilogue", ["bias", "bias, relu", "bias, gelu, residual = add", ""])
def test_the_gemm_stays_with_its_whole_epilogue(epilogue, rng):
    text = gemm_text(2, 1000, 512, epilogue=epilogue)
    module, collected = selected(text)
    gemm = the_gemm(module)
    assert [op.name for op in module.walk() if op.name.startswith(("cutlass.", "op.elementwise"))] == []
    assert sk.supports(gemm) and str(gemm.epilogue) == str(the_gemm(parse_module(text)).epilogue)
    assert collected.get("lower-op-to-cutlass", "skinny_gemm kernels (op.gemm kept)") == 1
    assert_equivalent(parse_module(text), [SelectKernelsPass(arch="sm90", selector="heuristic"), LowerOpToCutlassPass()], rng)


def test_a_choice_it_cannot_run_is_one_line():
    op = marked(gemm_text(48, 1000, 2048), sk.SkinnyTile(8, 16, 4))
    module = op.parent_op().parent_op()
    with pytest.raises(BoltError) as error:
        LowerOpToCutlassPass().apply(make_context(), module)
    assert "\n" not in error.value.message
    assert "bad kernel attribute on op.gemm: 48 rows of A: the kernel takes at most 32" in error.value.message


@pytest.mark.parametrize(("tile", "reason"), [
    (sk.SkinnyTile(12, 8, 2), "8 or 16 weight rows"),
    (sk.SkinnyTile(8, 32, 2), "2, 4, 8, 16 warps"),
    (sk.SkinnyTile(16, 8, 4), "exceed the 64 registers"),
])
def test_tiles_it_refuses(tile, reason):
    assert reason in sk.tile_reason(the_gemm(parse_module(gemm_text(16, 1000, 2048))), tile)


# ------------------------------------------------------------------ the instance


def test_the_instance_bakes_the_problem_and_has_the_gemm_launcher_abi():
    op = marked(gemm_text(3, 37, 72, epilogue="bias, relu"), sk.SkinnyTile(8, 2, 4))
    source = sk.emit_instance(op).source
    name = sk.kernel_name(op)
    assert re.match(r"^boltir_skinny_gemm_[0-9a-f]{12}$", name)
    assert f'extern "C" int {name}(const void *a, const void *b, const void *bias, const void *residual, void *d,' in source
    assert f'extern "C" size_t {name}_workspace_size(int, int, int, int) {{ return 0; }}' in source
    assert "constexpr int M = 3, N = 37, K = 72;" in source
    assert "constexpr int NR = 8;" in source and "constexpr int WK = 2;" in source and "constexpr int MB = 1;" in source
    assert "if (batch != 1 || m != 3 || n != 37 || k != 72) return 2002;" in source
    assert "if (bias == nullptr) return 2003;" in source and "residual == nullptr" not in source
    assert "row < rows_left" in source  # 37 rows: the last CTA is cut
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in source
    assert "launch(kernel, 5, kBlock, 0, stream, " in source  # ceil(37 / 8) CTAs
    arguments = sk.launch_arguments(op)
    assert arguments.problem == (1, 3, 37, 72) and arguments.workspace
    assert arguments.operands == (op.a, op.b, op.bias, None, op.output)


def test_a_folded_batch_and_bf16():
    op = marked(gemm_text(4, 64, 128, element="bf16", epilogue="", batch=3, shared_b=True), sk.SkinnyTile(16, 2, 2))
    source = sk.emit_instance(op).source
    assert "constexpr int M = 12, N = 64, K = 128;" in source and "constexpr int MB = 2;" in source
    assert "if (batch != 3 || m != 4 || n != 64 || k != 128) return 2002;" in source
    assert "f32.bf16.bf16.f32" in source and "row < rows_left" not in source


def test_one_instance_per_key_in_a_unit():
    first = marked(gemm_text(1, 1000, 2048), sk.SkinnyTile(8, 16, 4))
    same = marked(gemm_text(1, 1000, 2048), sk.SkinnyTile(8, 16, 4))
    other = marked(gemm_text(1, 1000, 2048), sk.SkinnyTile(8, 8, 4))
    assert sk.kernel_name(first) == sk.kernel_name(same) != sk.kernel_name(other)
    unit = sk.emit_translation_unit([first, same, other])
    assert unit.count(f'extern "C" int {sk.kernel_name(first)}(') == 1
    assert unit.count(f'extern "C" int {sk.kernel_name(other)}(') == 1


def test_an_empty_output_launches_nothing():
    op = marked(gemm_text(0, 1000, 2048, epilogue=""), sk.SkinnyTile(8, 16, 4))
    source = sk.emit_instance(op).source
    assert "return 0;  // an empty result" in source and "<<<" not in source


# ------------------------------------------------------------ tuning


def test_the_candidates_are_ours_then_cutlass():
    op = the_gemm(parse_module(gemm_text(1, 1000, 2048)))
    found = candidates(op, "sm90", sms=132)
    ours = [c for c in found.choices if c.family == sk.FAMILY]
    assert found.choices[0] == HeuristicSelector(sms=132).select(op, "sm90")
    assert 2 <= len(ours) <= MAX_SKINNY and found.choices[: len(ours)] == ours
    assert all(sk.tile_reason(op, sk.SkinnyTile.of(c.tile)) is None for c in ours)
    assert any(c.family == "gemm" for c in found.choices[len(ours):])


def test_a_record_that_never_raced_it_gives_way(tmp_path):
    op = the_gemm(parse_module(gemm_text(1, 1000, 2048, epilogue="bias")))
    cutlass_choice = HeuristicSelector(skinny_gemms=False).select(op, "sm90")
    ours = HeuristicSelector().select(op, "sm90")
    with TuningDatabase.open(tmp_path / "old.sqlite") as database:
        database.store(TuningRecord(tuning_key(op, "sm90"), cutlass_choice, 0.0177,
                                    [Measurement(cutlass_choice, "ok", 0.0177, 0.0, timing="graph")]))
    selector = DatabaseSelector(tuning_db=str(tmp_path / "old.sqlite"))
    assert selector.select(op, "sm90") == ours
    assert any("never raced the heuristic's skinny_gemm choice" in note for note in selector.notes)
    # a record that measured ours keeps its fastest
    with TuningDatabase.open(tmp_path / "new.sqlite") as database:
        database.store(TuningRecord(tuning_key(op, "sm90"), cutlass_choice, 0.0177,
                                    [Measurement(cutlass_choice, "ok", 0.0177, 0.0, timing="graph"),
                                     Measurement(ours, "ok", 0.0190, 0.0, timing="graph")]))
    assert DatabaseSelector(tuning_db=str(tmp_path / "new.sqlite")).select(op, "sm90") == cutlass_choice


# ------------------------------------------------------------------- with nvcc


COMPILED = [
    (gemm_text(1, 1000, 2048, epilogue="bias"), (8, 16, 4)),
    (gemm_text(16, 4096, 256, element="bf16", epilogue="bias, relu"), (16, 4, 2)),
    (gemm_text(3, 37, 72, epilogue="bias, gelu, residual = add"), (8, 2, 4)),
    (gemm_text(9, 100, 200, epilogue=""), (16, 2, 1)),
    (gemm_text(32, 1000, 1280, epilogue="bias"), (16, 16, 1)),  # four column blocks
]


@pytest.mark.slow
def test_the_unit_compiles_with_nvcc(tmp_path):
    assert_unit_compiles(sk, [marked(text, sk.SkinnyTile(*tile)) for text, tile in COMPILED], tmp_path)

def test_the_payoff_rule_counts_the_heuristics_narrowest_cutlass_tile():
    """payoff_reason's CUTLASS_TILE_COLUMNS is the narrowest N of the tiles the heuristic
    gives GEMMs (2.x and 3.x): the grid it compares against is the one CUTLASS would get."""
    from boltir.backends.cuda.select.heuristic import GEMM_TILES, HOPPER_GEMM_TILES

    narrowest = min(tile[1] for tile, _ in (*GEMM_TILES, *HOPPER_GEMM_TILES))
    assert sk.CUTLASS_TILE_COLUMNS == narrowest
