"""bench/kernels.py without a GPU: the batch-1 conv rows time our split-reduction conv's
tiles on every batch-1 conv it computes, the ones its rule leaves to CUTLASS included."""

from __future__ import annotations

from bench.kernels import split_conv_variants, workloads
from boltir.backends.cuda.codegen import splitk_conv_kernels as sk
from tests.support.own_kernel_units import conv_of


def test_resnet50s_batch1_28_and_56_convs_are_among_the_b1_rows():
    labels = [label for label, kind, _ in workloads() if label.startswith("b1 conv")]
    assert "b1 conv3x3 N1 C128 28² K128 +bias+relu" in labels and "b1 conv3x3 N1 C64 56² K64 +bias+relu" in labels


def test_split_variants_for_a_batch1_conv_the_rule_leaves_to_cutlass():
    op = conv_of(n=1, h=28, w=28, c=128, k=128, r=3, s=3)
    variants = split_conv_variants(op)
    tiles = [sk.SplitTile.of(choice.tile) for choice in variants]
    assert {choice.family for choice in variants} == {"splitk_conv"}
    assert sk.SplitTile(32, 64, 4) in tiles and len(tiles) == len(set(tiles))
    assert all(sk.tile_reason(op, tile) is None for tile in tiles)


def test_no_split_variants_at_batch_32_or_for_convs_it_does_not_compute():
    assert split_conv_variants(conv_of(n=32, h=28, w=28, c=128, k=128, r=3, s=3)) == []
    assert split_conv_variants(conv_of(n=1, h=28, w=28, c=3, k=64, r=3, s=3)) == []  # C not a multiple of 64


def test_cutlass_candidates_for_a_gemm_the_default_gives_our_split_kernel_stay_cutlass(capsys):
    """BERT b1's FFN2 is ours under the default split_gemms=wgsplit; the harness's cases keep
    CUTLASS's choice (Case.split_gemms), so that every 3.x candidate overrides a CUTLASS
    choice rather than our tile (where the candidates were skipped as bad wgsplit tiles)."""
    from bench.kernels import SMALL_M_CANDIDATES, candidate_cases, wgsplit_cases
    from tests.support.op_modules import gemm_text

    text = gemm_text(128, 768, 3072)
    cases = candidate_cases("ffn2", text, SMALL_M_CANDIDATES)
    assert "skipped" not in capsys.readouterr().out
    assert len(cases) == len(SMALL_M_CANDIDATES) and {case.op.name for case in cases} == {"cutlass.gemm"}
    from boltir.backends.cuda.codegen import wgsplit_gemm_kernels as wg

    assert all(wg.computes(case.op) for case in wgsplit_cases("ffn2", text))
