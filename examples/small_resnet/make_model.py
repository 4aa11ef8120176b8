"""Writes the bundled example model: a small ResNet-style CNN in ONNX, random weights.

    python examples/small_resnet/make_model.py [OUT_DIR]

Writes into OUT_DIR (created if missing), or without one into a new temporary directory
(printed), never into the repository. Produces small_resnet.onnx (input "image", 1x3x32x32 f32; output "logits", 1x10) and
input.npz (one random image keyed by the input name). Built with onnx.helper, so it
needs neither torch nor a download.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(2022)


class GraphBuilder:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def weight(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def node(self, op_type: str, inputs: list[str], **attributes) -> str:
        self.count += 1
        output = f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=f"{op_type}_{self.count}", **attributes))
        return output

    def conv_bn(self, x: str, prefix: str, cin: int, cout: int, kernel: int, stride: int, relu: bool) -> str:
        fan_in = cin * kernel * kernel
        w = self.weight(f"{prefix}.conv.weight", rng.standard_normal((cout, cin, kernel, kernel)) * np.sqrt(2 / fan_in))
        pad = kernel // 2
        y = self.node("Conv", [x, w], kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4)
        bn = [
            self.weight(f"{prefix}.bn.{name}", value)
            for name, value in (
                ("weight", 1 + 0.1 * rng.standard_normal(cout)),
                ("bias", 0.1 * rng.standard_normal(cout)),
                ("running_mean", 0.1 * rng.standard_normal(cout)),
                ("running_var", rng.uniform(0.5, 1.5, cout)),
            )
        ]
        y = self.node("BatchNormalization", [y, *bn], epsilon=1e-5)
        return self.node("Relu", [y]) if relu else y

    def basic_block(self, x: str, prefix: str, cin: int, cout: int, stride: int) -> str:
        y = self.conv_bn(x, f"{prefix}.0", cin, cout, 3, stride, relu=True)
        y = self.conv_bn(y, f"{prefix}.1", cout, cout, 3, 1, relu=False)
        shortcut = x if stride == 1 and cin == cout else self.conv_bn(x, f"{prefix}.down", cin, cout, 1, stride, relu=False)
        return self.node("Relu", [self.node("Add", [y, shortcut])])


def build() -> onnx.ModelProto:
    g = GraphBuilder()
    x = g.conv_bn("image", "stem", 3, 16, 3, 1, relu=True)
    x = g.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.basic_block(x, "layer1", 16, 16, 1)
    x = g.basic_block(x, "layer2", 16, 32, 2)
    x = g.node("GlobalAveragePool", [x])
    x = g.node("Flatten", [x], axis=1)
    fc_w = g.weight("fc.weight", rng.standard_normal((10, 32)) / np.sqrt(32))
    fc_b = g.weight("fc.bias", 0.1 * rng.standard_normal(10))
    g.nodes.append(helper.make_node("Gemm", [x, fc_w, fc_b], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        g.nodes,
        "small_resnet",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="boltir-example")
    onnx.checker.check_model(model)
    return model


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="boltir-small-resnet-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(build(), out_dir / "small_resnet.onnx")
    np.savez(out_dir / "input.npz", image=rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    print(f"wrote {out_dir / 'small_resnet.onnx'} and {out_dir / 'input.npz'}")


if __name__ == "__main__":
    main()
