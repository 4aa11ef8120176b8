"""Writes the bundled example: a small conv -> relu -> gemm classifier in graph IR.

    python examples/small_cnn/make_small_cnn.py

Produces, beside this file:
- small_cnn.mlir   the network, its weights in the dialect_resources section;
- input.npz        one input image, keyed by the model's input name;
- expected.npz     the output computed here with plain numpy loops, independently of
                   boltir's interpreter, to check `bolt-run` against.
"""

from pathlib import Path

import numpy as np

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph

HERE = Path(__file__).parent
INPUT_NAME = "image:0"
OUTPUT_NAME = "logits"


def make_weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "conv1.weight": (rng.standard_normal((8, 3, 3, 3)) * np.sqrt(2 / 27)).astype(np.float32),
        "conv1.bias": (rng.standard_normal(8) * 0.1).astype(np.float32),
        "fc.weight": (rng.standard_normal((10, 8 * 16 * 16)) * np.sqrt(1 / 2048)).astype(np.float32),
        "fc.bias": (rng.standard_normal(10) * 0.1).astype(np.float32),
    }


def build(weights: dict[str, np.ndarray]):
    b = ModelBuilder()
    image = b.input(INPUT_NAME, (1, 3, 16, 16))
    conv = b.insert(
        graph.Conv2dOp(
            image, b.constant("conv1.weight", weights["conv1.weight"]), b.constant("conv1.bias", weights["conv1.bias"]),
            pads=(1, 1, 1, 1),
        )
    ).output
    relu = b.insert(graph.ReluOp(conv)).output
    flat = b.insert(graph.FlattenOp(relu, axis=1)).output
    logits = b.insert(
        graph.GemmOp(flat, b.constant("fc.weight", weights["fc.weight"]), b.constant("fc.bias", weights["fc.bias"]), trans_b=True)
    ).output
    return b.finish([logits], [OUTPUT_NAME])


def reference(image: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    """The same network as explicit loops over output pixels."""
    padded = np.pad(image.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    w = weights["conv1.weight"].astype(np.float64)
    conv = np.zeros((1, 8, 16, 16))
    for m in range(8):
        for i in range(16):
            for j in range(16):
                conv[0, m, i, j] = np.sum(padded[0, :, i : i + 3, j : j + 3] * w[m]) + weights["conv1.bias"][m]
    hidden = np.maximum(conv, 0).reshape(1, -1)
    return (hidden @ weights["fc.weight"].T.astype(np.float64) + weights["fc.bias"]).astype(np.float32)


def main() -> None:
    rng = np.random.default_rng(2022)
    weights = make_weights(rng)
    module = build(weights)
    boltir.verify_module(module)
    (HERE / "small_cnn.mlir").write_text(boltir.print_module(module))
    image = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    np.savez(HERE / "input.npz", **{INPUT_NAME: image})
    np.savez(HERE / "expected.npz", result_0=reference(image, weights))
    print(f"wrote {HERE / 'small_cnn.mlir'}, input.npz and expected.npz")


if __name__ == "__main__":
    main()
