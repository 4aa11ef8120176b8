"""boltir/tools/roofline_plot.py draws a profile's launches (both panels) from their roofline
counts, and says in one line when it cannot."""

import pytest

from boltir.tools.roofline_plot import plot_launches
from boltir.runtime import LaunchTime
from boltir.target import get_target

TARGET = get_target("sm90")


def launch(index, family, ms, flops, nbytes):
    bound = 1e3 * TARGET.bound_seconds(flops, nbytes, "f16")
    return LaunchTime(index, "op.x", f"k{index}", family, ms, flops, nbytes, bound)


def test_a_profile_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    launches = [launch(0, "conv2d_fprop", 0.40, 118e9, 410e6), launch(1, "gemm", 0.05, 2 * 128 * 768 * 3072, 5e6),
                launch(2, "layer_norm", 0.007, 0, 12.6e6), launch(3, "depthwise_direct", 0.02, 1e8, 51e6)]
    path = plot_launches(launches, TARGET, "f16", "test b1", tmp_path / "roofline.png")
    assert path is not None and path.read_bytes().startswith(b"\x89PNG")


def test_a_profile_without_counts_is_said_in_one_line(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert plot_launches([LaunchTime(0, "op.x", "k", "gemm", 0.1)], TARGET, "f16", "old build", tmp_path / "r.png") is None
    assert capsys.readouterr().out == "no roofline plot for old build: the launches have no roofline counts\n"


def test_a_drawing_failure_is_one_line_and_no_exception(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    launches = [launch(0, "gemm", 0.05, 2e9, 5e6)]
    assert plot_launches(launches, TARGET, "f8", "odd element", tmp_path / "r.png") is None  # no f8 peak in the record
    out = capsys.readouterr().out
    assert out.startswith("no roofline plot for odd element: KeyError") and out.count("\n") == 1
