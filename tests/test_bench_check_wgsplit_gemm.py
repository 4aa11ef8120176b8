"""bench/check_wgsplit_gemm.py without a GPU: every case reaches our warp-group-split GEMM
on its tile, both weight layouts and both element types among them, and BERT's two N = 768
GEMMs on every tile the tuner races."""

from __future__ import annotations

from bench.check_wgsplit_gemm import cases
from bench.harness import lower_cases
from boltir.backends.cuda.codegen import wgsplit_gemm_kernels as wg


def test_every_case_lowers_to_our_kernel_on_its_tile():
    rows, lowered = lower_cases(cases(), None, wg.computes)
    assert not rows, rows[:3]
    for case in lowered:
        assert case.label.endswith(f"tile {wg.marked_tile(case.op).describe()}")
    assert {case.op.prop_value("layout_b") for case in lowered} == {"row", "col"}
    assert any(" bf16 " in case.label for case in lowered) and any(" f16 " in case.label for case in lowered)
    ffn2 = [case for case in lowered if "M=128 768x3072 B row" in case.label]
    assert len(ffn2) >= 3 and len({wg.marked_tile(case.op) for case in ffn2}) == len(ffn2)


def test_128_row_tiles_meet_partial_rows_odd_columns_and_bf16():
    _, lowered = lower_cases(cases(), None, wg.computes)
    tall = [case.label for case in lowered if wg.marked_tile(case.op).block_m == 128]
    assert any("M=197" in label for label in tall)  # the second row tile partial
    assert any("203x520" in label for label in tall)  # odd N: the epilogue's column pairs split
    assert any(" bf16 " in label for label in tall)
