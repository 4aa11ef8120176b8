"""The ONNX CumSum and GatherElements converters: CumSum on a run-time tensor (RoBERTa's
position ids: cumsum(input_ids != pad) * mask + pad) and GatherElements (a gather of the
flattened data) match onnx.reference and onnxruntime through import and the op-level
pipeline (GatherElements against np.take_along_axis: onnx.reference's own fails on
more than 64 positions along the axis and on indices smaller than the data); a run-time
or malformed axis, and indices that do not fit the data, are
one-line errors that name the node."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import boltir
from boltir.diagnostics import BoltError
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.interp import run
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes

PAD = 1


def model_of(nodes, inputs, outputs, initializers=(), opset=17):
    graph_ = helper.make_graph(nodes, "m", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", opset)])


def position_ids_model(batch=2, sequence=16):
    """RoBERTa's create_position_ids_from_input_ids as torch.onnx exports it."""
    nodes = [
        helper.make_node("Equal", ["ids", "pad"], ["is_pad"]),
        helper.make_node("Not", ["is_pad"], ["keep"]),
        helper.make_node("Cast", ["keep"], ["mask"], to=TensorProto.INT32),
        helper.make_node("CumSum", ["mask", "axis"], ["running"], name="cumsum"),
        helper.make_node("Mul", ["running", "mask"], ["counted"]),
        helper.make_node("Cast", ["counted"], ["counted64"], to=TensorProto.INT64),
        helper.make_node("Add", ["counted64", "pad"], ["positions"]),
    ]
    initializers = [numpy_helper.from_array(np.array(PAD, np.int64), "pad"), numpy_helper.from_array(np.array(1, np.int64), "axis")]
    return model_of(
        nodes,
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, sequence])],
        [helper.make_tensor_value_info("positions", TensorProto.INT64, None)],
        initializers,
    )


def padded_ids(rng, batch=2, sequence=16) -> np.ndarray:
    ids = rng.integers(2, 50, (batch, sequence)).astype(np.int64)
    ids[0, -5:] = PAD  # a padded row
    ids[1, 3] = PAD
    return ids


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_roberta_position_ids(rng, dtype):
    proto = position_ids_model()
    ids = padded_ids(rng)
    expected = ReferenceEvaluator(proto).run(None, {"ids": ids})[0]
    module = import_model(proto)
    assert [op for op in module.walk() if isinstance(op, graph.CumSumOp)]
    (got,) = run(module, {"ids": ids})
    np.testing.assert_array_equal(got, expected)
    run_passes(module, parse_pipeline_spec(default_pipeline(dtype=dtype), available_passes()), boltir.make_context())
    (cumsum,) = [op for op in module.walk() if isinstance(op, ops.CumSumOp)]
    assert str(cumsum.output.type.element_type) == "i32"  # integers stay integers at f16
    (got,) = run(module, {"ids": ids})
    np.testing.assert_array_equal(got, expected)


def cumsum_model(shape, axis, exclusive=0, reverse=0, dtype=TensorProto.FLOAT):
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="cs", exclusive=exclusive, reverse=reverse)
    axis_init = numpy_helper.from_array(np.array(axis, np.int32), "axis")
    return model_of([node], [helper.make_tensor_value_info("x", dtype, list(shape))],
                    [helper.make_tensor_value_info("y", dtype, None)], [axis_init])


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize(("shape", "axis"), [((3, 7), 1), ((4, 5, 6), -2), ((9,), 0)])
def test_cumsum_matches_the_reference(rng, shape, axis, exclusive, reverse):
    proto = cumsum_model(shape, axis, exclusive, reverse)
    x = rng.standard_normal(shape).astype(np.float32)
    expected = ReferenceEvaluator(proto).run(None, {"x": x})[0]
    (got,) = run(import_model(proto), {"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_cumsum_of_constants_folds_at_import():
    nodes = [helper.make_node("CumSum", ["c", "axis"], ["s"]), helper.make_node("Add", ["x", "s"], ["y"])]
    inits = [numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "c"),
             numpy_helper.from_array(np.array(1, np.int64), "axis")]
    proto = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    module = import_model(proto)
    assert not [op for op in module.walk() if isinstance(op, graph.CumSumOp)]
    (got,) = run(module, {"x": np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(got, [[0, 1, 3], [3, 7, 12]])


def test_cumsum_axis_at_run_time_is_an_error():
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="cs")
    proto = model_of([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                              helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(BoltError) as info:
        import_model(proto)
    assert info.value.message.startswith("CumSum node 'cs': input 1 (axis) must be known at import, but it is computed at run time")
    assert "\n" not in info.value.message


@pytest.mark.parametrize(
    ("axis", "message"),
    [(np.array([0, 1], np.int64), "input 1 (axis) must hold one integer, got [2]"),
     (np.array(2, np.int64), "axis 2 is out of range for a rank-2 input")],
)
def test_cumsum_bad_axis(axis, message):
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="cs")
    proto = model_of([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(axis, "axis")])
    with pytest.raises(BoltError) as info:
        import_model(proto)
    assert info.value.message == f"CumSum node 'cs': {message}"


def gather_elements_model(data_shape, index_shape, axis, index_type=TensorProto.INT64):
    node = helper.make_node("GatherElements", ["data", "index"], ["y"], name="ge", axis=axis)
    return model_of([node], [helper.make_tensor_value_info("data", TensorProto.FLOAT, list(data_shape)),
                             helper.make_tensor_value_info("index", index_type, list(index_shape))],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


def take_along_axis(data: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    """out[p] = data[p with index[p] at `axis`] over the index's shape (torch.gather's rule,
    which also takes indices smaller than the data off the axis)."""
    within = tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(index.shape))
    return np.take_along_axis(data[within], np.where(index < 0, index + data.shape[axis], index), axis)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
@pytest.mark.parametrize(
    ("data_shape", "index_shape", "axis"),
    [((2, 512), (2, 16), 1), ((4, 3), (6, 3), 0), ((3, 4, 5), (3, 2, 5), 1), ((3, 4, 5), (2, 4, 7), 2), ((5,), (9,), 0)],
)
def test_gather_elements_matches_the_reference(rng, data_shape, index_shape, axis, index_dtype):
    proto = gather_elements_model(data_shape, index_shape, axis, TensorProto.INT64 if index_dtype == np.int64 else TensorProto.INT32)
    feeds = {"data": rng.standard_normal(data_shape).astype(np.float32),
             "index": rng.integers(-data_shape[axis], data_shape[axis], index_shape).astype(index_dtype)}
    expected = take_along_axis(feeds["data"], feeds["index"], axis)
    module = import_model(proto)
    (got,) = run(module, feeds)
    np.testing.assert_array_equal(got, expected)
    run_passes(module, parse_pipeline_spec(default_pipeline(dtype="f32"), available_passes()), boltir.make_context())
    (got,) = run(module, feeds)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("data_shape", "index_shape", "message"),
    [((3, 4), (3, 4, 1), "the indices' rank 3 differs from the data's rank 2"),
     ((3, 4), (4, 2), "the indices' size 4 in dimension 0 exceeds the data's size 3")],
)
def test_gather_elements_bad_indices(data_shape, index_shape, message):
    with pytest.raises(BoltError) as info:
        import_model(gather_elements_model(data_shape, index_shape, 1))
    assert info.value.message == f"GatherElements node 'ge': {message}"
