"""Whole-model builders for the ONNX importer tests: ResNet, MobileNetV2, U-Net and BERT
style networks, written with `onnx.helper` (as exporters write them) and as small
`torch.nn` modules, all with random weights of a realistic scale.

Also the check every model test makes: onnxruntime (CPU) and boltir's importer plus
interpreter run the same model on the same inputs, and every output must agree to a
relative error ||boltir - ort|| / ||ort|| below `RTOL`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RTOL = 1e-4
BATCH = 2


def seeded_rng() -> np.random.Generator:
    """A fresh generator; the seed is printed (pytest shows it when a test fails) and can
    be replayed with BOLTIR_TEST_SEED=<seed>."""
    seed = int(os.environ.get("BOLTIR_TEST_SEED") or np.random.SeedSequence().entropy)
    print(f"rng seed: {seed} (replay with BOLTIR_TEST_SEED={seed})")
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------- checking


def run_onnxruntime(model: onnx.ModelProto | str | Path, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.log_severity_level = 3
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return session.run(None, dict(inputs))


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-30))


def check_against_onnxruntime(
    model: onnx.ModelProto | str | Path,
    inputs: Mapping[str, np.ndarray],
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    rtol: float = RTOL,
) -> list[np.ndarray]:
    """Imports `model` with boltir, runs it in the interpreter and in onnxruntime, and
    checks every output (shape, dtype and relative error). Returns boltir's outputs."""
    from boltir.frontends.onnx import import_model
    from boltir.interp import run

    expected = run_onnxruntime(model, inputs)
    module = import_model(model, input_shapes=input_shapes)
    actual = run(module, inputs)
    proto = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))
    names = [o.name for o in proto.graph.output]
    assert len(actual) == len(expected) == len(names)
    for name, got, want in zip(names, actual, expected, strict=True):
        assert got.shape == want.shape, f"output '{name}': shape {got.shape}, onnxruntime {want.shape}"
        assert got.dtype == want.dtype, f"output '{name}': dtype {got.dtype}, onnxruntime {want.dtype}"
        error = relative_error(got, want)
        assert error < rtol, f"output '{name}': relative error {error:.3g} (limit {rtol:g})"
    return actual


# ------------------------------------------------------------------ onnx.helper graphs


class GraphBuilder:
    """Collects nodes and initializers; names every node and value uniquely."""

    def __init__(self, rng: np.random.Generator, name: str):
        self.rng = rng
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.counts: dict[str, int] = {}

    def unique(self, base: str) -> str:
        count = self.counts.get(base, 0)
        self.counts[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def input(self, name: str, elem_type: int, shape: Sequence[int | str | None]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def init(self, name: str, array: np.ndarray) -> str:
        name = self.unique(name)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type: str, inputs: Sequence[str], outputs: int = 1, name: str | None = None, **attrs):
        name = self.unique(name or op_type.lower())
        output_names = [f"{name}_out{i}" if outputs > 1 else f"{name}_out" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), output_names, name=name, **attrs))
        return output_names if outputs > 1 else output_names[0]

    def model(
        self, outputs: Sequence[str], output_names: Sequence[str], output_shapes: Sequence[Sequence], opset: int = 17
    ) -> onnx.ModelProto:
        """Renames the final values to `output_names` (via Identity) and checks the model."""
        output_infos = []
        for value, out_name, shape in zip(outputs, output_names, output_shapes, strict=True):
            self.nodes.append(helper.make_node("Identity", [value], [out_name], name=f"{out_name}_identity"))
            output_infos.append(helper.make_tensor_value_info(out_name, TensorProto.FLOAT, list(shape)))
        graph = helper.make_graph(self.nodes, self.name, self.inputs, output_infos, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="boltir-tests")
        model.ir_version = 8 if opset < 19 else 9
        onnx.checker.check_model(model, full_check=True)
        return model

    # -------------------------------------------------------------- common layers

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1, bias: bool = True, name="conv"):
        fan_in = cin // group * k * k
        w = self.rng.normal(0.0, math.sqrt(2.0 / fan_in), (cout, cin // group, k, k)).astype(np.float32)
        inputs = [x, self.init(f"{name}.weight", w)]
        if bias:
            inputs.append(self.init(f"{name}.bias", self.rng.normal(0.0, 0.1, cout).astype(np.float32)))
        pad = k // 2
        return self.node(
            "Conv", inputs, name=name, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group
        )

    def batch_norm(self, x: str, channels: int, name="bn"):
        rng = self.rng
        params = [
            rng.uniform(0.5, 1.5, channels),  # scale
            rng.normal(0.0, 0.1, channels),  # bias
            rng.normal(0.0, 0.2, channels),  # running mean
            rng.uniform(0.5, 2.0, channels),  # running variance
        ]
        names = [self.init(f"{name}.{p}", a.astype(np.float32)) for p, a in zip(("weight", "bias", "mean", "var"), params)]
        return self.node("BatchNormalization", [x, *names], name=name, epsilon=1e-5)

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1, name="layer"):
        return self.batch_norm(self.conv(x, cin, cout, k, stride, group, bias=False, name=f"{name}.conv"), cout, f"{name}.bn")

    def gemm(self, x: str, fan_in: int, fan_out: int, name="fc"):
        w = self.rng.normal(0.0, 1.0 / math.sqrt(fan_in), (fan_out, fan_in)).astype(np.float32)
        b = self.rng.normal(0.0, 0.1, fan_out).astype(np.float32)
        return self.node("Gemm", [x, self.init(f"{name}.weight", w), self.init(f"{name}.bias", b)], name=name, transB=1)

    def linear(self, x: str, fan_in: int, fan_out: int, name="linear"):
        """MatMul + Add bias, as exporters write nn.Linear on 3-D inputs."""
        w = self.rng.normal(0.0, 1.0 / math.sqrt(fan_in), (fan_in, fan_out)).astype(np.float32)
        b = self.rng.normal(0.0, 0.1, fan_out).astype(np.float32)
        product = self.node("MatMul", [x, self.init(f"{name}.weight", w)], name=f"{name}.matmul")
        return self.node("Add", [product, self.init(f"{name}.bias", b)], name=f"{name}.add")

    def layer_norm(self, x: str, width: int, name="ln", epsilon: float = 1e-12):
        scale = self.init(f"{name}.weight", self.rng.uniform(0.5, 1.5, width).astype(np.float32))
        bias = self.init(f"{name}.bias", self.rng.normal(0.0, 0.1, width).astype(np.float32))
        return self.node("LayerNormalization", [x, scale, bias], name=name, axis=-1, epsilon=epsilon)

    def scalar(self, name: str, value, dtype=np.float32) -> str:
        return self.init(name, np.array(value, dtype=dtype))

    def ints(self, name: str, values: Sequence[int]) -> str:
        return self.init(name, np.array(values, dtype=np.int64))


def image_inputs(rng: np.random.Generator, shape=(BATCH, 3, 32, 32)) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(shape).astype(np.float32)}


def resnet_onnx(rng: np.random.Generator, classes: int = 10, batch: int | str = BATCH) -> onnx.ModelProto:
    """conv-BN-ReLU stem, MaxPool, a basic block with an identity shortcut, one with a
    stride-2 1x1-conv + BN downsample shortcut, GlobalAveragePool, Flatten, Gemm."""
    g = GraphBuilder(rng, "resnet")
    x = g.input("x", TensorProto.FLOAT, [batch, 3, 32, 32])
    h = g.node("Relu", [g.conv_bn(x, 3, 16, 3, name="stem")], name="stem.relu")
    h = g.node("MaxPool", [h], name="maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])

    def basic_block(h: str, cin: int, cout: int, stride: int, name: str) -> str:
        out = g.node("Relu", [g.conv_bn(h, cin, cout, 3, stride, name=f"{name}.1")], name=f"{name}.relu1")
        out = g.conv_bn(out, cout, cout, 3, name=f"{name}.2")
        shortcut = h if stride == 1 and cin == cout else g.conv_bn(h, cin, cout, 1, stride, name=f"{name}.down")
        return g.node("Relu", [g.node("Add", [out, shortcut], name=f"{name}.add")], name=f"{name}.relu2")

    h = basic_block(h, 16, 16, 1, "layer1")
    h = basic_block(h, 16, 32, 2, "layer2")
    h = basic_block(h, 32, 32, 1, "layer3")
    h = g.node("GlobalAveragePool", [h], name="gap")
    h = g.node("Flatten", [h], name="flatten", axis=1)
    return g.model([g.gemm(h, 32, classes)], ["logits"], [[batch, classes]])


def mobilenet_v2_onnx(rng: np.random.Generator, classes: int = 10, pool: str = "GlobalAveragePool") -> onnx.ModelProto:
    """Stem, inverted residual blocks (1x1 expansion, depthwise 3x3 with group =
    channels, 1x1 linear projection, Add when the shapes allow), ReLU6 as Clip with
    min/max initializers, a 1x1 head conv, GlobalAveragePool, Gemm.

    pool="ReduceMean" pools with an opset-18 ReduceMean whose axes are an input and whose
    attributes are all written out at their defaults, as torch's dynamo exporter does."""
    g = GraphBuilder(rng, "mobilenet_v2")
    x = g.input("x", TensorProto.FLOAT, [BATCH, 3, 32, 32])
    low, high = g.scalar("relu6.min", 0.0), g.scalar("relu6.max", 6.0)

    def relu6(h: str, name: str) -> str:
        return g.node("Clip", [h, low, high], name=f"{name}.relu6")

    h = relu6(g.conv_bn(x, 3, 16, 3, 2, name="stem"), "stem")  # 16x16

    def inverted_residual(h: str, cin: int, cout: int, stride: int, expand: int, name: str, fold_bn: bool) -> str:
        hidden = cin * expand
        if fold_bn:  # exporters usually fold BN into the conv's bias
            out = relu6(g.conv(h, cin, hidden, 1, name=f"{name}.expand"), f"{name}.expand")
            out = relu6(g.conv(out, hidden, hidden, 3, stride, group=hidden, name=f"{name}.dw"), f"{name}.dw")
            out = g.conv(out, hidden, cout, 1, name=f"{name}.project")
        else:
            out = relu6(g.conv_bn(h, cin, hidden, 1, name=f"{name}.expand"), f"{name}.expand")
            out = relu6(g.conv_bn(out, hidden, hidden, 3, stride, group=hidden, name=f"{name}.dw"), f"{name}.dw")
            out = g.conv_bn(out, hidden, cout, 1, name=f"{name}.project")
        if stride == 1 and cin == cout:
            out = g.node("Add", [h, out], name=f"{name}.add")
        return out

    # The first block has expansion 1 in MobileNetV2: depthwise then projection.
    dw = relu6(g.conv_bn(h, 16, 16, 3, 1, group=16, name="block0.dw"), "block0.dw")
    h = g.conv_bn(dw, 16, 8, 1, name="block0.project")
    h = inverted_residual(h, 8, 12, 2, 4, "block1", fold_bn=False)  # 8x8
    h = inverted_residual(h, 12, 12, 1, 4, "block2", fold_bn=False)
    h = inverted_residual(h, 12, 16, 2, 4, "block3", fold_bn=True)  # 4x4
    h = inverted_residual(h, 16, 16, 1, 4, "block4", fold_bn=True)
    h = relu6(g.conv_bn(h, 16, 64, 1, name="head"), "head")
    if pool == "GlobalAveragePool":
        h = g.node("GlobalAveragePool", [h], name="gap")
        opset = 17
    elif pool == "ReduceMean":
        h = g.node("ReduceMean", [h, g.ints("gap.axes", [2, 3])], name="gap", keepdims=1, noop_with_empty_axes=0)
        opset = 18
    else:
        raise ValueError(pool)
    h = g.node("Flatten", [h], name="flatten", axis=1)
    return g.model([g.gemm(h, 64, classes)], ["logits"], [[BATCH, classes]], opset=opset)


UNET_RESIZES = {
    # id: (mode, coordinate_transformation_mode, nearest_mode, by sizes?)
    "nearest-scales": ("nearest", "asymmetric", "floor", False),
    "linear-scales": ("linear", "half_pixel", None, False),
    "linear-sizes": ("linear", "pytorch_half_pixel", None, True),
    "nearest-sizes": ("nearest", "half_pixel", "round_prefer_floor", True),
}


def unet_onnx(rng: np.random.Generator, resize: str = "linear-scales", size: int = 32) -> onnx.ModelProto:
    """Encoder (conv-ReLU pairs, MaxPool), bottleneck, decoder with a stride-2
    ConvTranspose up-step and a Resize up-step, skips joined by Concat on channels, a
    1x1 conv and Sigmoid."""
    mode, coordinates, nearest_mode, by_sizes = UNET_RESIZES[resize]
    g = GraphBuilder(rng, "unet")
    x = g.input("x", TensorProto.FLOAT, [BATCH, 3, size, size])

    def double_conv(h: str, cin: int, cout: int, name: str) -> str:
        h = g.node("Relu", [g.conv(h, cin, cout, 3, name=f"{name}.conv1")], name=f"{name}.relu1")
        return g.node("Relu", [g.conv(h, cout, cout, 3, name=f"{name}.conv2")], name=f"{name}.relu2")

    skip1 = double_conv(x, 3, 8, "enc1")  # 8 x size
    h = g.node("MaxPool", [skip1], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    skip2 = double_conv(h, 8, 16, "enc2")  # 16 x size/2
    h = g.node("MaxPool", [skip2], name="pool2", kernel_shape=[2, 2], strides=[2, 2])
    h = double_conv(h, 16, 32, "bottleneck")  # 32 x size/4

    # Up-step 1: a learned stride-2 transposed conv.
    w = rng.normal(0.0, math.sqrt(2.0 / (32 * 4)), (32, 16, 2, 2)).astype(np.float32)
    b = rng.normal(0.0, 0.1, 16).astype(np.float32)
    h = g.node("ConvTranspose", [h, g.init("up1.weight", w), g.init("up1.bias", b)], name="up1", kernel_shape=[2, 2], strides=[2, 2])
    h = g.node("Concat", [h, skip2], name="cat1", axis=1)
    h = double_conv(h, 32, 16, "dec1")

    # Up-step 2: Resize by 2, with scales or with sizes given as an initializer.
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinates}
    if nearest_mode is not None:
        attrs["nearest_mode"] = nearest_mode
    if by_sizes:
        sizes = g.ints("up2.sizes", [BATCH, 16, size, size])
        h = g.node("Resize", [h, "", "", sizes], name="up2", **attrs)
    else:
        scales = g.init("up2.scales", np.array([1.0, 1.0, 2.0, 2.0], np.float32))
        h = g.node("Resize", [h, "", scales], name="up2", **attrs)
    h = g.node("Concat", [h, skip1], name="cat2", axis=1)
    h = double_conv(h, 24, 8, "dec2")
    h = g.conv(h, 8, 2, 1, name="head")
    return g.model([g.node("Sigmoid", [h], name="sigmoid")], ["mask"], [[BATCH, 2, size, size]])


BERT = {"vocab": 50, "hidden": 32, "heads": 4, "ffn": 64, "max_positions": 16, "type_vocab": 2, "seq": 8}


def bert_inputs(rng: np.random.Generator, batch: int = BATCH, seq: int = BERT["seq"]) -> dict[str, np.ndarray]:
    ids = rng.integers(0, BERT["vocab"], (batch, seq), dtype=np.int64)
    lengths = rng.integers(2, seq + 1, batch)
    lengths[0] = seq // 2  # at least one row with padding
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    return {"input_ids": ids, "attention_mask": mask}


def bert_onnx(rng: np.random.Generator, gelu: str = "erf", opset: int = 17, dynamic: bool = False) -> onnx.ModelProto:
    """Embeddings (word + position + token type, via Gather; LayerNorm), the additive
    attention mask built from attention_mask, one encoder layer (multi-head
    self-attention, residual, LayerNorm, GELU feed-forward, residual, LayerNorm), a final
    LayerNorm, and a tanh pooler on the first token. Reshapes to heads compute their
    shape with Shape/Gather/Unsqueeze/Concat, as exporters do. `dynamic` makes the
    inputs' dimensions the symbols 'batch' and 'sequence'."""
    hidden, heads, ffn = BERT["hidden"], BERT["heads"], BERT["ffn"]
    head_dim = hidden // heads
    g = GraphBuilder(rng, "bert")
    dims = ["batch", "sequence"] if dynamic else [BATCH, BERT["seq"]]
    ids = g.input("input_ids", TensorProto.INT64, dims)
    mask = g.input("attention_mask", TensorProto.INT64, dims)

    def embedding(rows: int, name: str) -> str:
        return g.init(name, rng.normal(0.0, 0.5, (rows, hidden)).astype(np.float32))

    # Position ids: Range(0, seq_len) from the input's shape, like HF's exporters.
    ids_shape = g.node("Shape", [ids], name="ids.shape")
    seq_len = g.node("Gather", [ids_shape, g.scalar("one", 1, np.int64)], name="ids.seq_len", axis=0)
    positions = g.node("Range", [g.scalar("zero", 0, np.int64), seq_len, g.scalar("step", 1, np.int64)], name="positions")
    positions = g.node("Unsqueeze", [positions, g.ints("axes0", [0])], name="positions.unsqueeze")
    # Token type ids: zeros of the input's shape.
    token_types = g.node(
        "ConstantOfShape", [ids_shape], name="token_types", value=numpy_helper.from_array(np.zeros(1, np.int64))
    )
    word = g.node("Gather", [embedding(BERT["vocab"], "embeddings.word"), ids], name="embeddings.word_gather", axis=0)
    position = g.node(
        "Gather", [embedding(BERT["max_positions"], "embeddings.position"), positions], name="embeddings.position_gather"
    )
    token_type = g.node(
        "Gather", [embedding(BERT["type_vocab"], "embeddings.token_type"), token_types], name="embeddings.type_gather"
    )
    h = g.node("Add", [g.node("Add", [word, position], name="embeddings.add1"), token_type], name="embeddings.add2")
    h = g.layer_norm(h, hidden, "embeddings.ln")

    # Additive mask: (1 - mask) * -10000, shaped B x 1 x 1 x S.
    extended = g.node("Unsqueeze", [mask, g.ints("axes12", [1, 2])], name="mask.unsqueeze")
    extended = g.node("Cast", [extended], name="mask.cast", to=TensorProto.FLOAT)
    extended = g.node("Sub", [g.scalar("mask.one", 1.0), extended], name="mask.sub")
    extended = g.node("Mul", [extended, g.scalar("mask.scale", -10000.0)], name="mask.mul")

    def to_heads(x: str, name: str) -> str:
        """B x S x H -> B x heads x S x head_dim, the Reshape's shape computed in-graph."""
        shape = g.node("Shape", [x], name=f"{name}.shape")
        batch = g.node("Gather", [shape, g.scalar(f"{name}.i0", 0, np.int64)], name=f"{name}.batch", axis=0)
        seq = g.node("Gather", [shape, g.scalar(f"{name}.i1", 1, np.int64)], name=f"{name}.seq", axis=0)
        batch = g.node("Unsqueeze", [batch, g.ints(f"{name}.ax", [0])], name=f"{name}.batch_unsqueeze")
        seq = g.node("Unsqueeze", [seq, g.ints(f"{name}.ax", [0])], name=f"{name}.seq_unsqueeze")
        new_shape = g.node("Concat", [batch, seq, g.ints(f"{name}.heads", [heads, head_dim])], name=f"{name}.concat", axis=0)
        x = g.node("Reshape", [x, new_shape], name=f"{name}.reshape")
        return g.node("Transpose", [x], name=f"{name}.transpose", perm=[0, 2, 1, 3])

    q = to_heads(g.linear(h, hidden, hidden, "attention.query"), "q")
    k = to_heads(g.linear(h, hidden, hidden, "attention.key"), "k")
    v = to_heads(g.linear(h, hidden, hidden, "attention.value"), "v")
    kt = g.node("Transpose", [k], name="k.transpose_last", perm=[0, 1, 3, 2])
    scores = g.node("MatMul", [q, kt], name="attention.scores")
    scores = g.node("Div", [scores, g.scalar("attention.sqrt_d", math.sqrt(head_dim))], name="attention.scale")
    scores = g.node("Add", [scores, extended], name="attention.mask_add")
    probs = g.node("Softmax", [scores], name="attention.softmax", axis=-1)
    context = g.node("MatMul", [probs, v], name="attention.context")
    context = g.node("Transpose", [context], name="context.transpose", perm=[0, 2, 1, 3])
    context = g.node("Reshape", [context, g.ints("context.shape", [0, 0, -1])], name="context.reshape")
    attention = g.linear(context, hidden, hidden, "attention.output")
    h = g.layer_norm(g.node("Add", [attention, h], name="attention.residual"), hidden, "attention.ln")

    up = g.linear(h, hidden, ffn, "ffn.up")
    if gelu == "erf":
        scaled = g.node("Div", [up, g.scalar("gelu.sqrt2", math.sqrt(2.0))], name="gelu.div")
        erf = g.node("Erf", [scaled], name="gelu.erf")
        one_plus = g.node("Add", [erf, g.scalar("gelu.one", 1.0)], name="gelu.add")
        activated = g.node("Mul", [g.node("Mul", [up, g.scalar("gelu.half", 0.5)], name="gelu.half_x"), one_plus], name="gelu.mul")
    elif gelu == "gelu-op":
        activated = g.node("Gelu", [up], name="gelu")
    else:
        raise ValueError(gelu)
    down = g.linear(activated, ffn, hidden, "ffn.down")
    h = g.layer_norm(g.node("Add", [down, h], name="ffn.residual"), hidden, "ffn.ln")
    sequence = g.layer_norm(h, hidden, "final.ln", epsilon=1e-5)

    first = g.node("Gather", [sequence, g.scalar("cls_index", 0, np.int64)], name="pooler.first", axis=1)
    pooled = g.node("Tanh", [g.gemm(first, hidden, hidden, "pooler.dense")], name="pooler.tanh")
    shapes = [[*dims, hidden], [dims[0], hidden]]
    return g.model([sequence, pooled], ["last_hidden_state", "pooler_output"], shapes, opset=opset)


def dynamic_batch_convnet(rng: np.random.Generator) -> onnx.ModelProto:
    """A small conv net whose input's batch dimension is the symbol 'N'."""
    g = GraphBuilder(rng, "dynamic_batch")
    x = g.input("x", TensorProto.FLOAT, ["N", 3, 16, 16])
    h = g.node("Relu", [g.conv_bn(x, 3, 8, 3, name="conv")], name="relu")
    h = g.node("GlobalAveragePool", [h], name="gap")
    h = g.node("Flatten", [h], name="flatten")
    return g.model([g.gemm(h, 8, 4)], ["logits"], [["N", 4]])


# ------------------------------------------------------------------------ torch.nn


def torch_modules():
    """The same four architectures as small torch.nn modules (imports torch lazily)."""
    import torch
    from torch import nn

    def randomize_batch_norms(module: nn.Module, generator: torch.Generator) -> nn.Module:
        for layer in module.modules():
            if isinstance(layer, nn.BatchNorm2d):
                c = layer.num_features
                with torch.no_grad():
                    layer.weight.copy_(torch.rand(c, generator=generator) + 0.5)
                    layer.bias.copy_(torch.randn(c, generator=generator) * 0.1)
                    layer.running_mean.copy_(torch.randn(c, generator=generator) * 0.2)
                    layer.running_var.copy_(torch.rand(c, generator=generator) * 1.5 + 0.5)
        return module.eval()

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + (x if self.down is None else self.down(x)))

    class ResNet(nn.Module):
        def __init__(self, classes: int = 10):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.layers = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 32, 1))
            self.gap = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(32, classes)

        def forward(self, x):
            x = self.layers(self.pool(self.stem(x)))
            return self.fc(torch.flatten(self.gap(x), 1))

    class InvertedResidual(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int, expand: int):
            super().__init__()
            hidden = cin * expand
            layers = []
            if expand != 1:
                layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
            layers += [
                nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                nn.BatchNorm2d(hidden),
                nn.ReLU6(),
                nn.Conv2d(hidden, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
            ]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class MobileNetV2(nn.Module):
        def __init__(self, classes: int = 10):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 16, 3, 2, 1, bias=False),
                nn.BatchNorm2d(16),
                nn.ReLU6(),
                InvertedResidual(16, 8, 1, 1),
                InvertedResidual(8, 12, 2, 4),
                InvertedResidual(12, 12, 1, 4),
                InvertedResidual(12, 16, 2, 4),
                InvertedResidual(16, 16, 1, 4),
                nn.Conv2d(16, 64, 1, bias=False),
                nn.BatchNorm2d(64),
                nn.ReLU6(),
            )
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, classes))

        def forward(self, x):
            x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))

    def double_conv(cin: int, cout: int) -> nn.Module:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self, resize_mode: str = "bilinear"):
            super().__init__()
            self.enc1, self.enc2, self.bottleneck = double_conv(3, 8), double_conv(8, 16), double_conv(16, 32)
            self.pool = nn.MaxPool2d(2)
            self.up1 = nn.ConvTranspose2d(32, 16, 2, stride=2)
            self.dec1 = double_conv(32, 16)
            self.resize_mode = resize_mode
            self.dec2 = double_conv(24, 8)
            self.head = nn.Conv2d(8, 2, 1)

        def forward(self, x):
            skip1 = self.enc1(x)
            skip2 = self.enc2(self.pool(skip1))
            h = self.bottleneck(self.pool(skip2))
            h = self.dec1(torch.cat([self.up1(h), skip2], dim=1))
            align = False if self.resize_mode == "bilinear" else None
            h = nn.functional.interpolate(h, scale_factor=2.0, mode=self.resize_mode, align_corners=align)
            h = self.dec2(torch.cat([h, skip1], dim=1))
            return torch.sigmoid(self.head(h))

    class BertLayer(nn.Module):
        def __init__(self, vocab=50, hidden=32, heads=4, ffn=64, max_positions=16, type_vocab=2):
            super().__init__()
            self.heads, self.head_dim = heads, hidden // heads
            self.word = nn.Embedding(vocab, hidden)
            self.position = nn.Embedding(max_positions, hidden)
            self.token_type = nn.Embedding(type_vocab, hidden)
            self.embeddings_ln = nn.LayerNorm(hidden, eps=1e-12)
            self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
            self.output = nn.Linear(hidden, hidden)
            self.attention_ln = nn.LayerNorm(hidden, eps=1e-12)
            self.up, self.down = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
            self.ffn_ln = nn.LayerNorm(hidden, eps=1e-12)
            self.final_ln = nn.LayerNorm(hidden)
            self.pooler = nn.Linear(hidden, hidden)
            for ln in (self.embeddings_ln, self.attention_ln, self.ffn_ln, self.final_ln):
                with torch.no_grad():
                    ln.weight.uniform_(0.5, 1.5)
                    ln.bias.normal_(0.0, 0.1)
            for emb in (self.word, self.position, self.token_type):
                with torch.no_grad():
                    emb.weight.normal_(0.0, 0.5)

        def split_heads(self, x):
            b, s, _ = x.shape
            return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

        def forward(self, input_ids, attention_mask):
            b, s = input_ids.shape
            positions = torch.arange(s, dtype=torch.long).unsqueeze(0)
            token_types = torch.zeros_like(input_ids)
            h = self.word(input_ids) + self.position(positions) + self.token_type(token_types)
            h = self.embeddings_ln(h)
            mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
            q, k, v = self.split_heads(self.query(h)), self.split_heads(self.key(h)), self.split_heads(self.value(h))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
            context = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, -1)
            h = self.attention_ln(self.output(context) + h)
            h = self.ffn_ln(self.down(nn.functional.gelu(self.up(h))) + h)
            sequence = self.final_ln(h)
            return sequence, torch.tanh(self.pooler(sequence[:, 0]))

    return {
        "resnet": ResNet,
        "mobilenet_v2": MobileNetV2,
        "unet": UNet,
        "bert": BertLayer,
        "randomize_batch_norms": randomize_batch_norms,
    }
