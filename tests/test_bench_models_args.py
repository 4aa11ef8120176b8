"""bench/models.py without a GPU: its argument errors are one line (its main parses before
anything imports torch's models; an unknown model or build names the known ones), and its
table of issue 15's memory-bound convs picks the launches that floor covers."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("arguments", "message"), [
    (["--models", "mobilenetv2"], "unknown model mobilenetv2; known: resnet50, mobilenet_v2, vgg16, repvgg_a0, bert"),
    (["--builds", "sm90-halo"], "unknown build sm90-halo; known: sm80, sm90,"),
    (["--compile-only", "--profile-only"], "--compile-only and --profile-only exclude each other"),
])
def test_a_bad_name_is_one_line(arguments, message):
    result = subprocess.run([sys.executable, "-m", "bench.models", *arguments], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_the_heuristic_build_takes_no_recorded_kernel():
    """`sm90-heuristic` is the baseline a tuned build must not lose to: its select-kernels
    reads no database and no shipped data; the default build reads them."""
    from bench.models import HEURISTIC_DB, build_pipeline

    heuristic = build_pipeline("sm90-heuristic", HEURISTIC_DB)
    assert "select-kernels{selector=heuristic " in heuristic and "tuning_db" not in heuristic
    assert build_pipeline("sm90", HEURISTIC_DB) is None  # boltir.compiler's default: selector=db


def test_the_cutlass_fc_build_asks_select_kernels_for_cutlasss_gemms():
    """`sm90-cutlassfc`: the default pipeline with select-kernels' small_m=cutlass, the
    baseline of our few-rows GEMM in the same run."""
    import boltir.compiler
    from bench.models import HEURISTIC_DB, build_pipeline

    default = boltir.compiler.full_pipeline(dtype="f16", arch="sm90", cutlass=3, selector="db", tuning_db=HEURISTIC_DB)
    assert build_pipeline("sm90-cutlassfc", HEURISTIC_DB) == default.replace("select-kernels{", "select-kernels{small_m=cutlass ")


def test_the_halo1_build_asks_select_kernels_for_mode_1():
    """`sm90-halo1`: the default pipeline with the halo conv in mode 1 (two-byte stores of
    its staged rows), the baseline of the default mode 4 in the same run."""
    import boltir.compiler
    from bench.models import HEURISTIC_DB, build_pipeline
    from boltir.backends.cuda.codegen import halo_conv_kernels

    default = boltir.compiler.full_pipeline(dtype="f16", arch="sm90", cutlass=3, selector="db", tuning_db=HEURISTIC_DB)
    assert build_pipeline("sm90-halo1", HEURISTIC_DB) == default.replace("select-kernels{", "select-kernels{halo_mode=1 ")
    assert halo_conv_kernels.DEFAULT_MODE != 1


def test_the_unfused_stem_build_leaves_out_only_the_stems_fusion():
    """`sm90-unfusedstem`: the default pipeline less fuse-conv-space-to-depth (the blocked
    stem's space-to-depth kernel and its halo conv as two launches), the baseline of the fusion."""
    import boltir.compiler
    from bench.models import HEURISTIC_DB, build_pipeline

    default = boltir.compiler.full_pipeline(dtype="f16", arch="sm90", cutlass=3, selector="db", tuning_db=HEURISTIC_DB)
    unfused = build_pipeline("sm90-unfusedstem", HEURISTIC_DB)
    assert "fuse-conv-space-to-depth" in default.split(",") and "fuse-conv-space-to-depth" not in unfused.split(",")
    assert unfused.split(",") == [step for step in default.split(",") if step != "fuse-conv-space-to-depth"]


def test_the_dwpw_builds_add_the_depthwise_pointwise_fusion_at_any_grid():
    """`sm90-dwpw`: the default pipeline (whose fuse-depthwise-pointwise fuses one wave at
    most) with the pass at any grid after fuse-elementwise, before select-kernels;
    `sm90-block` with its `expand=true`; `sm90-nodwpw`: the default less the pass."""
    import boltir.compiler
    from bench.models import HEURISTIC_DB, build_pipeline

    default = boltir.compiler.full_pipeline(dtype="f16", arch="sm90", cutlass=3, selector="db", tuning_db=HEURISTIC_DB)
    assert "fuse-depthwise-pointwise{expand=true sms=132}" in default.split(",")
    added = build_pipeline("sm90-dwpw", HEURISTIC_DB).split(",")
    assert [step for step in added if step != "fuse-depthwise-pointwise"] == default.split(",")
    assert added.index("fuse-depthwise-pointwise") < added.index(next(s for s in added if s.startswith("select-kernels")))
    block = build_pipeline("sm90-block", HEURISTIC_DB).split(",")
    assert [step for step in block if step != "fuse-depthwise-pointwise{expand=true}"] == default.split(",")
    unfused = build_pipeline("sm90-nodwpw", HEURISTIC_DB).split(",")
    assert unfused == [step for step in default.split(",") if not step.startswith("fuse-depthwise-pointwise")]
    assert len(unfused) == len(default.split(",")) - 1


def test_the_memory_bound_conv_floor_rows():
    """Issue 15's floor covers convs with at most 96 channels on a side or depthwise, moving
    16 MB or more, bound by their bytes; each row says whether the model's figure meets 2.5 TB/s."""
    from bench.models import conv_floor_rows
    from boltir.runtime import LaunchTime
    from boltir.target import get_target

    def launch(index, conv, megabytes, ms, flops=0, alone=None, marginal=None):
        return LaunchTime(index, "op.conv2d", f"k{index}", "f", ms, flops, int(megabytes * 1e6), None, alone, conv, marginal)

    narrow, wide = {"in": 24, "out": 144, "depthwise": False}, {"in": 256, "out": 512, "depthwise": False}
    depthwise = {"in": 192, "out": 192, "depthwise": True}
    launches = [launch(0, narrow, 33.7, 0.0136, alone=0.0120, marginal=0.0110), launch(1, depthwise, 19.3, 0.0099),
                launch(2, wide, 40.0, 0.0100), launch(3, narrow, 10.0, 0.0010), launch(4, None, 50.0, 0.0100),
                launch(5, {"in": 64, "out": 64, "depthwise": False}, 25.7, 0.030, flops=int(50e9))]
    rows = conv_floor_rows(launches, get_target("sm90"))
    # the wide conv, the small one, the non-conv and the compute-bound one (50 GFLOP) are not covered
    assert [row[0] for row in rows] == [0, 1]
    assert rows[0][1:] == ("k0", "24 -> 144", "33.7", "0.0136", "2.48", "2.81", "3.06", "met (marginal)")
    assert rows[1][2] == "depthwise 192" and rows[1][5] == "1.95" and rows[1][6] == rows[1][7] == "nan"
    assert rows[1][8] == "MISSED"  # neither figure: no marginal cost was measured


def test_the_data_kernel_floor_rows_sum_each_family():
    """Issue 16's floor for layer norms, softmaxes and the data kernels: per family, TB/s in
    the model, alone and over the marginal costs; GEMMs, convs and attention are not covered."""
    from bench.models import data_floor_families, data_floor_rows
    from boltir.runtime import LaunchTime

    def launch(index, family, megabytes, ms, alone=None, marginal=None):
        return LaunchTime(index, "op.x", f"k{index}", family, ms, 0, int(megabytes * 1e6), None, alone, None, marginal)

    assert {"layer_norm", "softmax", "layout_transform", "elementwise"} <= data_floor_families()
    assert not {"gemm_fallback", "cumsum", "attention"} & data_floor_families()
    launches = [launch(0, "layer_norm", 12.6, 0.0061, 0.0060, 0.0040), launch(1, "layer_norm", 12.6, 0.0065, 0.0062, 0.0044),
                launch(2, "softmax", 50.0, 0.0150), launch(3, "gemm", 40.0, 0.0500), launch(4, "attention", 10.0, 0.0100)]
    rows = data_floor_rows(launches)
    assert [row[0] for row in rows] == ["softmax", "layer_norm"]  # the larger time first
    # two layer norms: 25.2 MB in 0.0126 ms (2.00 TB/s), alone 0.0122 (2.07), marginal 0.0084 (3.00)
    assert rows[1] == ("layer_norm", 2, "25.2", "0.0126", "2.00", "2.07", "3.00", "met (marginal)")
    assert rows[0][4:] == ("3.33", "nan", "nan", "met")


def test_the_small_m_gemm_rows():
    """Issue 16's small-M target: GEMMs of at most 256 rows, grouped by kernel and shape, each
    group's median alone time within 3x of max(weight read at DRAM bandwidth, an empty kernel)."""
    from bench.models import small_m_rows
    from boltir.runtime import LaunchTime
    from boltir.target import get_target

    target = get_target("sm90")

    def launch(index, kernel, rows, n, k, ms, alone):
        gemm = {"rows": rows, "n": n, "k": k, "weight_bytes": n * k * 2}
        return LaunchTime(index, "cutlass.gemm", kernel, "gemm", ms, 2 * rows * n * k, 0, None, alone, None, None, gemm=gemm)

    launches = [launch(0, "ffn2", 128, 768, 3072, 0.0116, 0.0073), launch(1, "ffn2", 128, 768, 3072, 0.0112, 0.0071),
                launch(2, "fc6", 1, 4096, 25088, 0.0841, 0.0700), launch(3, "big", 4096, 768, 3072, 0.0300, 0.0280),
                LaunchTime(4, "op.layer_norm", "ln", "layer_norm", 0.0050)]
    rows = small_m_rows(launches, target, empty_ms=0.0012)
    assert [row[:3] for row in rows] == [("fc6", "1x4096x25088", 1), ("ffn2", "128x768x3072", 2)]  # the larger time first
    # fc6's 205 MB weight sets its floor; FFN2's 4.7 MB reads in less than the empty kernel
    fc6_ms = 4096 * 25088 * 2 / target.dram_bytes_per_second * 1e3
    assert rows[0][7:] == (f"{fc6_ms:.4f}", f"{0.0700 / fc6_ms:.1f}", "met")
    assert rows[1][4:] == ("0.0114", "0.0072", "nan", "0.0012", "6.0", "MISSED")


def test_a_floor_is_met_in_the_model_by_marginal_cost_or_missed():
    from bench.models import floor_verdict

    assert floor_verdict(2.6, float("nan"), 2.5) == "met"
    assert floor_verdict(2.0, 2.7, 2.5) == "met (marginal)"
    assert floor_verdict(2.0, 2.4, 2.5) == floor_verdict(2.0, float("nan"), 2.5) == "MISSED"


def test_the_stem_row_sums_the_launches_up_to_the_first_conv():
    from bench.models import stem_row
    from boltir.runtime import LaunchTime

    conv = {"in": 16, "out": 64, "depthwise": False}
    launches = [LaunchTime(0, "op.space_to_depth", "space_to_depth f16", "space_to_depth", 0.016, alone_ms=0.015,
                           marginal_ms=0.010),
                LaunchTime(1, "op.conv2d", "halo_conv 4x4", "halo_conv", 0.042, conv=conv, alone_ms=0.040, marginal_ms=0.038),
                LaunchTime(2, "op.pool2d", "pool2d", "pool2d", 0.010, alone_ms=0.010)]
    assert stem_row(launches) == (2, "space_to_depth + halo_conv", "0.0580", "0.0550", "0.0480")
    assert stem_row(launches[:1]) is None
    assert stem_row([dataclasses.replace(launches[1], marginal_ms=None)])[4] == "-"


def test_a_model_whose_package_is_missing_is_a_one_line_exit(monkeypatch):
    from bench.models import make_model

    monkeypatch.setitem(sys.modules, "transformers", None)  # importing it now fails
    with pytest.raises(SystemExit, match=r"^error: the bert model needs the Python package 'transformers', which is not "
                                         r"installed here \(the device host has it\)$"):
        make_model("bert")


def test_other_builds_are_reported_against_the_main_build_in_the_same_turns():
    """Each loaded build's cell gives its time in turns and its ratio to the main build's
    time in those turns; a build that failed keeps its one-line reason, in build order."""
    from bench.models import other_build_cells

    others = [(object(), 1.4e-3), "sm90-halo1 FAILED: no kernel", (object(), 2.0e-3)]
    cells = other_build_cells(["sm90-cutlasssplit", "sm90-halo1", "sm90-nohalo"], others, 0.340, [0.333, 0.357])
    assert cells == ["sm90-cutlasssplit 0.333 (0.98x main in turns; err 1.4e-03)", "sm90-halo1 FAILED: no kernel",
                     "sm90-nohalo 0.357 (1.05x main in turns; err 2.0e-03)"]
