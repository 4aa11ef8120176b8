"""Tiny versions of the corpus architectures, written in torch alone (no torchvision, timm
or transformers): each keeps the building blocks that make its architecture distinct for
an importer and a compiler (a DenseNet's concatenations, a ShuffleNet's channel shuffle,
a MobileNetV3's hardswish and squeeze-excitation, a ViT's patch embedding and attention,
a RoBERTa's position ids computed from its input, a U-Net's transposed convs and
resizes...) at small widths and resolutions.

    model, inputs = TINY_MODELS["resnet"]()          # an eval-mode module, {name: tensor}
    proto = export_onnx(model, inputs)               # ONNX, in memory, as bench/models.py exports

tests/pipeline/test_corpus_small.py runs them through import and the pipeline against
onnxruntime; `python3 -m bench.corpus --models tiny` compiles and times them on the GPU.
Weights are drawn from torch's seeded default initialization; every BatchNorm gets random
statistics and affine parameters, so that folding it is not a no-op.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

IMAGE = 32
"""The side of the images of the image models."""
SEQUENCE, VOCABULARY = 16, 64


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, act: type[nn.Module] | None = nn.ReLU):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, *([act()] if act else []))


# ------------------------------------------------------------------ ResNet, ResNeXt


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1, self.conv2 = conv_bn(cin, cout, 3, stride), conv_bn(cout, cout, 3, act=None)
        self.down = conv_bn(cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return F.relu(self.conv2(self.conv1(x)) + self.down(x))


class Bottleneck(nn.Module):
    """ResNeXt's: 1x1, grouped 3x3, 1x1, with a projection shortcut."""

    def __init__(self, cin: int, width: int, cout: int, stride: int, groups: int):
        super().__init__()
        self.body = nn.Sequential(conv_bn(cin, width, 1), conv_bn(width, width, 3, stride, groups),
                                  conv_bn(width, cout, 1, act=None))
        self.down = conv_bn(cin, cout, 1, stride, act=None)

    def forward(self, x):
        return F.relu(self.body(x) + self.down(x))


class TinyResNet(nn.Module):
    """ResNet-18's shape: 7x7/2 stem, 3x3/2 max pool, basic blocks, global pool, fc."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class TinyResNeXt(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, 2)
        self.blocks = nn.Sequential(Bottleneck(16, 32, 32, 1, 4), Bottleneck(32, 32, 64, 2, 8))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


# ------------------------------------------------------------------------ DenseNet


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, 4 * growth, 1, bias=False),
                                  nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, 1, 1, bias=False))

    def forward(self, features: list[torch.Tensor]):
        return self.body(torch.cat(features, 1))


class TinyDenseNet(nn.Module):
    """Dense blocks (every layer reads the concatenation of all before it), a transition
    (BN, ReLU, 1x1 conv, 2x2 average pool), BN and ReLU before the global pool."""

    def __init__(self, classes: int = 10, growth: int = 8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False))
        self.block1 = nn.ModuleList(DenseLayer(16 + i * growth, growth) for i in range(3))
        width = 16 + 3 * growth
        self.transition = nn.Sequential(nn.BatchNorm2d(width), nn.ReLU(), nn.Conv2d(width, width // 2, 1, bias=False),
                                        nn.AvgPool2d(2, 2))
        self.block2 = nn.ModuleList(DenseLayer(width // 2 + i * growth, growth) for i in range(2))
        width = width // 2 + 2 * growth
        self.norm, self.fc = nn.BatchNorm2d(width), nn.Linear(width, classes)

    @staticmethod
    def dense(layers: nn.ModuleList, x):
        features = [x]
        for layer in layers:
            features.append(layer(features))
        return torch.cat(features, 1)

    def forward(self, x):
        x = self.transition(self.dense(self.block1, self.stem(x)))
        x = F.relu(self.norm(self.dense(self.block2, x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


# ----------------------------------------------------------------------- Inception


class InceptionBlock(nn.Module):
    """GoogLeNet's: 1x1; 1x1 then 3x3; 1x1 then 3x3 (the 5x5 branch as torchvision has
    it); 3x3/1 max pool (ceil mode) then 1x1; concatenated."""

    def __init__(self, cin: int, c1: int, c3: tuple[int, int], c5: tuple[int, int], pool: int):
        super().__init__()
        self.b1 = conv_bn(cin, c1, 1)
        self.b2 = nn.Sequential(conv_bn(cin, c3[0], 1), conv_bn(c3[0], c3[1], 3))
        self.b3 = nn.Sequential(conv_bn(cin, c5[0], 1), conv_bn(c5[0], c5[1], 3))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, 1, ceil_mode=True), conv_bn(cin, pool, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


class TinyInception(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 16, 3, 2), nn.MaxPool2d(3, 2, ceil_mode=True))
        self.block1 = InceptionBlock(16, 8, (8, 16), (4, 8), 8)
        self.block2 = InceptionBlock(40, 16, (8, 16), (4, 8), 8)
        self.dropout, self.fc = nn.Dropout(0.2), nn.Linear(48, classes)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))
        return self.fc(self.dropout(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)))


# ---------------------------------------------------------------------- SqueezeNet


class Fire(nn.Module):
    def __init__(self, cin: int, squeeze: int, expand: int):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1, self.expand3 = nn.Conv2d(squeeze, expand, 1), nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        x = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.expand1(x)), F.relu(self.expand3(x))], 1)


class TinySqueezeNet(nn.Module):
    """Fire modules between ceil-mode max pools; the classifier is a 1x1 conv, ReLU and a
    global average pool."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
                                      Fire(32, 8, 16), Fire(32, 8, 16), nn.MaxPool2d(3, 2, ceil_mode=True), Fire(32, 16, 32))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(64, classes, 1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


# --------------------------------------------------------------------- ShuffleNetV2


def channel_shuffle(x, groups: int):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.stride, half = stride, cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(conv_bn(cin, cin, 3, stride, cin, act=None), conv_bn(cin, half, 1))
        branch_in = cin if stride > 1 else half
        self.branch2 = nn.Sequential(conv_bn(branch_in, half, 1), conv_bn(half, half, 3, stride, half, act=None),
                                     conv_bn(half, half, 1))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), 1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), 1)
        return channel_shuffle(out, 2)


class TinyShuffleNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 24, 3, 2), nn.MaxPool2d(3, 2, 1))
        self.stages = nn.Sequential(ShuffleUnit(24, 48, 2), ShuffleUnit(48, 48, 1), ShuffleUnit(48, 48, 1))
        self.last, self.fc = conv_bn(48, 64, 1), nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(self.last(self.stages(self.stem(x))).mean([2, 3]))


# --------------------------------------------------- MobileNetV3, EfficientNet (MBConv)


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeeze: int, act: type[nn.Module], gate: type[nn.Module]):
        super().__init__()
        self.reduce, self.expand = nn.Conv2d(channels, squeeze, 1), nn.Conv2d(squeeze, channels, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        return x * self.gate(self.expand(self.act(self.reduce(F.adaptive_avg_pool2d(x, 1)))))


class InvertedResidual(nn.Module):
    """MobileNetV3's block (hardswish, SE with a hard sigmoid gate) or EfficientNet's
    MBConv (SiLU, SE with a sigmoid gate): expand 1x1, depthwise kxk, SE, project 1x1;
    a residual when the shape allows."""

    def __init__(self, cin: int, expanded: int, cout: int, kernel: int, stride: int, act: type[nn.Module],
                 gate: type[nn.Module], squeeze: int):
        super().__init__()
        self.residual = stride == 1 and cin == cout
        self.body = nn.Sequential(
            conv_bn(cin, expanded, 1, act=act) if expanded != cin else nn.Identity(),
            conv_bn(expanded, expanded, kernel, stride, expanded, act=act),
            SqueezeExcite(expanded, squeeze, nn.ReLU if act is nn.Hardswish else act, gate),
            conv_bn(expanded, cout, 1, act=None),
        )

    def forward(self, x):
        out = self.body(x)
        return out + x if self.residual else out


class TinyMobileNetV3(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        block = lambda *a: InvertedResidual(*a, act=nn.Hardswish, gate=nn.Hardsigmoid, squeeze=8)
        self.features = nn.Sequential(conv_bn(3, 16, 3, 2, act=nn.Hardswish), block(16, 16, 16, 3, 2),
                                      block(16, 48, 24, 5, 2), block(24, 72, 24, 5, 1), conv_bn(24, 96, 1, act=nn.Hardswish))
        self.classifier = nn.Sequential(nn.Linear(96, 64), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


class TinyEfficientNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        block = lambda *a: InvertedResidual(*a, act=nn.SiLU, gate=nn.Sigmoid, squeeze=4)
        self.features = nn.Sequential(conv_bn(3, 16, 3, 2, act=nn.SiLU), block(16, 16, 16, 3, 1), block(16, 64, 24, 3, 2),
                                      block(24, 96, 24, 5, 1), conv_bn(24, 128, 1, act=nn.SiLU))
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(128, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# ------------------------------------------------------------------------- ConvNeXt


class LayerNorm2d(nn.LayerNorm):
    """torchvision's: a LayerNorm over the channels of an NCHW tensor, by permutes."""

    def forward(self, x):
        return F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(torch.rand(dim, 1, 1) * 0.5 + 0.1)

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.down(F.gelu(self.up(self.norm(y)))).permute(0, 3, 1, 2)
        return x + self.layer_scale * y


class TinyConvNeXt(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 4, 4), LayerNorm2d(32, eps=1e-6))
        self.stage1 = ConvNeXtBlock(32)
        self.down = nn.Sequential(LayerNorm2d(32, eps=1e-6), nn.Conv2d(32, 64, 2, 2))
        self.stage2 = ConvNeXtBlock(64)
        self.head = nn.Sequential(LayerNorm2d(64, eps=1e-6), nn.Flatten(1), nn.Linear(64, classes))

    def forward(self, x):
        x = self.stage2(self.down(self.stage1(self.stem(x))))
        return self.head(F.adaptive_avg_pool2d(x, 1))


# ------------------------------------------------------------------------------ ViT


class EncoderBlock(nn.Module):
    """torchvision's ViT encoder block: pre-LayerNorm, nn.MultiheadAttention, GELU MLP."""

    def __init__(self, dim: int, heads: int, mlp: int):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, dim))

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyViT(nn.Module):
    """Patch embedding (a 4x4/4 conv), a class token, learned position embeddings, two
    encoder blocks, the head on the class token."""

    def __init__(self, classes: int = 10, dim: int = 32, heads: int = 4, patch: int = 4):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        tokens = (IMAGE // patch) ** 2 + 1
        self.class_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.position = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.Sequential(EncoderBlock(dim, heads, 2 * dim), EncoderBlock(dim, heads, 2 * dim))
        self.ln, self.head = nn.LayerNorm(dim, eps=1e-6), nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        return self.head(self.ln(self.blocks(x))[:, 0])


# ---------------------------------------------------------------------------- GPT-2


class CausalSelfAttention(nn.Module):
    """GPT-2's: one c_attn projection split in three, a causal triangle buffer, the
    scores masked by `where` with the dtype's lowest value."""

    def __init__(self, dim: int, heads: int, positions: int):
        super().__init__()
        self.heads = heads
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool)).view(1, 1, positions, positions))

    def forward(self, x):
        b, s, c = x.shape
        q, k, v = (t.view(b, s, self.heads, c // self.heads).transpose(1, 2) for t in self.c_attn(x).split(c, dim=2))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(c // self.heads)
        w = torch.where(self.bias[:, :, :s, :s], w, torch.finfo(w.dtype).min)
        out = torch.matmul(torch.softmax(w, dim=-1), v).transpose(1, 2).contiguous().view(b, s, c)
        return self.c_proj(out)


class GPT2Block(nn.Module):
    def __init__(self, dim: int, heads: int, positions: int):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, positions)
        self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class TinyGPT2(nn.Module):
    """Token and position embeddings (Gather), two causal blocks, the final LayerNorm and
    the language-model head tied to the token embedding."""

    def __init__(self, dim: int = 32, heads: int = 4, layers: int = 2, positions: int = 32):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCABULARY, dim), nn.Embedding(positions, dim)
        self.blocks = nn.Sequential(*(GPT2Block(dim, heads, positions) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.ln_f(self.blocks(self.wte(input_ids) + self.wpe(positions)))
        return F.linear(x, self.wte.weight)


# -------------------------------------------------------------------------- RoBERTa

PAD = 1
"""RoBERTa's padding token id, which its position ids start after."""


class TinyRoBERTa(nn.Module):
    """RoBERTa's embeddings as transformers writes them: position ids computed from the
    input (the running count of non-pad tokens, zero at pads, plus the pad id: a CumSum at
    run time), token types read from a zero buffer through torch.gather (GatherElements),
    LayerNorm; then one post-LayerNorm encoder layer."""

    def __init__(self, dim: int = 32, heads: int = 4, positions: int = SEQUENCE + PAD + 1):
        super().__init__()
        self.words = nn.Embedding(VOCABULARY, dim, padding_idx=PAD)
        self.positions = nn.Embedding(positions, dim, padding_idx=PAD)
        self.types = nn.Embedding(1, dim)
        self.register_buffer("token_type_ids", torch.zeros(1, positions, dtype=torch.long))
        self.ln = nn.LayerNorm(dim)
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, input_ids):
        mask = input_ids.ne(PAD).int()
        position_ids = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + PAD
        types = torch.gather(self.token_type_ids.expand(input_ids.shape[0], -1), 1, position_ids)
        x = self.ln(self.words(input_ids) + self.types(types) + self.positions(position_ids))
        x = self.ln1(x + self.attention(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.mlp(x))


# ---------------------------------------------------------------------------- U-Net


class TinyUNet(nn.Module):
    """Two levels down by max pool, up once by a transposed conv and once by a bilinear
    resize, each concatenated with its skip connection; a 1x1 conv to the classes."""

    def __init__(self, classes: int = 3, width: int = 8):
        super().__init__()
        double = lambda cin, cout: nn.Sequential(conv_bn(cin, cout, 3), conv_bn(cout, cout, 3))
        w = width
        self.enc1, self.enc2, self.bottom = double(3, w), double(w, 2 * w), double(2 * w, 4 * w)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, 2)
        self.dec2 = double(4 * w, 2 * w)
        self.up1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.dec1, self.out = double(2 * w + w, w), nn.Conv2d(w, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        d2 = self.dec2(torch.cat([self.up2(self.bottom(F.max_pool2d(e2, 2))), e2], 1))
        return self.out(self.dec1(torch.cat([self.up1(d2), e1], 1)))


# --------------------------------------------------------------------------- building


def randomize_norms(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """Random running statistics and affine parameters for every BatchNorm (a trained
    network's are not 0 and 1), kept near 1 so that activations keep their scale."""
    with torch.no_grad():
        for norm in model.modules():
            if isinstance(norm, nn.BatchNorm2d):
                c = norm.num_features
                norm.running_mean.copy_(torch.randn(c, generator=generator) * 0.1)
                norm.running_var.copy_(torch.rand(c, generator=generator) * 0.5 + 0.75)
                norm.weight.copy_(torch.rand(c, generator=generator) * 0.5 + 0.75)
                norm.bias.copy_(torch.randn(c, generator=generator) * 0.1)
    return model.eval()


def image_model(cls: type[nn.Module]) -> Callable[..., tuple[nn.Module, dict[str, torch.Tensor]]]:
    def build(batch: int = 2, seed: int = 0):
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(seed + 1)
        model = randomize_norms(cls(), generator)
        return model, {"image": torch.randn(batch, 3, IMAGE, IMAGE, generator=generator)}

    build.__doc__ = cls.__doc__
    return build


def text_model(cls: type[nn.Module]) -> Callable[..., tuple[nn.Module, dict[str, torch.Tensor]]]:
    def build(batch: int = 2, seed: int = 0):
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(seed + 1)
        return cls().eval(), {"input_ids": torch.randint(0, VOCABULARY, (batch, SEQUENCE), generator=generator)}

    build.__doc__ = cls.__doc__
    return build


def padded_text_model(cls: type[nn.Module]) -> Callable[..., tuple[nn.Module, dict[str, torch.Tensor]]]:
    """text_model's, with the first sequence's last three tokens padding."""
    plain = text_model(cls)

    def build(batch: int = 2, seed: int = 0):
        model, inputs = plain(batch, seed)
        inputs["input_ids"][0, -3:] = PAD
        return model, inputs

    build.__doc__ = cls.__doc__
    return build


TINY_MODELS: dict[str, Callable[..., tuple[nn.Module, dict[str, torch.Tensor]]]] = {
    "resnet": image_model(TinyResNet),
    "resnext": image_model(TinyResNeXt),
    "densenet": image_model(TinyDenseNet),
    "inception": image_model(TinyInception),
    "squeezenet": image_model(TinySqueezeNet),
    "shufflenet": image_model(TinyShuffleNet),
    "mobilenet_v3": image_model(TinyMobileNetV3),
    "efficientnet": image_model(TinyEfficientNet),
    "convnext": image_model(TinyConvNeXt),
    "vit": image_model(TinyViT),
    "gpt2": text_model(TinyGPT2),
    "roberta": padded_text_model(TinyRoBERTa),
    "unet": image_model(TinyUNet),
}
"""name -> build(batch=2, seed=0) -> (eval-mode module, {input name: tensor})."""


def export_onnx(model: nn.Module, inputs: dict[str, torch.Tensor], opset: int = 17):
    """The model as an onnx.ModelProto, exported in memory as bench/models.py exports
    (TorchScript exporter, opset 17), inputs named by `inputs`' keys, one output "output"."""
    import onnx

    buffer = io.BytesIO()
    # not under no_grad: there nn.MultiheadAttention takes its fused fast path, which has no ONNX form
    torch.onnx.export(model.eval(), tuple(inputs.values()), buffer, input_names=list(inputs), output_names=["output"],
                      opset_version=opset, dynamo=False)
    return onnx.load_from_string(buffer.getvalue())
