"""The ONNX SpaceToDepth converter: DCR (ONNX's order, `graph.space_to_depth`) and the
reference evaluator's CRD mode (a reshape, transpose and reshape) match
onnx.reference; a blocksize that does not divide the image, a mode it does not know and
an input that is not 4-D are one-line errors that name the node."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.frontends.onnx import import_model
from boltir.interp import run


def space_to_depth_model(shape, **attributes):
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", **attributes)
    graph_ = helper.make_graph(
        [node], "s2d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mode", [None, "DCR", "CRD"])
@pytest.mark.parametrize(("shape", "block"), [((2, 3, 6, 8), 2), ((1, 2, 9, 3), 3)])
def test_matches_the_reference(rng, shape, block, mode):
    model = space_to_depth_model(shape, blocksize=block, **({"mode": mode} if mode else {}))
    module = import_model(model)
    x = rng.standard_normal(shape).astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    (got,) = run(module, {"x": x})
    np.testing.assert_array_equal(got, expected)
    blocked = [op for op in module.walk() if isinstance(op, graph.SpaceToDepthOp)]
    assert len(blocked) == (0 if mode == "CRD" else 1)


@pytest.mark.parametrize(
    ("shape", "attributes", "message"),
    [
        ((1, 3, 6, 7), {"blocksize": 2}, "blocksize 2 must be positive and divide the height 6 and width 7"),
        ((1, 3, 6, 6), {"blocksize": 0}, "blocksize 0 must be positive and divide the height 6 and width 6"),
        ((3, 6, 6), {"blocksize": 2}, "expects a 4-D N×C×H×W input, got 3-D"),
        ((1, 3, 6, 6), {"blocksize": 2, "mode": "XYZ"}, "attribute mode='XYZ' is not supported; supported: DCR, CRD"),
    ],
)
def test_bad_input(shape, attributes, message):
    with pytest.raises(BoltError) as info:
        import_model(space_to_depth_model(shape, **attributes))
    assert info.value.message == f"SpaceToDepth node 's2d': {message}"
    assert "\n" not in info.value.message
