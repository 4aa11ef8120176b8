"""Ops boltir has no graph op for, folded by onnx's reference implementation when every
input is a constant (boltir/frontends/onnx_constant_fold.py): what PyTorch's exporter
writes for nn.MultiheadAttention's head size (Mod), T5's relative-position buckets (Abs)
and Swin's shifted-window mask (ScatterND). On a run-time tensor they stay unsupported,
and a fold that cannot be computed is one line."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import boltir.interp
from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model
from boltir.frontends.onnx_constant_fold import FOLDED_OPS
from boltir.frontends.onnx_converters import CONVERTERS


def model_of(nodes, initializers: dict[str, np.ndarray], shape=(2, 3)) -> onnx.ModelProto:
    """`nodes` reading `x` (f32 of `shape`) and the initializers, writing `y` (f32)."""
    graph = helper.make_graph(
        nodes, "fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    (y,) = boltir.interp.run(import_model(model), {"x": x})
    return y


def test_folded_ops_have_no_converter():
    """A folded op that gains a converter is converted instead: drop it from FOLDED_OPS."""
    assert not FOLDED_OPS & set(CONVERTERS)


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_of_constants_is_folded(fmod):
    a, b = np.array([7, -7, 9], np.int64), np.array([3, 3, -4], np.int64)
    model = model_of([
        helper.make_node("Mod", ["a", "b"], ["m"], name="mod", fmod=fmod),
        helper.make_node("Cast", ["m"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "mf"], ["y"]),
    ], {"a": a, "b": b}, shape=(3,))
    x = np.arange(3, dtype=np.float32)
    expected = x + (np.fmod(a, b) if fmod else np.mod(a, b))
    np.testing.assert_array_equal(run(model, x), expected)


def test_abs_and_scatter_nd_of_constants_are_folded():
    """Swin's mask: zeros with a block set by ScatterND; T5's |i - j|."""
    zeros = np.zeros((2, 3), np.float32)
    model = model_of([
        helper.make_node("ScatterND", ["zeros", "indices", "updates"], ["mask"], name="scatter"),
        helper.make_node("Abs", ["offsets"], ["distance"], name="abs"),
        helper.make_node("Add", ["mask", "distance"], ["bias"]),
        helper.make_node("Add", ["x", "bias"], ["y"]),
    ], {"zeros": zeros, "indices": np.array([[1, 2], [0, 0]], np.int64), "updates": np.array([5.0, -1.0], np.float32),
        "offsets": np.array([[-2.0, 0.0, 1.5]], np.float32)})
    x = np.ones((2, 3), np.float32)
    expected = x + np.array([[-1, 0, 0], [0, 0, 5]], np.float32) + np.array([[2.0, 0.0, 1.5]], np.float32)
    np.testing.assert_array_equal(run(model, x), expected)
    assert not any(op.name == "graph.scatter_nd" for op in import_model(model).walk())


def test_mod_of_a_run_time_tensor_is_unsupported():
    model = model_of([helper.make_node("Mod", ["x", "b"], ["y"], name="wrap", fmod=1)], {"b": np.float32(2.0)})
    with pytest.raises(BoltError, match=r"^error: unsupported ONNX op Mod \(node 'wrap'\); supported: "):
        import_model(model)


def test_fold_that_fails_is_one_line():
    """A ReduceProd over an axis the constant lacks: the reference's own error, one line,
    naming the node."""
    model = model_of([
        helper.make_node("ReduceProd", ["a"], ["c"], name="past_the_rank", axes=[5], keepdims=1),
        helper.make_node("Add", ["x", "c"], ["y"]),
    ], {"a": np.ones((2, 3), np.float32)})
    with pytest.raises(BoltError) as error:
        import_model(model)
    message = str(error.value)
    assert "\n" not in message and message.startswith("error: ReduceProd node 'past_the_rank': folding it at import failed: ")


def test_fold_whose_inputs_do_not_broadcast_is_one_line():
    model = model_of([
        helper.make_node("Mod", ["a", "b"], ["m"], name="misfit"),
        helper.make_node("Add", ["x", "m"], ["y"]),
    ], {"a": np.ones((2, 3), np.float32), "b": np.ones((4,), np.float32)})
    with pytest.raises(BoltError, match=r"Mod node 'misfit': its inputs' shapes \[\[2, 3\], \[4\]\] do not broadcast"):
        import_model(model)
