"""graph.space_to_depth against ONNX's reference evaluator, and op.space_to_depth against
an independent numpy computation: pad, block by explicit loops, append zero channels,
convert, change the layout."""

from __future__ import annotations

import numpy as np
import pytest
from graph_oracle import check_node, random_array, run_boltir
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type

from boltir.dialects import graph
from boltir.dialects import op as ops

NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)


@pytest.mark.parametrize(
    ("shape", "block", "dtype"),
    [((2, 3, 6, 8), 2, np.float32), ((1, 2, 9, 12), 3, np.float16), ((2, 1, 8, 4), 4, np.int64), ((1, 5, 2, 2), 1, np.float64)],
)
def test_graph_space_to_depth_matches_onnx(rng, shape, block, dtype):
    x = random_array(rng, shape, dtype, low=-9, high=9)
    check_node(lambda v: graph.SpaceToDepthOp(v, block), "SpaceToDepth", {"x": x}, attrs={"blocksize": block})


def blocked_by_loops(x: np.ndarray, block: int, pads, channels: int) -> np.ndarray:
    """NCHW x padded by (top, left, bottom, right) (negative: cropped), result channel
    (by·b + bx)·C + c from input channel c at offset (by, bx); zeros up to `channels`."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    rows, cols = (h + top + bottom) // block, (w + left + right) // block
    y = np.zeros((n, channels, rows, cols), dtype=np.float64)
    for by in range(block):
        for bx in range(block):
            for ci in range(c):
                for i in range(rows):
                    for j in range(cols):
                        r, q = i * block + by - top, j * block + bx - left
                        if 0 <= r < h and 0 <= q < w:
                            y[:, (by * block + bx) * c + ci, i, j] = x[:, ci, r, q]
    return y


ELEMENTS = {np.float32: Float32Type(), np.float16: Float16Type()}


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("result_layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize(
    ("shape", "block", "pads", "extra", "out"),
    [
        ((2, 3, 10, 10), 2, (3, 3, 3, 3), 4, np.float16),  # the ResNet stem's input, 16 channels, f32 -> f16
        ((1, 3, 9, 7), 2, (1, 0, 0, 1), 0, np.float32),
        ((2, 2, 11, 11), 2, (0, 0, -1, -1), 3, np.float16),  # a crop
        ((1, 1, 7, 5), 3, (2, 1, 0, 0), 0, np.float32),
    ],
)
def test_op_space_to_depth(rng, layout, result_layout, shape, block, pads, extra, out):
    x = random_array(rng, shape, np.float32)
    channels = shape[1] * block * block + extra
    given = x if layout == "NCHW" else np.ascontiguousarray(x.transpose(NCHW_TO_NHWC))

    def build(v):
        return ops.SpaceToDepthOp(v, block, layout=layout, result_layout=result_layout, pads=pads, channels=channels,
                                  element_type=ELEMENTS[out])

    (got,) = run_boltir(build, {"x": given})
    expected = blocked_by_loops(x, block, pads, channels).astype(out)
    if result_layout == "NHWC":
        expected = expected.transpose(NCHW_TO_NHWC)
    assert got.dtype == np.dtype(out)
    np.testing.assert_array_equal(got, expected)


def test_op_space_to_depth_bf16(rng):
    """f32 -> bf16 rounds once, to nearest even (ml_dtypes' astype)."""
    import ml_dtypes

    x = random_array(rng, (1, 3, 4, 4), np.float32)
    (got,) = run_boltir(lambda v: ops.SpaceToDepthOp(v, 2, layout="NCHW", element_type=BFloat16Type()), {"x": x})
    expected = blocked_by_loops(x, 2, (0, 0, 0, 0), 12).astype(np.float32).astype(ml_dtypes.bfloat16).transpose(NCHW_TO_NHWC)
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))
