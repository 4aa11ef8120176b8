"""Whole models through the ONNX importer, checked against onnxruntime (CPU).

Each model is built with `onnx.helper` (and, where torch is installed, exported from a
torch.nn module) with fresh random weights; onnxruntime and boltir's interpreter run it
on the same fresh random inputs (batch 2), and every output must match to a relative
error ||boltir - ort|| / ||ort|| < 1e-4 in fp32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model
from tests.frontends.onnx_models import (
    BATCH,
    BERT,
    UNET_RESIZES,
    bert_inputs,
    bert_onnx,
    check_against_onnxruntime,
    dynamic_batch_convnet,
    image_inputs,
    mobilenet_v2_onnx,
    resnet_onnx,
    seeded_rng,
    torch_modules,
    unet_onnx,
)

pytest.importorskip("onnxruntime")


@pytest.fixture
def rng() -> np.random.Generator:
    return seeded_rng()


def ops_of(model: onnx.ModelProto) -> set[str]:
    return {node.op_type for node in model.graph.node}


# ------------------------------------------------------------ onnx.helper models


def test_resnet(rng):
    model = resnet_onnx(rng)
    assert {"Conv", "BatchNormalization", "Relu", "MaxPool", "Add", "GlobalAveragePool", "Flatten", "Gemm"} <= ops_of(model)
    (logits,) = check_against_onnxruntime(model, image_inputs(rng))
    assert logits.shape == (BATCH, 10)


@pytest.mark.parametrize("pool", ["GlobalAveragePool", "ReduceMean"])
def test_mobilenet_v2(rng, pool):
    model = mobilenet_v2_onnx(rng, pool=pool)
    depthwise = [n for n in model.graph.node if n.op_type == "Conv" and helper.get_node_attr_value(n, "group") > 1]
    assert len(depthwise) == 5
    clips = [n for n in model.graph.node if n.op_type == "Clip"]
    assert clips and all(len(n.input) == 3 for n in clips)
    (logits,) = check_against_onnxruntime(model, image_inputs(rng))
    assert logits.shape == (BATCH, 10)


@pytest.mark.parametrize("resize", sorted(UNET_RESIZES))
def test_unet(rng, resize):
    model = unet_onnx(rng, resize)
    assert {"ConvTranspose", "Resize", "Concat", "MaxPool", "Sigmoid"} <= ops_of(model)
    (mask,) = check_against_onnxruntime(model, image_inputs(rng))
    assert mask.shape == (BATCH, 2, 32, 32)


def test_bert_erf_gelu(rng):
    model = bert_onnx(rng, gelu="erf", opset=17)
    assert {"Erf", "Shape", "Range", "ConstantOfShape", "Concat", "Unsqueeze", "Cast", "Softmax", "LayerNormalization"} <= ops_of(model)
    sequence, pooled = check_against_onnxruntime(model, bert_inputs(rng))
    assert sequence.shape == (BATCH, BERT["seq"], BERT["hidden"])
    assert pooled.shape == (BATCH, BERT["hidden"])


def test_bert_gelu_op_opset20(rng):
    model = bert_onnx(rng, gelu="gelu-op", opset=20)
    assert "Gelu" in ops_of(model)
    check_against_onnxruntime(model, bert_inputs(rng))


def test_bert_shape_arithmetic_is_folded(rng):
    """The Shape/Gather/Unsqueeze/Concat chains that feed the head Reshapes, the Range of
    position ids and the ConstantOfShape of token types are all computed at import."""
    module = import_model(bert_onnx(rng))
    names = {op.name for op in module.walk()}
    assert "graph.reshape" in names
    assert "graph.concat" not in names  # the shape Concats ran at import
    gathers = [op for op in module.walk() if op.name == "graph.gather"]
    # Only the word-embedding lookup (on input_ids) and the pooler's first-token pick
    # remain; position and token-type embeddings fold to constants.
    assert len(gathers) == 2


def single_node_model(node: onnx.NodeProto, weights: dict[str, np.ndarray], output_shape, opset: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        node.name,
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [BATCH, 4, 8, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, output_shape)],
        [onnx.numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 19 else 9
    onnx.checker.check_model(model, full_check=True)
    return model


EXPORTER_SPELLINGS = {
    # Exporters write attributes out even where they change nothing; each is legal ONNX.
    "ReduceSum-noop_with_empty_axes": lambda rng: single_node_model(
        helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum", keepdims=0, noop_with_empty_axes=0),
        {"axes": np.array([2, 3], np.int64)},
        [BATCH, 4],
        13,
    ),
    "Resize-scales-with-keep_aspect_ratio_policy": lambda rng: single_node_model(
        helper.make_node(
            "Resize",
            ["x", "", "scales"],
            ["y"],
            name="up",
            mode="nearest",
            keep_aspect_ratio_policy="stretch",
            antialias=0,
            exclude_outside=0,
            cubic_coeff_a=-0.75,
            extrapolation_value=0.0,
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
        ),
        {"scales": np.array([1, 1, 2, 2], np.float32)},
        [BATCH, 4, 16, 16],
        18,
    ),
    # "If output_shape is specified pads values are ignored" (ConvTranspose's spec).
    "ConvTranspose-output_shape-with-pads": lambda rng: single_node_model(
        helper.make_node(
            "ConvTranspose", ["x", "w"], ["y"], name="up", strides=[2, 2], output_shape=[16, 16], pads=[0, 0, 0, 0]
        ),
        {"w": rng.normal(0.0, 0.3, (4, 2, 3, 3)).astype(np.float32)},
        [BATCH, 2, 16, 16],
        17,
    ),
}


@pytest.mark.parametrize("case", sorted(EXPORTER_SPELLINGS))
def test_attributes_exporters_spell_out(rng, case):
    model = EXPORTER_SPELLINGS[case](rng)
    check_against_onnxruntime(model, {"x": rng.standard_normal((BATCH, 4, 8, 8)).astype(np.float32)})


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_output_shape_with_odd_total_padding(rng, auto_pad):
    """8 -> 16 with stride 2 and a 3x3 kernel needs 1 pixel of padding in total: ONNX puts
    it at the start for NOTSET (output_shape given) and SAME_LOWER, at the end for
    SAME_UPPER."""
    if auto_pad == "NOTSET":
        attrs = {"output_shape": [16, 16]}
    else:
        attrs = {"auto_pad": auto_pad}
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", strides=[2, 2], kernel_shape=[3, 3], **attrs)
    model = single_node_model(node, {"w": rng.normal(0.0, 0.3, (4, 2, 3, 3)).astype(np.float32)}, [BATCH, 2, 16, 16], 17)
    check_against_onnxruntime(model, {"x": rng.standard_normal((BATCH, 4, 8, 8)).astype(np.float32)})


# -------------------------------------------------------------- dynamic batch


def test_input_shapes_fix_a_dynamic_batch(rng):
    model = dynamic_batch_convnet(rng)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    inputs = {"x": rng.standard_normal((3, 3, 16, 16)).astype(np.float32)}
    (logits,) = check_against_onnxruntime(model, inputs, input_shapes={"x": (3, 3, 16, 16)})
    assert logits.shape == (3, 4)


def test_dynamic_batch_without_input_shapes_names_the_input_and_the_fix(rng):
    with pytest.raises(BoltError) as error:
        import_model(dynamic_batch_convnet(rng))
    assert error.value.message == (
        "input 'x' has dynamic dimension 0 ('N'); fix it with input_shapes={'x': (<N>, 3, 16, 16)} "
        "(boltc: --input-shape x=<N>x3x16x16)"
    )


def test_input_shapes_fix_dynamic_batch_and_sequence(rng):
    """A BERT whose inputs are batch x sequence: the position-id Range and the head
    Reshapes read the sequence length from Shape, which input_shapes makes static."""
    inputs = bert_inputs(rng, batch=3, seq=6)
    shapes = {name: value.shape for name, value in inputs.items()}
    sequence, pooled = check_against_onnxruntime(bert_onnx(rng, dynamic=True), inputs, input_shapes=shapes)
    assert sequence.shape == (3, 6, BERT["hidden"])


def test_two_dynamic_dimensions_without_input_shapes(rng):
    model = bert_onnx(rng, dynamic=True)
    with pytest.raises(BoltError) as error:
        import_model(model, input_shapes={"attention_mask": (2, 8)})
    assert error.value.message == (
        "input 'input_ids' has dynamic dimension 0 ('batch'), 1 ('sequence'); fix it with "
        "input_shapes={'input_ids': (<batch>, <sequence>)} (boltc: --input-shape input_ids=<batch>x<sequence>)"
    )


# ------------------------------------------------------------- torch exports


def export_torch(
    module, args: tuple, path: Path, input_names, output_names, dynamo: bool = False, dynamic_axes=None
) -> Path:
    import torch

    kwargs = {"dynamo": dynamo}
    if dynamo:
        kwargs["external_data"] = False
    else:
        kwargs["opset_version"] = 17
        kwargs["dynamic_axes"] = dynamic_axes
    with torch.no_grad():
        torch.onnx.export(module, args, str(path), input_names=input_names, output_names=output_names, **kwargs)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    return path


def torch_case(name: str, rng: np.random.Generator):
    """(module, numpy inputs, output names) for one torch architecture, random weights."""
    import torch

    torch.manual_seed(int(rng.integers(2**31)))
    generator = torch.Generator().manual_seed(int(rng.integers(2**31)))
    modules = torch_modules()
    if name == "bert":
        return modules["bert"]().eval(), bert_inputs(rng), ["sequence", "pooled"]
    module = modules["unet"](name.split("-")[1]) if name.startswith("unet") else modules[name]()
    return modules["randomize_batch_norms"](module, generator), image_inputs(rng), ["y"]


def check_torch_export(
    name: str, rng: np.random.Generator, tmp_path: Path, dynamo: bool = False, dynamic_axes=None
) -> None:
    import torch

    module, inputs, output_names = torch_case(name, rng)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    path = export_torch(module, args, tmp_path / f"{name}.onnx", list(inputs), output_names, dynamo, dynamic_axes)
    input_shapes = {k: v.shape for k, v in inputs.items()} if dynamic_axes else None
    check_against_onnxruntime(path, inputs, input_shapes=input_shapes)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", ["resnet", "mobilenet_v2", "unet-bilinear", "unet-nearest", "bert"])
def test_torch_export(rng, tmp_path, name):
    pytest.importorskip("torch")
    check_torch_export(name, rng, tmp_path)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", ["resnet", "bert"])
def test_torch_export_with_dynamic_axes_and_input_shapes(rng, tmp_path, name):
    """Exported with dynamic batch (and sequence) axes, so every Shape in the graph reads
    a dimension that only input_shapes makes static."""
    pytest.importorskip("torch")
    if name == "bert":
        dynamic_axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    else:
        dynamic_axes = {"x": {0: "batch"}}
    check_torch_export(name, rng, tmp_path, dynamic_axes=dynamic_axes)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", ["resnet", "mobilenet_v2"])
def test_torch_dynamo_export(rng, tmp_path, name):
    pytest.importorskip("torch")
    pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript")
    check_torch_export(name, rng, tmp_path, dynamo=True)
