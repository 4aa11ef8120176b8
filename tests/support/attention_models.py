"""Small transformer blocks built with torch alone, written as the exporters' users write
them, for the attention passes' tests: a BERT-like encoder (eager attention with the
additive `(1 - mask) · min` mask, the scale as Div, Mul or on Q and K), a GPT-2-like
causal block (the triangle as `Where` or as an additive constant) and an SDPA block.
`export_onnx` writes them as bench/models.py does (TorchScript exporter, opset 17)."""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int, scale_mode: str = "div"):
        super().__init__()
        self.heads, self.head_dim, self.scale_mode = heads, hidden // heads, scale_mode
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        if self.scale_mode == "qk":
            factor = 1 / math.sqrt(math.sqrt(self.head_dim))
            scores = torch.matmul(q * factor, (k * factor).transpose(-1, -2))
        else:
            scores = torch.matmul(q, k.transpose(-1, -2))
            root = math.sqrt(self.head_dim)
            scores = scores / root if self.scale_mode == "div" else scores * (1 / root)
        if mask is not None:
            scores = scores + mask
        context = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.shape[0], context.shape[1], -1)


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, scale_mode: str):
        super().__init__()
        self.attention = SelfAttention(hidden, heads, scale_mode)
        self.output, self.norm1 = nn.Linear(hidden, hidden), nn.LayerNorm(hidden)
        self.up, self.down, self.norm2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden), nn.LayerNorm(hidden)

    def forward(self, x, mask):
        x = self.norm1(self.output(self.attention(x, mask)) + x)
        return self.norm2(self.down(nn.functional.gelu(self.up(x))) + x)


class Encoder(nn.Module):
    """BERT's encoder on hidden states, with the 0/1 attention mask made additive once."""

    def __init__(self, layers: int = 2, hidden: int = 64, heads: int = 4, ffn: int = 256, scale_mode: str = "div"):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn, scale_mode) for _ in range(layers))

    def forward(self, x, attention_mask):
        mask = attention_mask[:, None, None, :].to(x.dtype)
        mask = (1.0 - mask) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, mask)
        return x


class CausalBlock(nn.Module):
    """GPT-2's attention: one c_attn projection split in three, a causal triangle buffer."""

    def __init__(self, hidden: int = 64, heads: int = 4, positions: int = 16, mode: str = "where"):
        super().__init__()
        self.heads, self.head_dim, self.mode = heads, hidden // heads, mode
        self.c_attn, self.c_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        triangle = torch.tril(torch.ones(positions, positions, dtype=torch.bool))
        self.register_buffer("bias", triangle.view(1, 1, positions, positions))

    def forward(self, x):
        b, s, c = x.shape
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in self.c_attn(x).split(c, dim=2))
        w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=q.dtype)
        causal = self.bias[:, :, :s, :s]
        lowest = torch.finfo(w.dtype).min
        if self.mode == "where":
            w = torch.where(causal, w, torch.full([], lowest, dtype=w.dtype))
        else:
            w = w + (~causal).to(w.dtype) * lowest
        out = torch.matmul(nn.functional.softmax(w, dim=-1), v).transpose(1, 2).contiguous().view(b, s, c)
        return self.c_proj(out)


class SdpaBlock(nn.Module):
    """`scaled_dot_product_attention` on a packed QKV projection."""

    def __init__(self, hidden: int = 64, heads: int = 4, causal: bool = False):
        super().__init__()
        self.heads, self.head_dim, self.causal = heads, hidden // heads, causal
        self.qkv = nn.Linear(hidden, 3 * hidden)

    def forward(self, x, mask=None):
        b, s, c = x.shape
        packed = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = packed[0], packed[1], packed[2]
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal)
        return out.transpose(1, 2).reshape(b, s, c)


def export_onnx(module: nn.Module, args: tuple, path: Path, input_names: list[str]) -> Path:
    torch.onnx.export(module.eval(), args, str(path), input_names=input_names, output_names=["output"],
                      opset_version=17, dynamo=False)
    return path
