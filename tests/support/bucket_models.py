"""Small ONNX models with dynamic dimensions, for the bucketed-build tests: a CNN with a
dynamic batch, one that mixes rows (a mean over the batch), and a BERT layer (torch,
exported with dynamic batch and sequence axes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array.astype(np.float32), name)


def small_cnn(rows_mixed: bool = False, seed: int = 0) -> onnx.ModelProto:
    """image [N, 3, 16, 16] -> conv 3x3 (8) -> relu -> maxpool 2 -> conv 3x3 (16) + relu ->
    global average pool -> flatten -> gemm (10): logits [N, 10]. `rows_mixed` subtracts
    the mean over the batch from the features first (training-mode normalization)."""
    rng = np.random.default_rng(seed)
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], axis=1, name="flatten"),
    ]
    features = "f"
    if rows_mixed:
        nodes += [helper.make_node("ReduceMean", ["f"], ["batch_mean"], axes=[0], keepdims=1, name="batch_mean"),
                  helper.make_node("Sub", ["f", "batch_mean"], ["centered"], name="center")]
        features = "centered"
    nodes.append(helper.make_node("Gemm", [features, "w3", "b3"], ["logits"], transB=1, name="fc"))
    inits = [_init("w1", rng.standard_normal((8, 3, 3, 3)) * 0.3), _init("b1", rng.standard_normal(8) * 0.1),
             _init("w2", rng.standard_normal((16, 8, 3, 3)) * 0.2), _init("b2", rng.standard_normal(16) * 0.1),
             _init("w3", rng.standard_normal((10, 16)) * 0.3), _init("b3", rng.standard_normal(10) * 0.1)]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def bert_layer(path: Path, hidden: int = 64, heads: int = 4, with_mask: bool = False) -> Path:
    """One BERT encoder layer on hidden states x [B, S, hidden] (and, `with_mask`, the 0/1
    attention_mask [B, S]), exported with dynamic batch and sequence axes."""
    import torch

    from tests.support.attention_models import Encoder

    torch.manual_seed(0)

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder(layers=1, hidden=hidden, heads=heads, ffn=4 * hidden)

        def forward(self, x, attention_mask=None):
            if attention_mask is None:
                return self.encoder.layers[0](x, None)
            return self.encoder(x, attention_mask)

    x = torch.randn(2, 8, hidden)
    args, names = ((x, torch.ones(2, 8)), ["x", "attention_mask"]) if with_mask else ((x,), ["x"])
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    torch.onnx.export(Layer().eval(), args, str(path), input_names=names, output_names=["output"], opset_version=17,
                      dynamo=False, dynamic_axes={**axes, "output": {0: "batch", 1: "sequence"}})
    return path
