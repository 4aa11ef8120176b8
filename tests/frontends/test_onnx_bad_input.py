"""Every user-facing error of the ONNX importer: `import_model` raises a one-line
`BoltError` that names the problem (the file, the input, the node and its op) and what
would fix it; no other exception escapes, and nothing is returned.

Also the one old-opset path that must not fail: a model at opset 9 is upgraded and
imported, and matches onnxruntime.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model, supported_onnx_dtypes
from boltir.frontends.onnx_converters import CONVERTERS
from boltir.ir import find_entry
from tests.frontends.onnx_models import check_against_onnxruntime, resnet_onnx, seeded_rng

SUPPORTED_OPS = ", ".join(sorted(CONVERTERS))
SUPPORTED_DTYPES = ", ".join(supported_onnx_dtypes())


@pytest.fixture
def rng() -> np.random.Generator:
    return seeded_rng()


def model_of(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto] | None = None,
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 17,
    output: onnx.ValueInfoProto | None = None,
    extra_opsets: tuple[onnx.OperatorSetIdProto, ...] = (),
    check: bool = True,
) -> onnx.ModelProto:
    """A model of `nodes` reading `x` (2x3x8x8 f32 unless `inputs` says otherwise) and
    writing `y` (declared 2x3x8x8 f32; the checker wants a shape, and does not infer)."""
    inputs = inputs if inputs is not None else [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])]
    output = output or helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8, 8])
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(nodes, "bad", inputs, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), *extra_opsets])
    model.ir_version = 8 if opset < 19 else 9
    if check:
        onnx.checker.check_model(model)
    return model


def relu_model() -> onnx.ModelProto:
    return model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")])


def import_error(model, **kwargs) -> str:
    """The message of the BoltError that importing `model` raises (and nothing else)."""
    with pytest.raises(BoltError) as info:
        import_model(model, **kwargs)
    message = info.value.message
    assert "\n" not in message and "Traceback" not in message
    assert str(info.value) == f"error: {message}"
    return message


# ----------------------------------------------------------------------- files


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.onnx"
    assert import_error(path) == f"cannot read ONNX model '{path}': no such file"
    assert import_error(str(path)) == f"cannot read ONNX model '{path}': no such file"


def test_directory(tmp_path):
    assert import_error(tmp_path) == f"cannot read ONNX model '{tmp_path}': it is a directory"


def test_truncated_file(tmp_path, rng):
    data = resnet_onnx(rng).SerializeToString()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    assert import_error(path) == (
        f"'{path}' is not a valid ONNX model: truncated or malformed protobuf "
        "(Error parsing message with type 'onnx.ModelProto': Wire format was corrupt)"
    )


def test_garbage_bytes(tmp_path):
    path = tmp_path / "garbage.onnx"
    path.write_bytes(np.random.default_rng(0).bytes(4096))  # fixed, so the decoder's complaint is too
    assert import_error(path) == (
        f"'{path}' is not a valid ONNX model: truncated or malformed protobuf "
        "(Error parsing message with type 'onnx.ModelProto': Wire format was corrupt)"
    )


def test_text_file(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_text("func.func @main() {\n}\n")
    assert import_error(path) == (
        f"'{path}' is not a valid ONNX model: truncated or malformed protobuf "
        "(Error parsing message with type 'onnx.ModelProto': Wire format was corrupt)"
    )


def test_empty_file(tmp_path):
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    assert import_error(path) == f"'{path}' is not a valid ONNX model: it holds no graph"


# ------------------------------------------------------------------- ops


def test_unsupported_op_topk():
    model = model_of(
        [helper.make_node("TopK", ["x", "k"], ["y", "indices"], name="top_scores", axis=-1)],
        initializers={"k": np.array([2], np.int64)},
    )
    assert import_error(model) == f"unsupported ONNX op TopK (node 'top_scores'); supported: {SUPPORTED_OPS}"


def test_unsupported_op_einsum_without_a_name_is_named_by_its_output():
    model = model_of([helper.make_node("Einsum", ["x", "x"], ["y"], equation="bchw,bchw->bc")])
    message = import_error(model)
    assert message == f"unsupported ONNX op Einsum (node 'y'); supported: {SUPPORTED_OPS}"
    assert "Conv, ConvTranspose" in message and "Einsum" not in message.split("supported: ")[1]


def test_op_from_another_domain():
    model = model_of(
        [helper.make_node("FusedConv", ["x", "w"], ["y"], name="fused", domain="com.microsoft", activation="Relu")],
        initializers={"w": np.zeros((4, 3, 3, 3), np.float32)},
        extra_opsets=(helper.make_opsetid("com.microsoft", 1),),
    )
    assert import_error(model) == (
        "unsupported ONNX op com.microsoft.FusedConv (node 'fused'): boltir reads only the default ai.onnx domain"
    )


def test_op_from_another_domain_without_a_name_is_named_by_its_output():
    """Like every other node message, an unnamed node is named by its first output."""
    model = model_of(
        [helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft")],
        extra_opsets=(helper.make_opsetid("com.microsoft", 1),),
    )
    assert import_error(model) == (
        "unsupported ONNX op com.microsoft.Gelu (node 'y'): boltir reads only the default ai.onnx domain"
    )


def test_control_flow_op():
    branch = helper.make_graph([], "branch", [], [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)])
    model = model_of(
        [helper.make_node("If", ["cond"], ["y"], name="branchy", then_branch=branch, else_branch=branch)],
        inputs=[
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        check=False,
    )
    assert import_error(model) == f"unsupported ONNX op If (node 'branchy'); supported: {SUPPORTED_OPS}"


# ------------------------------------------------------------- attributes


def test_resize_antialias():
    model = model_of(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="shrink", mode="linear", antialias=1)],
        initializers={"scales": np.array([1, 1, 0.5, 0.5], np.float32)},
        opset=18,
    )
    assert import_error(model) == "Resize node 'shrink': attribute antialias=1 is not supported; supported: 0"


def test_pad_mode_symmetric():
    """onnx's checker does not look at Pad's mode string; boltir names the modes it knows."""
    model = model_of(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="symmetric")],
        initializers={"pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)},
    )
    assert import_error(model) == (
        "Pad node 'pad': attribute mode='symmetric' is not supported; supported: constant, edge, reflect, wrap"
    )


def test_average_pool_dilations():
    model = model_of(
        [helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], dilations=[2, 2])], opset=19
    )
    assert import_error(model) == (
        "AveragePool node 'pool': attribute dilations=[2, 2] is not supported; supported: all 1 for AveragePool"
    )


def test_resize_mode():
    model = model_of(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="area")],
        initializers={"scales": np.array([1, 1, 2, 2], np.float32)},
        check=False,
    )
    assert import_error(model) == "Resize node 'up': attribute mode='area' is not supported; supported: nearest, linear, cubic"


def test_unknown_attribute():
    model = model_of([helper.make_node("Relu", ["x"], ["y"], name="relu", slope=0.1)], check=False)
    assert import_error(model) == "Relu node 'relu': attribute slope is not supported"


def test_three_dimensional_conv():
    model = model_of(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv3d")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4, 4])],
        initializers={"w": np.zeros((4, 3, 3, 3, 3), np.float32)},
    )
    assert import_error(model) == "Conv node 'conv3d': only 1-D and 2-D Conv is supported, this one is 3-D"


def test_training_mode_dropout():
    model = model_of(
        [helper.make_node("Dropout", ["x", "", "training"], ["y"], name="drop")],
        initializers={"training": np.array(True)},
    )
    assert import_error(model) == "Dropout node 'drop': training_mode is set; boltir compiles inference only"


def test_training_mode_batch_norm():
    model = model_of(
        [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn", training_mode=1)],
        initializers={name: np.ones(3, np.float32) for name in "sbmv"},
    )
    assert import_error(model) == "BatchNormalization node 'bn': training_mode is set; boltir compiles inference only"


def test_shapes_that_do_not_fit_name_the_node():
    model = model_of(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="project")], initializers={"w": np.zeros((5, 4), np.float32)}
    )
    assert import_error(model) == "MatMul node 'project': matmul contraction mismatch: 2x3x8x8 times 5x4"


def test_reshape_to_a_wrong_element_count_names_the_node():
    model = model_of(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="flatten_wrong")],
        initializers={"shape": np.array([5, -1], np.int64)},
    )
    message = import_error(model)
    assert message.startswith("Reshape node 'flatten_wrong': "), message
    # 384 elements do not split into rows of 5; the message must not invent a 5x76 target.
    assert "384" in message and "76" not in message, message


# ------------------------------------------------------------------ dtypes


def test_string_input():
    model = model_of(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        inputs=[
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8]),
            helper.make_tensor_value_info("names", TensorProto.STRING, [2]),
        ],
    )
    assert import_error(model) == f"input 'names' has element type STRING, which boltir does not support; supported: {SUPPORTED_DTYPES}"


def test_complex_input():
    model = model_of(
        [helper.make_node("Identity", ["x"], ["y"], name="copy")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2, 3])],
        output=helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2, 3]),
    )
    assert import_error(model) == f"input 'x' has element type COMPLEX64, which boltir does not support; supported: {SUPPORTED_DTYPES}"
    assert "FLOAT, DOUBLE" in SUPPORTED_DTYPES and "INT64" in SUPPORTED_DTYPES and "STRING" not in SUPPORTED_DTYPES


def test_complex_initializer():
    model = model_of(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        initializers={"phase": np.ones(3, np.complex64)},
    )
    assert import_error(model) == (
        f"initializer 'phase' has element type COMPLEX64, which boltir does not support; supported: {SUPPORTED_DTYPES}"
    )


def test_cast_to_string():
    model = model_of([helper.make_node("Cast", ["x"], ["y"], name="to_text", to=TensorProto.STRING)], check=False)
    assert import_error(model) == (
        f"Cast node 'to_text': its target has element type STRING, which boltir does not support; supported: {SUPPORTED_DTYPES}"
    )


# ------------------------------------------------------- values needed at import


def test_reshape_shape_from_a_graph_input():
    model = model_of(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
        inputs=[
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
    )
    assert import_error(model) == (
        "Reshape node 'reshape': input 1 (shape) must be known at import, but it is computed at run time; "
        "boltir needs static shapes"
    )


def test_slice_starts_from_a_graph_input():
    model = model_of(
        [helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="crop")],
        inputs=[
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8]),
            helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
        ],
        initializers={"ends": np.array([2], np.int64)},
    )
    assert import_error(model) == (
        "Slice node 'crop': input 1 (starts) must be known at import, but it is computed at run time; "
        "boltir needs static shapes"
    )


# ------------------------------------------------------------ input_shapes


def dynamic_relu_model() -> onnx.ModelProto:
    return model_of(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
    )


def test_input_shapes_names_an_unknown_input():
    assert import_error(relu_model(), input_shapes={"image": (2, 3, 8, 8)}) == (
        "input_shapes names 'image', which the model does not take; its inputs are 'x'"
    )


def test_input_shapes_with_the_wrong_rank():
    assert import_error(dynamic_relu_model(), input_shapes={"x": (2, 3, 8)}) == (
        "input_shapes gives input 'x' rank 3, but the model says rank 4"
    )


def test_input_shapes_contradicting_a_static_dimension():
    assert import_error(dynamic_relu_model(), input_shapes={"x": (2, 4, 8, 8)}) == (
        "input_shapes gives input 'x' size 4 in dimension 1, but the model fixes it to 3"
    )


def test_dynamic_dimension_without_input_shapes():
    assert import_error(dynamic_relu_model()) == (
        "input 'x' has dynamic dimension 0 ('N'); fix it with input_shapes={'x': (<N>, 3, 8, 8)} "
        "(boltc: --input-shape x=<N>x3x8x8)"
    )


def test_input_without_a_shape():
    model = model_of(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        check=False,  # onnx's checker wants the shape too
    )
    assert import_error(model) == (
        "input 'x' has no shape in the model; give it with input_shapes={'x': (...)} (boltc: --input-shape x=AxBxC)"
    )


@pytest.mark.parametrize("size", [None, -1, 2.5], ids=["None", "negative", "fraction"])
def test_input_shapes_with_an_invalid_size(size):
    """A size that is not a positive integer is the user's mistake, reported as such
    (not a TypeError, not a tensor type with a dynamic -1, not a silent truncation)."""
    message = import_error(dynamic_relu_model(), input_shapes={"x": (size, 3, 8, 8)})
    assert message.startswith("input_shapes gives input 'x' "), message


def test_input_shapes_accepts_numpy_integers(rng):
    x = rng.standard_normal((3, 3, 8, 8)).astype(np.float32)
    check_against_onnxruntime(dynamic_relu_model(), {"x": x}, input_shapes={"x": np.array(x.shape)})


def test_input_shapes_that_is_not_a_sequence():
    message = import_error(dynamic_relu_model(), input_shapes={"x": 2})
    assert message.startswith("input_shapes gives input 'x' "), message


# --------------------------------------------------------------- graph structure


def test_no_default_opset():
    model = relu_model()
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    assert import_error(model) == "the ONNX model imports no version of the default (ai.onnx) opset"


def test_nodes_out_of_order():
    model = model_of(
        [helper.make_node("Relu", ["h"], ["y"], name="second"), helper.make_node("Relu", ["x"], ["h"], name="first")],
        check=False,
    )
    assert import_error(model) == "Relu node 'second': input 'h' is not produced by any earlier node or graph input"


def test_two_nodes_define_one_value():
    model = model_of(
        [helper.make_node("Relu", ["x"], ["y"], name="first"), helper.make_node("Sigmoid", ["x"], ["y"], name="second")],
        check=False,
    )
    assert import_error(model) == (
        "Sigmoid node 'second' defines 'y', which Relu node 'first' already defines; an ONNX graph defines each value once"
    )


def test_a_node_redefines_a_graph_input():
    model = model_of([helper.make_node("Relu", ["x"], ["x"], name="relu"), helper.make_node("Relu", ["x"], ["y"])],
                     check=False)
    assert import_error(model) == (
        "Relu node 'relu' defines 'x', which graph input 'x' already defines; an ONNX graph defines each value once"
    )


def test_output_produced_by_no_node():
    model = model_of([helper.make_node("Relu", ["x"], ["h"], name="relu")], check=False)
    assert import_error(model) == "graph output 'y' is produced by no node"


def test_out_of_range_constant_gather_is_a_bolt_error():
    """A Gather of constants folds at import; an index past the end is the model's fault."""
    model = model_of(
        [
            helper.make_node("Gather", ["table", "index"], ["row"], name="lookup"),
            helper.make_node("Add", ["x", "row"], ["y"], name="add"),
        ],
        initializers={"table": np.zeros((4, 8), np.float32), "index": np.array(9, np.int64)},
    )
    message = import_error(model)
    assert message.startswith("Gather node 'lookup': "), message


# -------------------------------------------------------- nothing half-written


BAD_MODELS: dict[str, Callable[[], tuple[onnx.ModelProto, dict]]] = {
    "unsupported op": lambda: (
        model_of([helper.make_node("Einsum", ["x", "x"], ["y"], name="e", equation="bchw,bchw->bc")]),
        {},
    ),
    "late unsupported op": lambda: (
        model_of(
            [
                helper.make_node("Relu", ["x"], ["h"], name="relu"),
                helper.make_node("Conv", ["h", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                helper.make_node("TopK", ["c", "k"], ["y", "i"], name="topk"),
            ],
            initializers={"w": np.ones((4, 3, 3, 3), np.float32), "k": np.array([2], np.int64)},
        ),
        {},
    ),
    "runtime shape": lambda: (
        model_of(
            [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
            inputs=[
                helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8]),
                helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
            ],
        ),
        {},
    ),
    "bad input_shapes": lambda: (dynamic_relu_model(), {"input_shapes": {"x": (2, 3, 8)}}),
    "string input": lambda: (
        model_of(
            [helper.make_node("Identity", ["x"], ["y"], name="copy")],
            inputs=[helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
            output=helper.make_tensor_value_info("y", TensorProto.STRING, [2]),
        ),
        {},
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MODELS))
def test_failed_import_raises_only_bolt_error_and_leaves_the_model_alone(case):
    """import_model either returns a verified module or raises a BoltError: it returns
    nothing half-built, lets no other exception escape, and does not modify the proto
    it was given."""
    model, kwargs = BAD_MODELS[case]()
    before = model.SerializeToString()
    result = "not set"
    try:
        result = import_model(model, **kwargs)
    except BoltError:
        pass
    except Exception as error:  # noqa: BLE001 - exactly what must not happen
        pytest.fail(f"{type(error).__name__} escaped import_model: {error}")
    else:
        pytest.fail(f"import_model returned {type(result).__name__} for a bad model")
    assert result == "not set"
    assert model.SerializeToString() == before


def test_failed_import_does_not_break_the_next_one(rng):
    """A failure midway (after some nodes were converted) leaves no state behind: the
    same process imports a good model right after."""
    model, kwargs = BAD_MODELS["late unsupported op"]()
    with pytest.raises(BoltError):
        import_model(model, **kwargs)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    check_against_onnxruntime(relu_model(), {"x": x})


# ------------------------------------------------------------------ old opsets


def opset9_model(rng: np.random.Generator) -> onnx.ModelProto:
    """Conv + BatchNormalization + Relu, Clip with min/max attributes (before opset 11),
    Upsample, MaxPool, Unsqueeze/Squeeze with axes attributes, Flatten and Gemm."""

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn", epsilon=1e-5, momentum=0.9),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("Clip", ["r"], ["clipped"], name="relu6", min=0.0, max=6.0),
        helper.make_node("Upsample", ["clipped", "scales"], ["up"], name="upsample", mode="nearest"),
        helper.make_node("MaxPool", ["up"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Unsqueeze", ["p"], ["p5"], name="unsqueeze", axes=[0]),
        helper.make_node("Squeeze", ["p5"], ["p4"], name="squeeze", axes=[0]),
        helper.make_node("Flatten", ["p4"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    initializers = {
        "w": f32(8, 3, 3, 3, scale=0.3),
        "b": f32(8, scale=0.1),
        "s": rng.uniform(0.5, 1.5, 8).astype(np.float32),
        "bb": f32(8, scale=0.1),
        "m": f32(8, scale=0.1),
        "v": rng.uniform(0.5, 2.0, 8).astype(np.float32),
        "scales": np.array([1, 1, 2, 2], np.float32),
        "fc_w": f32(5, 8 * 8 * 8, scale=0.05),
        "fc_b": f32(5, scale=0.1),
    }
    model = model_of(
        nodes, opset=9, output=helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5]), initializers=initializers
    )
    model.ir_version = 4
    onnx.checker.check_model(model, full_check=True)
    return model


def test_opset9_model_is_upgraded_and_matches_onnxruntime(rng):
    model = opset9_model(rng)
    assert model.opset_import[0].version == 9
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    check_against_onnxruntime(model, {"x": x})
    assert model.opset_import[0].version == 9  # the caller's proto is not upgraded in place


def exporter_dynamic_model(kind: str) -> onnx.ModelProto:
    """A Relu over x[?, 3, 48, 192] whose first dimension is dynamic the way exporters write
    it: Paddle's dim_value -1, another negative dim_value, an empty dim, or a dim_param."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 48, 192])
    first = x.type.tensor_type.shape.dim[0]
    first.Clear()
    if kind == "minus_one":
        first.dim_value = -1
    elif kind == "negative":
        first.dim_value = -7
    elif kind == "param":
        first.dim_param = "batch"
    return model_of([helper.make_node("Relu", ["x"], ["y"], name="relu")], inputs=[x])


@pytest.mark.parametrize("kind", ["minus_one", "negative", "empty", "param"])
def test_exporters_dynamic_dimensions_are_fixed_by_input_shapes(kind):
    """Issue 17: `dim_value: -1` was read as a fixed -1, and input_shapes was refused."""
    module = import_model(exporter_dynamic_model(kind), input_shapes={"x": (1, 3, 48, 192)})
    entry = find_entry(module)
    assert tuple(entry.function_type.inputs.data[0].get_shape()) == (1, 3, 48, 192)


@pytest.mark.parametrize("kind", ["minus_one", "negative", "empty", "param"])
def test_exporters_dynamic_dimensions_without_input_shapes_name_input_and_dimension(kind):
    label = "batch" if kind == "param" else "N"
    assert import_error(exporter_dynamic_model(kind)) == (
        f"input 'x' has dynamic dimension 0 ('{label}'); fix it with input_shapes={{'x': (<{label}>, 3, 48, 192)}} "
        f"(boltc: --input-shape x=<{label}>x3x48x192)"
    )


def test_boltc_input_shape_fixes_a_minus_one_dimension(tmp_path):
    from boltir.tools import boltc

    path = tmp_path / "paddle_style.onnx"
    onnx.save(exporter_dynamic_model("minus_one"), path)
    out = tmp_path / "model.mlir"
    assert boltc.main([str(path), "--emit", "graph", "--input-shape", "x=1x3x48x192", "-o", str(out)]) == 0
    assert "tensor<1x3x48x192xf32>" in out.read_text()


# ------------------------------------------- found by the fuzzer (test_onnx_fuzz.py)
#
# Each case is the smallest form of a model that made the importer raise something other
# than a one-line BoltError (the exception it raised before is in the comment).


def external_data_that_is_not_there() -> onnx.ModelProto:
    model = model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add")], initializers={"w": np.ones(3, np.float32)})
    weight = model.graph.initializer[0]
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "nowhere.bin"
    return model


def raw_data_of_the_wrong_length() -> onnx.ModelProto:
    model = model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add")], initializers={"w": np.ones(3, np.float32)})
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:7]
    return model


def with_attribute(node: onnx.NodeProto, name: str, value) -> onnx.NodeProto:
    node.attribute.append(helper.make_attribute(name, value))
    return node


def filled(shape: list[int]) -> onnx.ModelProto:
    """x + ConstantOfShape(shape): the constant is made at import."""
    return model_of(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"), helper.make_node("Add", ["x", "c"], ["y"], name="add")],
        initializers={"s": np.array(shape, np.int64)},
        check=False,
    )


def counted(start: int, limit: int, delta: int) -> onnx.ModelProto:
    """x + Range(start, limit, delta): the range is made at import."""
    return model_of(
        [helper.make_node("Range", ["a", "b", "d"], ["r"], name="count"), helper.make_node("Add", ["x", "r"], ["y"], name="add")],
        initializers={"a": np.array(start, np.int64), "b": np.array(limit, np.int64), "d": np.array(delta, np.int64)},
        check=False,
    )


def conv(weight_shape: tuple[int, ...], **attributes) -> onnx.ModelProto:
    return model_of(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attributes)],
        initializers={"w": np.zeros(weight_shape, np.float32)},
        check=False,
    )


def resize(*, scales=None, sizes=None, x_shape=(2, 3, 8, 8)) -> onnx.ModelProto:
    given = ["", "scales"] if scales is not None else ["", "", "sizes"]
    initializers = {"scales": np.array(scales, np.float32)} if scales is not None else {"sizes": np.array(sizes, np.int64)}
    return model_of(
        [helper.make_node("Resize", ["x", *given], ["y"], name="resize")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        initializers=initializers,
        check=False,
    )


def non_utf8_value_name() -> onnx.ModelProto:
    """A name whose bytes are not UTF-8: protobuf hands it over as bytes, not str."""
    model = model_of([helper.make_node("Relu", ["x"], ["ab"], name="first"), helper.make_node("Relu", ["ab"], ["y"], name="second")])
    return onnx.ModelProto.FromString(model.SerializeToString().replace(b"\x12\x02ab", b"\x12\x02a\xff"))


FOUND_BY_THE_FUZZER: dict[str, tuple[Callable[[], onnx.ModelProto], str]] = {
    # TypeError: int() argument must be ... not 'list'
    "attribute of the wrong type": (
        lambda: model_of([with_attribute(helper.make_node("Softmax", ["x"], ["y"], name="softmax"), "axis", ["a", "b"])],
                         check=False),
        "Softmax node 'softmax': attribute axis is STRINGS, but Softmax takes INT",
    ),
    # TypeError: int() argument must be ... not 'NoneType'
    "required attribute missing": (
        lambda: model_of([helper.make_node("Concat", ["x", "x"], ["y"], name="join")], check=False),
        "Concat node 'join': attribute axis is required",
    ),
    # IndexError: list index out of range
    "too few inputs": (
        lambda: model_of([helper.make_node("Conv", ["x"], ["y"], name="conv")], check=False),
        "Conv node 'conv': Conv takes 2 to 3 inputs, this node has 1",
    ),
    "required input with an empty name": (
        lambda: model_of([helper.make_node("Conv", ["x", ""], ["y"], name="conv")], check=False),
        "Conv node 'conv': input 1 (W) is required, but its name is empty",
    ),
    # IndexError in naming the node by its first output
    "node without outputs": (
        lambda: model_of(
            [helper.make_node("Relu", ["x"], ["h"], name="relu"), helper.make_node("Relu", ["x"], [], name="lost")], check=False
        ),
        "Relu node 'lost': Relu has 1 output, this node has 0",
    ),
    # ValueError: buffer size must be a multiple of element size
    "initializer data of the wrong length": (
        raw_data_of_the_wrong_length,
        "initializer 'w' cannot be read: buffer size must be a multiple of element size",
    ),
    # onnx ValidationError
    "external data that is not there": (
        external_data_that_is_not_there,
        "initializer 'w' cannot be read: Data of TensorProto ( tensor name: w) should be stored in nowhere.bin, "
        "but it is not regular file.",
    ),
    # TypeError: iteration over a 0-d array
    "ConstantOfShape of a scalar shape": (
        lambda: filled(3),
        "ConstantOfShape node 'fill': input 0 (shape) must be a 1-D tensor, got shape []",
    ),
    # ValueError: negative dimensions are not allowed
    "ConstantOfShape of a negative size": (
        lambda: filled([2, -1]),
        "ConstantOfShape node 'fill': shape [2, -1] has a negative size",
    ),
    # MemoryError (or the machine's memory, for a size that fits it only just)
    "ConstantOfShape too large to make": (
        lambda: filled([2**31, 2**31]),
        "ConstantOfShape node 'fill': computing it at import would make a constant of 4611686018427387904 elements "
        "(shape [2147483648, 2147483648]); the limit is 268435456",
    ),
    # ValueError: Maximum allowed size exceeded
    "Range with a zero step": (lambda: counted(0, 4, 0), "Range node 'count': cannot count from 0 to 4 in steps of 0"),
    "Range too large to make": (
        lambda: counted(0, 2**40, 1),
        "Range node 'count': computing it at import would make a constant of 1099511627776 elements "
        "(shape [1099511627776]); the limit is 268435456",
    ),
    # IndexError: tuple index out of range
    "Reshape copying a size past the input's rank": (
        lambda: model_of(
            [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
            inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
            initializers={"s": np.array([6, 0], np.int64)},
            check=False,
        ),
        "Reshape node 'reshape': shape [6, 0] copies a size (0) from beyond the input's rank 1",
    ),
    # IndexError: tuple index out of range
    "Split axis out of range": (
        lambda: model_of([helper.make_node("Split", ["x"], ["y", "z"], name="split", axis=7)], check=False),
        "Split node 'split': axis 7 is out of range for a rank-4 input",
    ),
    # ZeroDivisionError
    "Split into zero outputs": (
        lambda: model_of([helper.make_node("Split", ["x"], ["y"], name="split", axis=1, num_outputs=0)], opset=18, check=False),
        "Split node 'split': attribute num_outputs=0 is not supported; supported: a positive count",
    ),
    # ZeroDivisionError
    "Resize of an empty axis to sizes": (
        lambda: resize(sizes=[1, 3, 4, 4], x_shape=(1, 0, 2, 2)),
        "Resize node 'resize': cannot resize the input [1, 0, 2, 2] to sizes: an axis it resizes is empty",
    ),
    # IndexError: index 3 is out of bounds
    "Resize scales of the wrong count": (
        lambda: resize(scales=[1, 1, 2]),
        "Resize node 'resize': scales has 3 values, but the node resizes 4 axes",
    ),
    "Resize scale of zero": (lambda: resize(scales=[1, 1, 0, 2]), "Resize node 'resize': scales [1.0, 1.0, 0.0, 2.0] must be positive"),
    # ValueError: zip() argument 2 is shorter than argument 1
    "Upsample scales of the wrong count": (
        lambda: model_of([helper.make_node("Upsample", ["x", "s"], ["y"], name="up")],
                         initializers={"s": np.array([2, 2], np.float32)}, opset=11, check=False),
        "Upsample node 'up': scales [2.0, 2.0] must give each of the input's 4 axes a positive scale",
    ),
    # ValueError: The truth value of an array with more than one element is ambiguous
    "Dropout training_mode of two values": (
        lambda: model_of([helper.make_node("Dropout", ["x", "", "t"], ["y"], name="drop")],
                         initializers={"t": np.array([True, False])}, check=False),
        "Dropout node 'drop': input 2 (training_mode) must be one boolean, it has shape [2]",
    ),
    # ValueError: zip() argument 2 is shorter than argument 1
    "Conv kernel_shape for fewer axes": (
        lambda: conv((3, 3, 3, 3), kernel_shape=[3], auto_pad="SAME_UPPER"),
        "Conv node 'conv': attribute kernel_shape=[3] must give each of the 2 spatial axes a positive size",
    ),
    # ZeroDivisionError
    "Conv stride of zero": (
        lambda: conv((3, 3, 3, 3), strides=[0, 1], auto_pad="SAME_UPPER"),
        "Conv node 'conv': attribute strides=[0, 1] must give each of the 2 spatial axes a positive size",
    ),
    # ValueError: zip() argument 2 is shorter than argument 1
    "Conv weight of the wrong rank": (
        lambda: conv((3, 3, 3), auto_pad="SAME_UPPER"),
        "Conv node 'conv': its weight has shape [3, 3, 3], but a 2-D Conv needs rank 4",
    ),
    "ConvTranspose output_padding for fewer axes": (
        lambda: model_of([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", output_padding=[1])],
                         initializers={"w": np.zeros((3, 3, 1, 1), np.float32)}, check=False),
        "ConvTranspose node 'up': attribute output_padding=[1] does not fit a 2-D ConvTranspose: it needs 2 values",
    ),
    "MaxPool pads for fewer axes": (
        lambda: model_of([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], pads=[1, 1])], check=False),
        "MaxPool node 'pool': attribute pads=[1, 1] must have 4 values, a begin and an end per spatial axis",
    ),
    # ZeroDivisionError on a scalar input; other axes were taken modulo the rank
    "Pad axes out of range": (
        lambda: model_of([helper.make_node("Pad", ["x", "p", "", "a"], ["y"], name="pad")],
                         initializers={"p": np.array([1, 1], np.int64), "a": np.array([5], np.int64)}, opset=18, check=False),
        "Pad node 'pad': axes entry 5 is out of range for a rank-4 input",
    ),
    # AttributeError: 'int' object has no attribute 'isalnum'
    "a name that is not UTF-8": (
        non_utf8_value_name,
        "the ONNX model is malformed: model.graph.node[0].output[0] is not UTF-8 text",
    ),
    # UnicodeDecodeError
    "a string attribute that is not UTF-8": (
        lambda: model_of([helper.make_node("Pad", ["x", "p"], ["y"], name="pad", mode=b"\xffconstant")],
                         initializers={"p": np.zeros(8, np.int64)}, check=False),
        "Pad node 'pad': attribute mode is not UTF-8 text",
    ),
}


@pytest.mark.parametrize("case", sorted(FOUND_BY_THE_FUZZER))
def test_what_the_fuzzer_found_is_one_line(case):
    make_model, expected = FOUND_BY_THE_FUZZER[case]
    assert import_error(make_model()) == expected


def test_slice_starts_and_ends_of_another_rank_are_read_as_lists():
    """TypeError before: a 0-d starts could not be iterated, a 2-D ends not be int()ed."""
    model = model_of(
        [helper.make_node("Slice", ["x", "s", "e"], ["y"], name="crop")],
        initializers={"s": np.array(0, np.int64), "e": np.array([[1]], np.int64)},
        output=helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8]),
        check=False,
    )
    entry = find_entry(import_model(model))
    assert tuple(entry.function_type.outputs.data[0].get_shape()) == (1, 3, 8, 8)


def test_resize_scales_as_a_scalar_are_read_as_a_list():
    """IndexError before: a one-element 0-d scales could not be indexed."""
    model = model_of(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        output=helper.make_tensor_value_info("y", TensorProto.FLOAT, [6]),
        initializers={"scales": np.array(2.0, np.float32)},
        check=False,
    )
    entry = find_entry(import_model(model))
    assert tuple(entry.function_type.outputs.data[0].get_shape()) == (6,)


def test_a_transpose_beside_its_own_input_reaches_the_op_level():
    """x.T - x: convert-layout pushed the transpose through the Sub onto the other
    operand and back again, forever (the fuzzer's corrupted models met it first)."""
    from boltir.compiler import lower
    from boltir.interp import run
    from boltir.pipelines import default_pipeline

    model = model_of(
        [helper.make_node("Transpose", ["x"], ["t"], name="flip"), helper.make_node("Sub", ["t", "x"], ["y"], name="sub")],
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
        output=helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4]),
    )
    lowered = lower(model, arch="sm90", dtype="f32", pipeline=default_pipeline(dtype="f32", arch="sm90")).module
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(run(lowered, {"x": x})[0], x.T - x)
