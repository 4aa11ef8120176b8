"""graph.cumsum through the graph-level passes that need to know it, on random inputs:
convert-layout remaps its axis into the channels-last order and lets the transposes
around it cancel; convert-precision takes float cumsums to f16/bf16 (summed in f32,
rounded once) and leaves integer ones as they are; lower-graph-to-op keeps both. The
bucketed build's analysis lets a forward cumsum run along a padded axis, not a reverse one."""

from __future__ import annotations

import numpy as np
import pytest

from boltir.builder import ModelBuilder
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.passes.bucket_axes import bucket_axes
from boltir.passes.convert_layout import ConvertLayoutPass
from boltir.passes.convert_precision import ConvertPrecisionPass
from boltir.passes.lower_graph_to_op import LowerGraphToOpPass
from tests.passes.equivalence import assert_equivalent


def conv(b: ModelBuilder, x, channels: int, rng, name: str):
    w = b.constant(name, (rng.standard_normal((channels, x.type.get_shape()[1], 1, 1)) * 0.5).astype(np.float32))
    return b.insert(graph.Conv2dOp(x, w)).output


@pytest.mark.parametrize(("axis", "exclusive", "reverse", "nhwc_axis"), [(1, True, False, 3), (-2, False, True, 1), (3, True, True, 2)])
def test_convert_layout_remaps_the_axis(rng, axis, exclusive, reverse, nhwc_axis):
    b = ModelBuilder()
    y = conv(b, b.input("x", (2, 3, 5, 4)), 4, rng, "w1")
    y = b.insert(graph.CumSumOp(y, axis, exclusive=exclusive, reverse=reverse)).output
    module = b.finish([conv(b, y, 2, rng, "w2")])
    after = assert_equivalent(module, ConvertLayoutPass(layout="NHWC"), rng)
    (cumsum,) = [op for op in after.walk() if isinstance(op, graph.CumSumOp)]
    assert cumsum.prop_value("axis") == nhwc_axis
    assert len([op for op in after.walk() if isinstance(op, graph.TransposeOp)]) == 2  # the model's input and output


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_convert_precision_keeps_integers(rng, dtype):
    b = ModelBuilder()
    floats = b.insert(graph.CumSumOp(b.input("x", (3, 64)), 1, exclusive=True)).output
    ids = b.input("ids", (3, 64), np.int32)
    counts = b.insert(graph.CumSumOp(ids, 1)).output
    module = b.finish([floats, counts])
    after = assert_equivalent(module, [ConvertPrecisionPass(dtype), LowerGraphToOpPass()], rng, tolerance=1e-2)
    elements = sorted(str(op.output.type.element_type) for op in after.walk() if isinstance(op, ops.CumSumOp))
    assert elements == sorted([dtype, "i32"])


def position_ids(reverse: bool):
    """RoBERTa's position ids over a [B, S] input whose S is bucketed."""
    b = ModelBuilder()
    ids = b.input("ids", (2, 16), np.int64)
    mask = b.insert(graph.CastOp(b.insert(graph.NotOp(b.insert(graph.EqualOp(ids, b.constant("pad", np.array(1, np.int64)))).output)).output,
                                 graph.IntegerType(32))).output
    running = b.insert(graph.CumSumOp(mask, 1, reverse=reverse)).output
    return b.finish([b.insert(graph.MulOp(running, mask)).output])


def test_bucketing_a_forward_cumsum_keeps_its_axis():
    """Position i of a forward running sum reads positions <= i: the padding after the
    call's length never reaches a real position."""
    found = bucket_axes(position_ids(reverse=False), {0: {1: 0}}, ["ids:1"])
    assert found.outputs == [{1: 0}]


def test_bucketing_a_reverse_cumsum_along_its_axis_is_refused():
    with pytest.raises(BoltError, match=r"graph.cumsum mixes the bucketed dimension ids:1: it combines positions along "
                                        r"its reverse-summed axis 1, which is bucketed"):
        bucket_axes(position_ids(reverse=True), {0: {1: 0}}, ["ids:1"])
    assert bucket_axes(position_ids(reverse=True), {0: {0: 0}}, ["ids:0"]).outputs == [{0: 0}]  # the batch is fine
