"""graph.cumsum against ONNX's reference evaluator (CumSum with its axis input), and
op.cumsum against running sums written out as loops: f16 and bf16 sum in f32 and round
once per element, integers wrap in their own width."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from graph_oracle import check_node, random_array, run_boltir

from boltir.dialects import graph
from boltir.dialects import op as ops

FLAGS = [(False, False), (True, False), (False, True), (True, True)]
FLAG_IDS = ["plain", "exclusive", "reverse", "exclusive-reverse"]


@pytest.mark.parametrize(("exclusive", "reverse"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize(
    ("shape", "axis", "dtype"),
    [
        ((2, 16), 1, np.int64),  # RoBERTa's position ids
        ((2, 16), -1, np.int32),
        ((3, 5, 4), 0, np.float32),
        ((3, 5, 4), 1, np.float64),
        ((3, 5, 4), -1, np.int64),
        ((7,), 0, np.float32),
    ],
)
def test_graph_cumsum_matches_onnx(rng, shape, axis, dtype, exclusive, reverse):
    x = random_array(rng, shape, dtype, low=-9, high=9)
    check_node(
        lambda v: graph.CumSumOp(v, axis, exclusive=exclusive, reverse=reverse),
        "CumSum",
        {"x": x},
        attrs={"exclusive": int(exclusive), "reverse": int(reverse)},
        onnx_inputs=["x", "axis"],
        constants={"axis": np.array(axis, np.int64)},
    )


def running_sums(x: np.ndarray, axis: int, exclusive: bool, reverse: bool, accumulator) -> np.ndarray:
    """CumSum by loops over the axis, summing in `accumulator`, rounded to x's dtype."""
    moved = np.moveaxis(x, axis, -1).astype(accumulator)
    out = np.zeros_like(moved)
    length = moved.shape[-1]
    order = range(length - 1, -1, -1) if reverse else range(length)
    total = np.zeros(moved.shape[:-1], accumulator)
    for i in order:
        if exclusive:
            out[..., i] = total
        total = (total + moved[..., i]).astype(accumulator)
        if not exclusive:
            out[..., i] = total
    return np.moveaxis(out, -1, axis).astype(x.dtype)


@pytest.mark.parametrize(("exclusive", "reverse"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize(
    ("shape", "axis", "dtype", "accumulator"),
    [
        ((4, 128), 1, np.float16, np.float32),
        ((2, 33, 3), 1, ml_dtypes.bfloat16, np.float32),
        ((2, 9, 5), 0, np.float32, np.float32),
        ((2, 300), -1, np.int32, np.int32),
        ((6, 2, 7), -2, np.int64, np.int64),
    ],
)
def test_op_cumsum_matches_loops(rng, shape, axis, dtype, accumulator, exclusive, reverse):
    x = random_array(rng, shape, dtype, low=-4, high=4)
    (got,) = run_boltir(lambda v: ops.CumSumOp(v, axis, exclusive=exclusive, reverse=reverse), {"x": x})
    expected = running_sums(x, axis % x.ndim, exclusive, reverse, accumulator)
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, expected)
    else:  # numpy's pairwise f32 sums and the loop's differ in the last f32 bits only
        np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=1e-2)


def test_f16_sums_in_f32():
    """2048 ones: f16 alone stops counting at 2048 (2049 is not an f16), f32 does not."""
    x = np.ones((1, 4096), np.float16)
    (got,) = run_boltir(lambda v: ops.CumSumOp(v, 1), {"x": x})
    assert got.dtype == np.float16
    assert float(got[0, -1]) == 4096.0
    assert float(got[0, 2050]) == float(np.float16(2051))


def test_integers_wrap():
    x = np.full((1, 3), np.iinfo(np.int32).max, np.int32)
    (got,) = run_boltir(lambda v: graph.CumSumOp(v, 1), {"x": x})
    np.testing.assert_array_equal(got, np.array([[2**31 - 1, -2, 2**31 - 3]], np.int32))
