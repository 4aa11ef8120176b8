"""The interpreter runs a full-size CNN in bounded time and memory.

VGG-19 at 224x224, batch 1: 16 conv3x3 + relu layers with 5 max pools, then flatten and
three gemm layers; about 20 G multiply-adds and 144 M weights (575 MB in f32). A conv
that built an im2col buffer per layer, or a reference-style Python loop over windows,
would blow the memory or the time budget here.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

from boltir import interp, weights
from boltir.builder import ModelBuilder
from boltir.dialects import graph

VGG19_FEATURES = [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"]
VGG19_CLASSIFIER = [4096, 4096, 1000]

TIME_LIMIT_S = 30.0
MEMORY_LIMIT_BYTES = 3 << 30


def he_normal(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    weight = rng.standard_normal(shape, dtype=np.float32)
    weight *= np.float32(np.sqrt(2.0 / fan_in))
    return weight


def build_vgg19(rng: np.random.Generator):
    b = ModelBuilder()
    x = b.input("data", (1, 3, 224, 224))
    channels = 3
    conv_index = 0
    for layer in VGG19_FEATURES:
        if layer == "M":
            x = b.insert(graph.MaxPool2dOp(x, (2, 2), strides=(2, 2))).output
            continue
        conv_index += 1
        w = b.constant(f"conv{conv_index}.weight", he_normal(rng, (layer, channels, 3, 3), channels * 9))
        bias = b.constant(f"conv{conv_index}.bias", rng.uniform(-0.05, 0.05, layer).astype(np.float32))
        x = b.insert(graph.Conv2dOp(x, w, bias, pads=(1, 1, 1, 1))).output
        x = b.insert(graph.ReluOp(x)).output
        channels = layer
    x = b.insert(graph.FlattenOp(x, 1)).output
    features = channels * 7 * 7
    for index, width in enumerate(VGG19_CLASSIFIER):
        w = b.constant(f"fc{index + 1}.weight", he_normal(rng, (width, features), features))
        bias = b.constant(f"fc{index + 1}.bias", rng.uniform(-0.05, 0.05, width).astype(np.float32))
        x = b.insert(graph.GemmOp(x, w, bias, trans_b=True)).output
        if index + 1 < len(VGG19_CLASSIFIER):
            x = b.insert(graph.ReluOp(x)).output
        features = width
    module = b.finish([x], ["logits"])
    module.verify()
    return module


@pytest.mark.slow
def test_vgg19_runs_in_bounded_time_and_memory(rng, monkeypatch):
    # A weight store of this test's own, so that its 575 MB go when the test ends.
    monkeypatch.setattr(weights, "WEIGHTS", weights.WeightStore())
    tracemalloc.start()
    try:
        module = build_vgg19(rng)
        weight_bytes, _ = tracemalloc.get_traced_memory()
        image = rng.standard_normal((1, 3, 224, 224), dtype=np.float32)
        start = time.perf_counter()
        (logits,) = interp.run(module, {"data": image})
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    print(
        f"VGG-19 224x224 batch 1: {elapsed:.1f} s in the interpreter, "
        f"traced peak {peak / 2**20:.0f} MiB (weights and model {weight_bytes / 2**20:.0f} MiB)"
    )
    assert logits.shape == (1, 1000) and logits.dtype == np.float32
    assert np.isfinite(logits).all() and logits.std() > 0
    assert elapsed < TIME_LIMIT_S, f"took {elapsed:.1f} s"
    assert peak < MEMORY_LIMIT_BYTES, f"traced peak {peak / 2**30:.2f} GiB"
