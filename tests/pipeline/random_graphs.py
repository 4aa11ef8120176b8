"""Random graph-level CNNs for pipeline tests: convs (plain, grouped, depthwise), GEMMs,
BatchNorms, activations, residual adds, pools, reshapes and concats, with odd channel
counts. A graph is described by a list of layer choices drawn by hypothesis, so that a
failing case shrinks to a small one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import SSAValue

from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.dialects.graph import tensor_shape

ACTIVATIONS = ("relu", "relu6", "sigmoid", "gelu", "gelu_tanh", "silu", "hardswish", "leaky_relu", "tanh")
LAYERS = ("conv", "conv_bn", "depthwise", "grouped", "bn", "activation", "residual", "pool", "concat", "conv1x1_chain")


@dataclass(frozen=True)
class Layer:
    kind: str
    channels: int
    kernel: int
    stride: int
    activation: str
    pick: int  # chooses an earlier tensor where a layer needs one


@st.composite
def layers(draw) -> Layer:
    return Layer(
        kind=draw(st.sampled_from(LAYERS)),
        channels=draw(st.integers(1, 17)),
        kernel=draw(st.sampled_from((1, 3))),
        stride=draw(st.sampled_from((1, 1, 2))),
        activation=draw(st.sampled_from(ACTIVATIONS)),
        pick=draw(st.integers(0, 1000)),
    )


@st.composite
def graph_specs(draw):
    return {
        "batch": draw(st.sampled_from((1, 2))),
        "channels": draw(st.integers(1, 13)),
        "size": draw(st.sampled_from((5, 7, 8))),
        "layers": draw(st.lists(layers(), min_size=2, max_size=8)),
        "head": draw(st.sampled_from(("gemm", "pool_gemm", "none"))),
    }


class RandomCnn:
    def __init__(self, spec: dict, rng: np.random.Generator):
        self.rng = rng
        self.b = ModelBuilder()
        x = self.b.input("x", (spec["batch"], spec["channels"], spec["size"], spec["size"]))
        self.tensors: list[SSAValue] = [x]
        for layer in spec["layers"]:
            self.tensors.append(self.apply(layer, self.tensors[-1]))
        out = self.head(spec["head"], self.tensors[-1])
        self.module = self.b.finish([out], ["y"])

    def weight(self, name: str, shape, fan_in: int) -> SSAValue:
        return self.b.constant(name, (self.rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))).astype(np.float32))

    def insert(self, op) -> SSAValue:
        return self.b.insert(op).results[0]

    def conv(self, x: SSAValue, out_channels: int, kernel: int, stride: int, groups: int = 1, bias: bool = True) -> SSAValue:
        c = tensor_shape(x.type)[1]
        w = self.weight("w", (out_channels, c // groups, kernel, kernel), c // groups * kernel * kernel)
        b = self.b.constant("b", (0.1 * self.rng.standard_normal(out_channels)).astype(np.float32)) if bias else None
        pad = kernel // 2
        return self.insert(graph.Conv2dOp(x, w, b, strides=(stride, stride), pads=(pad,) * 4, group=groups))

    def batch_norm(self, x: SSAValue) -> SSAValue:
        c = tensor_shape(x.type)[1]
        params = [
            1 + 0.2 * self.rng.standard_normal(c),
            0.2 * self.rng.standard_normal(c),
            0.2 * self.rng.standard_normal(c),
            self.rng.uniform(0.5, 1.5, c),
        ]
        values = [self.b.constant("bn", p.astype(np.float32)) for p in params]
        return self.insert(graph.BatchNormOp(x, *values))

    def activation(self, x: SSAValue, kind: str) -> SSAValue:
        match kind:
            case "relu":
                return self.insert(graph.ReluOp(x))
            case "relu6":
                return self.insert(graph.ClipOp(x, 0.0, 6.0))
            case "sigmoid":
                return self.insert(graph.SigmoidOp(x))
            case "gelu":
                return self.insert(graph.GeluOp(x))
            case "gelu_tanh":
                return self.insert(graph.GeluOp(x, "tanh"))
            case "silu":
                return self.insert(graph.SiluOp(x))
            case "hardswish":
                return self.insert(graph.HardSwishOp(x))
            case "leaky_relu":
                return self.insert(graph.LeakyReluOp(x, 0.1))
            case _:
                return self.insert(graph.TanhOp(x))

    def apply(self, layer: Layer, x: SSAValue) -> SSAValue:
        n, c, h, w = tensor_shape(x.type)
        stride = layer.stride if min(h, w) >= 4 else 1
        match layer.kind:
            case "conv":
                return self.activation(self.conv(x, layer.channels, layer.kernel, stride), layer.activation)
            case "conv_bn":
                y = self.batch_norm(self.conv(x, layer.channels, layer.kernel, stride, bias=layer.pick % 2 == 0))
                return self.activation(y, layer.activation)
            case "depthwise":
                return self.activation(self.conv(x, c, 3, stride, groups=c), layer.activation)
            case "grouped":
                groups = next(g for g in (3, 2, 1) if c % g == 0)
                out = groups * max(1, layer.channels // groups)
                return self.conv(x, out, layer.kernel, 1, groups=groups)
            case "bn":
                return self.batch_norm(x)
            case "activation":
                return self.activation(x, layer.activation)
            case "residual":
                same = [t for t in self.tensors if t.type == x.type and t is not x]
                if not same:
                    return self.insert(graph.AddOp(x, self.conv(x, c, 3, 1)))
                return self.insert(graph.AddOp(self.conv(x, c, layer.kernel, 1), same[layer.pick % len(same)]))
            case "pool":
                if min(h, w) < 2:
                    return x
                if layer.pick % 2:
                    return self.insert(graph.MaxPool2dOp(x, (2, 2), strides=(2, 2)))
                return self.insert(graph.AvgPool2dOp(x, (3, 3), strides=(1, 1), pads=(1, 1, 1, 1)))
            case "concat":
                same = [t for t in self.tensors if tensor_shape(t.type)[0::2] == (n, h) and tensor_shape(t.type)[3] == w]
                other = same[layer.pick % len(same)] if same else x
                return self.insert(graph.ConcatOp([x, other], axis=1))
            case "conv1x1_chain":
                y = self.activation(self.conv(x, layer.channels, 1, 1), "relu")
                return self.activation(self.conv(y, max(1, layer.channels // 2 + 1), 1, 1), layer.activation)
        raise AssertionError(layer.kind)

    def head(self, kind: str, x: SSAValue) -> SSAValue:
        n, c, h, w = tensor_shape(x.type)
        if kind == "none":
            return x
        if kind == "pool_gemm":
            x = self.insert(graph.GlobalAvgPoolOp(x))
            h = w = 1
        flat = self.insert(graph.FlattenOp(x, 1))
        features = c * h * w
        weight = self.weight("fc", (5, features), features)
        bias = self.b.constant("fc_bias", (0.1 * self.rng.standard_normal(5)).astype(np.float32))
        return self.insert(graph.GemmOp(flat, weight, bias, trans_b=True))
