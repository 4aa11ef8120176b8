"""The PyTorch frontend: small ResNet, MobileNetV2, VGG and BERT models (random weights,
eval mode) and groups of ops are imported through torch.export, run in the numpy
interpreter on fresh random inputs, and compared with PyTorch's own output; every
user-facing error is checked by its message."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontend tests need torch: pip install boltir[torch]")

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from xdsl.dialects.builtin import DenseResourceAttr  # noqa: E402

import boltir  # noqa: E402
from boltir.diagnostics import BoltError  # noqa: E402
from boltir.dialects import graph  # noqa: E402
from boltir.frontends.torch import import_exported_program, import_module, supported_ops  # noqa: E402
from boltir.interp import find_entry, input_names, output_names, run  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")

TOLERANCE = 1e-4
"""Relative error ||boltir - torch|| / ||torch|| allowed in fp32."""


@pytest.fixture
def seed() -> int:
    """Seeds torch with a fresh seed per test; it is printed (shown when the test fails)
    and can be replayed with BOLTIR_TEST_SEED=<seed>."""
    value = int(os.environ.get("BOLTIR_TEST_SEED") or np.random.SeedSequence().entropy) % (2**63)
    print(f"torch seed: {value} (replay with BOLTIR_TEST_SEED={value})")
    torch.manual_seed(value)
    return value


# ------------------------------------------------------------------------- helpers


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def relative_error(actual: np.ndarray, expected: np.ndarray) -> float:
    actual, expected = actual.astype(np.float64), expected.astype(np.float64)
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-30))


def torch_outputs(model: nn.Module, inputs: tuple) -> list[np.ndarray]:
    with torch.no_grad():
        result = model(*inputs)
    return [to_numpy(t) for t in torch.utils._pytree.tree_leaves(result)]


def check_against_torch(model: nn.Module, example_inputs: tuple, fresh_inputs: tuple):
    """Imports `model` on `example_inputs`, runs it on `fresh_inputs` in the interpreter
    and compares with torch; returns the module."""
    module = import_module(model, example_inputs)
    outputs = run(module, {f"arg{i}": to_numpy(x) for i, x in enumerate(fresh_inputs)})
    expected = torch_outputs(model, fresh_inputs)
    assert len(outputs) == len(expected)
    for index, (actual, reference) in enumerate(zip(outputs, expected, strict=True)):
        assert actual.shape == reference.shape, f"output {index}"
        assert actual.dtype == reference.dtype, f"output {index}"
        if reference.dtype.kind in "fc":
            error = relative_error(actual, reference)
            assert error < TOLERANCE, f"output {index}: relative error {error:.3g}"
        else:
            np.testing.assert_array_equal(actual, reference, err_msg=f"output {index}")
    return module


def weight_handles(module) -> set[str]:
    return {
        op.value.resource_handle.data
        for op in module.walk()
        if isinstance(op, graph.ConstantOp) and isinstance(op.value, DenseResourceAttr)
    }


def op_names(module) -> set[str]:
    return {op.name for op in module.walk() if op.name.startswith("graph.")}


def randomize_batch_norms(model: nn.Module) -> nn.Module:
    """Random running statistics and affine parameters, so that batch norm matters."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features) * 0.2)
                m.running_var.copy_(torch.rand(m.num_features) + 0.5)
                m.weight.copy_(torch.rand(m.num_features) + 0.5)
                m.bias.copy_(torch.randn(m.num_features) * 0.2)
    return model.eval()


class Lambda(nn.Module):
    """A module whose forward is a function, for single-op tests."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *args):
        return self.function(*args)


# -------------------------------------------------------------------------- ResNet


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    def __init__(self, cin: int, width: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    """The ResNet stem (7x7 conv, bn, relu, 3x3 max pool), basic blocks with and without
    a downsample branch, a bottleneck block, adaptive average pooling and the fc head."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 8, 1))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2))
        self.layer3 = nn.Sequential(Bottleneck(16, 8, 32, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# ----------------------------------------------------------------------- MobileNetV2


def conv_bn_relu6(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU6(inplace=True),
    )


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        layers: list[nn.Module] = [conv_bn_relu6(cin, hidden, 1, 1)] if expand != 1 else []
        layers += [
            conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),  # depthwise
            nn.Conv2d(hidden, cout, 1, bias=False),  # linear bottleneck
            nn.BatchNorm2d(cout),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_residual else self.conv(x)


class TinyMobileNetV2(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn_relu6(3, 8, 3, 2),
            InvertedResidual(8, 8, 1, 1),
            InvertedResidual(8, 12, 2, 4),
            InvertedResidual(12, 12, 1, 4),
            InvertedResidual(12, 16, 2, 4),
            conv_bn_relu6(16, 32, 1, 1),
        )
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


# ------------------------------------------------------------------------------ VGG


class TinyVGG(nn.Module):
    """VGG with batch norm: 3x3 convs, 2x2 max pools, a 2x2 adaptive average pool and
    the three-layer classifier with dropout."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for v in (8, "M", 16, "M", 16, 16, "M"):
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                cin = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(16 * 2 * 2, 32), nn.ReLU(True), nn.Dropout(), nn.Linear(32, 32), nn.ReLU(True), nn.Dropout(),
            nn.Linear(32, num_classes),
        )  # fmt: skip

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


# ----------------------------------------------------------------------------- BERT


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)

    def split_heads(self, x):
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split_heads(self.query(x)), self.split_heads(self.key(x)), self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        probs = torch.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(x.shape[0], x.shape[1], -1)
        return self.norm(self.dense(context) + x)


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask):
        x = self.attention(x, mask)
        return self.norm(self.dropout(self.output(F.gelu(self.intermediate(x)))) + x)


class TinyBert(nn.Module):
    """A BERT encoder as in Hugging Face's: word, position and token type embeddings
    with LayerNorm, an additive attention mask from the 0/1 input mask, multi-head
    self-attention, a GELU feed-forward, and the tanh pooler on the first token."""

    def __init__(self, vocab=64, hidden=32, heads=4, intermediate=64, layers=2, max_positions=16, types=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(types, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0), persistent=False)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, intermediate) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        positions = self.position_ids[:, : input_ids.shape[1]]
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        x = self.embedding_norm(x + self.token_type_embeddings(token_type_ids))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pooler(x[:, 0]))


def bert_inputs(batch: int = 2, seq: int = 8, vocab: int = 64) -> tuple:
    input_ids = torch.randint(0, vocab, (batch, seq))
    attention_mask = torch.ones(batch, seq, dtype=torch.long)
    attention_mask[1, seq - 3 :] = 0  # padding at the end of the second sequence
    token_type_ids = torch.zeros(batch, seq, dtype=torch.long)
    token_type_ids[:, seq // 2 :] = 1
    return input_ids, attention_mask, token_type_ids


# --------------------------------------------------------------------- model tests


def images() -> torch.Tensor:
    return torch.randn(2, 3, 32, 32)


def test_resnet(seed):
    model = randomize_batch_norms(TinyResNet())
    module = check_against_torch(model, (images(),), (images(),))
    entry = find_entry(module)
    assert input_names(entry) == ["x"]
    assert output_names(entry) == ["output_0"]
    handles = weight_handles(module)
    names = ("conv1.weight", "layer3.0.bn3.running_var", "layer2.0.downsample.0.weight", "layer3.0.conv3.weight")
    for name in (*names, "fc.weight"):
        assert any(h == name or h.startswith(name + "_") for h in handles), name
    ops = op_names(module)
    assert {"graph.conv2d", "graph.batch_norm", "graph.max_pool2d", "graph.global_avg_pool", "graph.gemm"} <= ops
    assert "graph.transpose" not in ops  # fc's weight transpose folds into the gemm


def test_mobilenet_v2(seed):
    model = randomize_batch_norms(TinyMobileNetV2())
    module = check_against_torch(model, (images(),), (images(),))
    ops = op_names(module)
    assert "graph.clip" in ops  # ReLU6
    depthwise = [op for op in module.walk() if isinstance(op, graph.Conv2dOp) and op.prop_value("group") > 1]
    assert depthwise and all(op.prop_value("group") == op.input.type.get_shape()[1] for op in depthwise)
    # The printout, weights included, parses back to the same model.
    x = images()
    reparsed = boltir.parse_module(boltir.print_module(module))
    np.testing.assert_array_equal(run(reparsed, {"x": to_numpy(x)})[0], run(module, {"x": to_numpy(x)})[0])


def test_vgg(seed):
    model = randomize_batch_norms(TinyVGG())
    module = check_against_torch(model, (images(),), (images(),))
    assert "graph.avg_pool2d" in op_names(module)  # adaptive 4x4 -> 2x2 has even windows


def test_bert_encoder(seed):
    model = TinyBert().eval()
    module = check_against_torch(model, bert_inputs(), bert_inputs())
    entry = find_entry(module)
    assert input_names(entry) == ["input_ids", "attention_mask", "token_type_ids"]
    assert output_names(entry) == ["output_0", "output_1"]
    ops = op_names(module)
    assert {"graph.gather", "graph.layer_norm", "graph.softmax", "graph.gelu", "graph.tanh", "graph.matmul"} <= ops
    assert any(h.startswith("word_embeddings.weight") for h in weight_handles(module))

    # The additive mask comes from the runtime input: masking more tokens changes the
    # output as much as it changes torch's.
    inputs = list(bert_inputs())
    masked = [inputs[0], inputs[1].clone(), inputs[2]]
    masked[1][0, 2:] = 0
    ours = [run(module, {f"arg{i}": to_numpy(x) for i, x in enumerate(args)})[0] for args in (inputs, masked)]
    theirs = [torch_outputs(model, tuple(args))[0] for args in (inputs, masked)]
    assert relative_error(ours[0], ours[1]) > 1e-2
    for actual, expected in zip(ours, theirs, strict=True):
        assert relative_error(actual, expected) < TOLERANCE


# ------------------------------------------------------------------------ op tests
# Each case is one module that returns several results, so that one export (which
# costs most of the time) covers many ops.


def elementwise(x, n):
    activations = (
        F.silu(x) + F.hardswish(x) + torch.sigmoid(x) + F.leaky_relu(x, 0.2) + F.hardsigmoid(x) + torch.tanh(x)
        + torch.clamp(x, -1, 1) + F.relu6(x) + x.clamp(min=0.1) + F.gelu(x) + F.gelu(x, approximate="tanh")
    )  # fmt: skip
    math_ops = (
        torch.rsqrt(x.abs() + 1) + x.pow(2) + x.abs() ** 0.5 + torch.exp(x) + torch.erf(x) - x / 3 + (2 - x)
        + x.pow(3) + 1 / (x.abs() + 1) - torch.neg(x) * 0.5
    )  # fmt: skip
    reductions = (
        x.mean(-1, keepdim=True) + x.var(-1, keepdim=True) + x.var(0, unbiased=False) + x.sum(0)
        + x.amax(1, keepdim=True)
    )  # fmt: skip
    casts = (x.half() * 2).float() + x.double().float() + x.long().float()
    integers = (n * 2 + 1) + n / 2 + torch.div(n, 3, rounding_mode="trunc") + (n == 3).long()
    return activations, math_ops, reductions, (x * x).sum(), casts, integers


def data_movement(x, y, m, i):
    reshapes = torch.cat(
        [x.transpose(1, 2).contiguous().reshape(2, -1), x.flatten(1), x.permute(2, 0, 1).reshape(2, -1)], 1
    ).split(8, 1)[1]
    pieces = x[:1].squeeze(0).unsqueeze(-1).abs().sum() + x.chunk(2, 2)[1].abs().sum() + x.unbind(1)[2].abs().sum()
    slicing = y[:, ::2, 1:].sum(-1) + y[:, -1][:, :3] + y[-1, 0, :3] + y.narrow(2, 1, 3)[:, 0]
    z = y[:1, :2, :3]
    masks = (
        z.masked_fill(m == 0, -1e4) + torch.where(m != 0, z, torch.zeros_like(z)) + torch.full_like(z, 2.0)
        + torch.arange(3).float() + torch.logical_not(m).float() + torch.ones(3) * 2
        + torch.where((z > 0) & (m <= 0) | ~(z < -0.5) ^ (z >= 1.0), z, -z)
        + torch.logical_and(m > 0, z < 0).float() + torch.logical_or(m < 1, z >= 0.5).float() + torch.logical_xor(m, z > 0).float()
    )  # fmt: skip
    indexing = y[:, :, i].sum(-1) + y.index_select(2, i).sum(-1) + y.expand(3, 2, 5, 4)[2, :, :, 0]
    return reshapes, pieces, slicing, masks, indexing


def images_ops(x, i):
    padding = F.pad(x, (1, 2, 0, 1)) + F.pad(x, (1, 2, 0, 1), value=0.5) + F.pad(x, (1, 2, 0, 1), mode="reflect")
    nearest = torch.cat([F.interpolate(x, scale_factor=2, mode="nearest"), F.interpolate(x, size=(6, 8))], 1)
    bilinear = torch.cat(
        [F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=c) for c in (False, True)]
        + [F.interpolate(x, scale_factor=2, mode="bilinear")[..., :5, :7]],
        1,
    )
    pools = (
        F.avg_pool2d(x, 3, 2, 1) + F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)
        + F.avg_pool2d(x, 2, 2, 1, ceil_mode=True)[..., :2, :2] + F.max_pool2d(x, 2, 2, ceil_mode=True)[..., :2, :2]
        + F.max_pool2d(x, 3, 1, padding=1, dilation=2)[..., :2, :2]
    )  # fmt: skip
    adaptive = F.adaptive_avg_pool2d(torch.cat([x, x], 3), (3, 2))
    gathered = x[:, :, i][..., :1, :1].sum() + x[0, 1, :, i]
    return padding, nearest, bilinear, pools, adaptive, gathered


class ConvLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = nn.Conv1d(2, 4, 3, padding=1, stride=2)
        self.grouped = nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2, groups=2)
        self.transposed = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
        self.depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.group_norm = nn.GroupNorm(2, 8)
        self.instance_norm = nn.InstanceNorm2d(4, affine=True)
        batch_statistics = nn.BatchNorm1d(3, track_running_stats=False)
        self.batch_norm = nn.Sequential(nn.Conv1d(2, 3, 1), nn.BatchNorm1d(3), batch_statistics)

    def forward(self, signal, image):
        return (
            self.conv1d(signal), self.grouped(image), self.transposed(image), self.group_norm(self.grouped(image)),
            self.instance_norm(self.depthwise(image)), self.batch_norm(signal),
        )  # fmt: skip


class LinearAlgebra(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 5, bias=False)
        self.norms = nn.Sequential(nn.BatchNorm1d(4, affine=False), nn.LayerNorm(4, elementwise_affine=False))

    def forward(self, a, b, c, q):
        matmuls = (
            (a @ b).sum(0) + a[0] @ c.t() + torch.addmm(c[0, :4], a[0], c, alpha=0.5, beta=2)
            + torch.baddbmm(a, a, c.expand(2, 4, 4), beta=0.5).sum(0)
        )  # fmt: skip
        attention = F.scaled_dot_product_attention(q, q * 0.5, q + 1)
        return matmuls, self.linear(a), self.norms(c), attention, F.softmax(b, -1, dtype=torch.float64)


def _randn(*shape):
    return lambda: torch.randn(*shape)


OP_CASES = {
    "elementwise": (Lambda(elementwise), [_randn(3, 5), lambda: torch.arange(-4, 6)]),
    "data_movement": (
        Lambda(data_movement),
        [_randn(2, 3, 4), _randn(2, 5, 4), lambda: torch.randint(0, 2, (2, 3)), lambda: torch.tensor([0, 3, 3])],
    ),
    "images": (Lambda(images_ops), [_randn(1, 2, 3, 4), lambda: torch.tensor([0, 2])]),
    "convolutions_and_norms": (ConvLayers(), [_randn(2, 2, 9), _randn(2, 4, 9, 9)]),
    "linear_algebra": (LinearAlgebra(), [_randn(2, 3, 4), _randn(4, 4), _randn(4, 4), _randn(1, 2, 4, 8)]),
}


@pytest.mark.parametrize("case", sorted(OP_CASES))
def test_ops(case, seed):
    model, makers = OP_CASES[case]
    check_against_torch(model.eval(), tuple(m() for m in makers), tuple(m() for m in makers))


def test_dict_outputs_are_named_by_key(seed):
    model = Lambda(lambda x: {"logits": x + 1, "extra": [x * 2, x.sum(0)]})
    module = check_against_torch(model, (torch.randn(2, 3),), (torch.randn(2, 3),))
    assert output_names(find_entry(module)) == ["logits", "extra.0", "extra.1"]


def test_constants_buffers_and_inputs_as_outputs(seed):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("table", torch.randn(4, 5))
            self.register_buffer("scratch", torch.randn(5), persistent=False)

        def forward(self, x):
            lifted = torch.tensor([1.0, -2.0, 3.0, 0.5, 4.0])  # a lifted tensor constant
            return x, self.table * 2, x @ self.table + lifted * self.scratch

    model = Model().eval()
    program = torch.export.export(model, (torch.randn(2, 4),))
    kinds = {spec.kind.name for spec in program.graph_signature.input_specs}
    assert {"BUFFER", "CONSTANT_TENSOR", "USER_INPUT"} <= kinds
    module = import_exported_program(program)  # decomposed on the way
    x = torch.randn(2, 4)
    for actual, expected in zip(run(module, {"x": to_numpy(x)}), torch_outputs(model, (x,)), strict=True):
        assert relative_error(actual, expected) < TOLERANCE
    assert any(h.startswith("table") for h in weight_handles(module))


def test_bfloat16_linear(seed):
    model = nn.Linear(8, 4).to(torch.bfloat16)
    x = torch.randn(2, 8).to(torch.bfloat16)
    module = import_module(model, (x,))
    assert "bf16" in str(find_entry(module).function_type)
    (actual,) = run(module, {"input": x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)})
    expected = torch_outputs(model.float(), (x.float(),))[0]
    assert relative_error(actual.astype(np.float32), expected) < 2e-2  # bf16 has 8 bits of precision


def test_supported_ops_cover_the_model_decompositions():
    listed = set(supported_ops())
    for name in (
        "aten.convolution.default", "aten._native_batch_norm_legit_no_training.default", "aten.relu.default",
        "aten.hardtanh.default", "aten.add.Tensor", "aten.mul.Scalar", "aten.addmm.default", "aten.mm.default",
        "aten.bmm.default", "aten.view.default", "aten._unsafe_view.default", "aten.permute.default",
        "aten.transpose.int", "aten.t.default", "aten.expand.default", "aten.clone.default",
        "aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default", "aten._adaptive_avg_pool2d.default",
        "aten.mean.dim", "aten.embedding.default", "aten.native_layer_norm.default", "aten.gelu.default",
        "aten.tanh.default", "aten._softmax.default", "aten.where.self", "aten.slice.Tensor", "aten.select.int",
        "aten.unsqueeze.default", "aten.squeeze.dims", "aten.cat.default", "aten.split_with_sizes.default",
        "aten.rsqrt.default", "aten.sqrt.default", "aten.exp.default", "aten.erf.default", "aten.neg.default",
        "aten._to_copy.default",
    ):  # fmt: skip
        assert name in listed, name


# ----------------------------------------------------------------------- errors


def test_unsupported_op_is_one_clear_error():
    model = Lambda(lambda x: torch.cumprod(x, 1) * 2)
    with pytest.raises(BoltError) as info:
        import_module(model, (torch.randn(2, 4),))
    message = str(info.value)
    assert "\n" not in message
    assert "unsupported ATen op aten.cumprod.default (node 'cumprod')" in message
    assert "supported: " in message and "aten.convolution.default" in message and "aten.add.Tensor" in message
    assert message.startswith(f"{__file__}:")  # where the user's code called it


def test_every_unsupported_op_is_listed_in_the_one_error():
    model = Lambda(lambda x: torch.cumprod(x, 1) + torch.fft.fft(x).real)
    expected = r"unsupported ATen ops aten\.cumprod\.default \(node 'cumprod'\), aten\._fft_r2c"
    with pytest.raises(BoltError, match=expected):
        import_module(model, (torch.randn(2, 4),))


def test_export_failure_is_wrapped():
    class DataDependent(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(BoltError) as info:
        import_module(DataDependent(), (torch.randn(2, 4),))
    message = str(info.value)
    assert message.startswith("error: torch.export failed on DataDependent: ")
    assert "\n" not in message and "data-dependent" in message


def test_dynamic_shapes_are_refused():
    class Model(nn.Module):
        def forward(self, x):
            return x.relu()

    program = torch.export.export(Model(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    expected = r"input 'x' has a dynamic shape \(s\d+, 3; dimension 0 symbolic\); boltir needs static shapes"
    with pytest.raises(BoltError, match=expected):
        import_exported_program(program)


def test_second_output_of_max_pool_is_refused():
    model = Lambda(lambda x: F.max_pool2d(x, 2, return_indices=True))
    with pytest.raises(BoltError, match=r"aten\.max_pool2d_with_indices\.default \(node '\w+'\): output 1 is used"):
        import_module(model, (torch.randn(1, 1, 4, 4),))


def test_uneven_adaptive_pooling_is_refused():
    model = nn.AdaptiveAvgPool2d((3, 3))
    expected = r"adaptive average pooling from 7x7 to 3x3 \(uneven windows\) is not supported"
    with pytest.raises(BoltError, match=expected):
        import_module(model, (torch.randn(1, 2, 7, 7),))


def test_non_tensor_output_is_refused():
    with pytest.raises(BoltError, match=r"output 1 \('output_1'\) is 3, not a tensor"):
        import_module(Lambda(lambda x: (x + 1, 3)), (torch.randn(2),))


def test_buffer_update_is_refused():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))

        def forward(self, x):
            self.count.add_(1)
            return x + self.count

    expected = r"the module updates 'count' in place \(buffer_mutation\); boltir compiles inference only"
    with pytest.raises(BoltError, match=expected):
        import_module(Counter(), (torch.randn(2),))


def test_bad_arguments():
    with pytest.raises(BoltError, match="import_module expects a torch.nn.Module, got str"):
        import_module("resnet50", ())
    with pytest.raises(BoltError, match="example_inputs must be a tuple of tensors, got dict"):
        import_module(nn.ReLU(), {"x": torch.randn(2)})


def test_missing_torch_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(BoltError, match=r"the PyTorch frontend needs torch.*pip install boltir\[torch\]"):
        import_module(object(), ())


def test_boltir_imports_without_torch():
    script = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "import boltir, boltir.frontends.torch, boltir.interp, boltir.builder\n"
        "from boltir.frontends.torch import import_module\n"
        "try:\n"
        "    import_module(None, ())\n"
        "except boltir.BoltError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "pip install boltir[torch]" in result.stdout
