"""bench/trace_wgsplit.py without a GPU: its cases reach our split GEMM on every tile the
tuner races for BERT b1's FFN GEMMs, and its phase arithmetic on a made-up record."""

from __future__ import annotations

import numpy as np
import pytest

from bench import trace_wgsplit
from boltir.backends.cuda.codegen import wgsplit_gemm_kernels as wg


def test_the_cases_are_our_kernel_on_each_ffn_tile():
    cases = trace_wgsplit.cases()
    assert all(wg.computes(case.op) for case in cases)
    for shape in ("ffn1", "ffn2"):
        tiles = [wg.marked_tile(case.op) for case in cases if case.label.startswith(shape)]
        assert len(tiles) >= 3 and len(set(tiles)) == len(tiles)
    assert not wg.TRACE_PHASES  # the module's flag stays off until main() sets it


def test_phases_from_clocks_at_the_global_timers_rate():
    # two CTAs, a 2 GHz clock; CTA 1 enters 1 µs later and its mainloop is 1 µs longer
    # ns after entry; slot 8: first k-tile; 9 and 10: barriers initialized, CTA synchronized
    slots = np.array([0, 1000, 1200, 4000, 4400, 5000, 5600, 6000, 1900, 300, 700])
    trace = np.zeros((2, 22), dtype=np.int64)
    for cta, (shift, longer) in enumerate(((0, 0), (1000, 1000))):
        at = slots + np.where((np.arange(11) >= 3) & (np.arange(11) < 8), longer, 0)
        trace[cta, :11] = 7 + 2 * at
        trace[cta, 11:] = 10**9 + shift + at
    result = trace_wgsplit.phases(trace)
    assert result["GHz"][0] == pytest.approx(2.0)
    assert result["span"][0] == pytest.approx(8.0)  # 0 to 1 µs + 7 µs
    assert result["entry spread"][0] == pytest.approx(1.0)
    assert result["set-up"] == pytest.approx((1.0, 1.0))
    # its parts add up to it
    assert [result[name][0] for name, _, _ in trace_wgsplit.SETUP_PHASES] == pytest.approx([0.3, 0.4, 0.3])
    assert result["first k-tile"] == pytest.approx((0.7, 0.7))
    assert result["streaming"] == pytest.approx((3.0, 3.5))  # the last ring past the first k-tile
    assert result["mainloop"] == pytest.approx((3.3, 3.8))  # medians of 2.8 and 3.8; the slowest
    assert result["partials"] == pytest.approx((0.6, 0.6))  # from the later ring (slot 4)
    assert result["exit"] == pytest.approx((0.4, 0.4))


def test_the_plot_draws_each_tile_phase_by_phase(tmp_path):
    record = np.zeros((1, 22), dtype=np.int64)
    record[0, :11] = 2 * np.array([0, 500, 600, 3000, 3100, 3800, 4300, 4400, 1000, 100, 200])
    record[0, 11:] = np.array([0, 500, 600, 3000, 3100, 3800, 4300, 4400, 1000, 100, 200])
    result = trace_wgsplit.phases(record)
    path = tmp_path / "phases.png"
    trace_wgsplit.plot([("ffn2 64x32x2", result), ("ffn1 64x64x1", result)], str(path))
    assert path.stat().st_size > 1000
    # the drawn phases follow one another: their sum is the CTA's time to its exit
    assert sum(result[name][0] for name, _ in trace_wgsplit.TIMELINE) == pytest.approx(4.4)
