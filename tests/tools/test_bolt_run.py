"""bolt-run on the bundled example: inputs by name or position, outputs as result_N."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from boltir.tools import bolt_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_cnn"


def test_runs_the_bundled_example_against_its_independent_reference(tmp_path, capsys):
    out = tmp_path / "out.npz"
    assert bolt_run.main([str(EXAMPLE / "small_cnn.mlir"), "--inputs", str(EXAMPLE / "input.npz"), "-o", str(out)]) == 0
    with np.load(out) as got, np.load(EXAMPLE / "expected.npz") as expected:
        assert got.files == ["result_0"]
        np.testing.assert_allclose(got["result_0"], expected["result_0"], rtol=1e-5, atol=1e-5)


def test_inputs_by_position(tmp_path, capsys):
    with np.load(EXAMPLE / "input.npz") as named:
        np.savez(tmp_path / "positional.npz", arg0=named["image:0"])
    out = tmp_path / "out.npz"
    assert bolt_run.main([str(EXAMPLE / "small_cnn.mlir"), "--inputs", str(tmp_path / "positional.npz"), "-o", str(out)]) == 0
    with np.load(out) as got, np.load(EXAMPLE / "expected.npz") as expected:
        np.testing.assert_allclose(got["result_0"], expected["result_0"], rtol=1e-5, atol=1e-5)


def test_random_inputs_and_a_summary_without_output_file(capsys):
    assert bolt_run.main([str(EXAMPLE / "small_cnn.mlir"), "--random-inputs", "7"]) == 0
    assert capsys.readouterr().out.startswith("result_0: 1x10 float32 [")
