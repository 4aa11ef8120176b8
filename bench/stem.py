"""The image stem on the GPU: ResNet-50's (7×7/2 conv on 3 channels, pad 3, BN, ReLU) and
MobileNetV2's (3×3/2, pad 1, BN, ReLU6) first layer alone, at batch 1 and 32 on 224²
images, built twice in one run: with the default pipeline (space-to-depth-stem blocks the
conv into a 4×4/1 or 2×2/1 conv on 16 channels, and fuse-space-to-depth makes its input
one op.space_to_depth kernel) and without those two passes (cast, layout change and
channel padding to 4 as separate kernels, the fixed-channels conv). Each build is checked
against the op-level interpreter's run of the module it compiled (‖Δ‖/‖ref‖ < 5e-3) and
profiled launch by launch inside a captured graph (`CompiledModel.profile`).

"input+stem ms" sums the launches up to and including the stem conv (the model's output
layout change and cast back to f32 come after and are not counted). Issue 15's floor:
ResNet-50 at batch 32 ≤ 0.05 ms.

    source bench/setup_gpu.sh && python3 -m bench.stem [--batches 1,32] [--stems resnet50,mobilenet_v2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

STEMS = {
    # name: (kernel, pads, out channels, ReLU6?)
    "resnet50": (7, 3, 64, False),
    "mobilenet_v2": (3, 1, 32, True),
}
BLOCKING_PASSES = ("space-to-depth-stem", "fuse-space-to-depth")


def stem_model(name: str, batch: int, size: int = 224) -> onnx.ModelProto:
    kernel, pad, channels, relu6 = STEMS[name]
    rng = np.random.default_rng(15)
    weights = {
        "conv.weight": rng.normal(0, np.sqrt(2 / (3 * kernel * kernel)), (channels, 3, kernel, kernel)),
        "bn.weight": rng.uniform(0.5, 1.5, channels),
        "bn.bias": rng.normal(0, 0.1, channels),
        "bn.mean": rng.normal(0, 0.1, channels),
        "bn.var": rng.uniform(0.5, 1.5, channels),
        "relu6.min": np.array(0.0),
        "relu6.max": np.array(6.0),
    }
    nodes = [
        helper.make_node("Conv", ["image", "conv.weight"], ["c"], kernel_shape=[kernel] * 2, strides=[2, 2], pads=[pad] * 4),
        helper.make_node("BatchNormalization", ["c", "bn.weight", "bn.bias", "bn.mean", "bn.var"], ["b"]),
        helper.make_node("Clip", ["b", "relu6.min", "relu6.max"], ["y"]) if relu6 else helper.make_node("Relu", ["b"], ["y"]),
    ]
    out = (size + 2 * pad - kernel) // 2 + 1
    graph = helper.make_graph(
        nodes, f"{name}_stem", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, channels, out, out])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def pipeline_of(blocked: bool) -> str:
    from boltir.compiler import full_pipeline
    from boltir.pipelines import without_passes

    pipeline = full_pipeline(arch="sm90")  # down to plan-memory: boltir.compile takes the whole pipeline
    return pipeline if blocked else without_passes(pipeline, BLOCKING_PASSES)


def check(model_path: Path, pipeline: str, compiled, image: np.ndarray) -> float:
    """‖Δ‖/‖ref‖ of the GPU's output against the interpreter on the module it compiled."""
    from boltir.compiler import lower_model
    from boltir.interp import run

    module, _, _ = lower_model(model_path, arch="sm90", dtype="f16", pipeline=pipeline)
    (expected,) = run(module, {"image": image})
    (got,) = compiled(image=image)
    expected = expected.astype(np.float64)
    return float(np.linalg.norm(got.astype(np.float64) - expected) / np.linalg.norm(expected))


def measure(name: str, batch: int, blocked: bool, work: Path) -> tuple:
    from boltir.runtime import format_profile, load

    model_path = work / f"{name}_b{batch}.onnx"
    onnx.save(stem_model(name, batch), model_path)
    import boltir

    directory = work / f"{name}_b{batch}_{'blocked' if blocked else 'plain'}"
    pipeline = pipeline_of(blocked)
    boltir.compile(str(model_path), directory, pipeline=pipeline, progress=False)
    compiled = load(directory)
    image = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    error = check(model_path, pipeline, compiled, image)
    launches = compiled.profile(image=image, repeats=50)
    print(f"{name} b{batch} {'blocked' if blocked else 'plain'}:\n{format_profile(launches)}", flush=True)
    stem = next(i for i, launch in enumerate(launches) if "conv" in launch.family)
    kernels = " + ".join(launch.family for launch in launches[: stem + 1])
    input_and_stem = sum(launch.ms for launch in launches[: stem + 1])
    bound = sum(launch.bound_ms or 0.0 for launch in launches[: stem + 1])
    return name, batch, "space-to-depth" if blocked else "plain", kernels, input_and_stem, bound, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--stems", default=",".join(STEMS))
    parser.add_argument("--work", default=None, help="where the models and builds go (default: a temporary folder)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="boltir-stem-"))
    work.mkdir(parents=True, exist_ok=True)
    rows, failed = [], False
    for name in args.stems.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            for blocked in (False, True):
                row = measure(name, batch, blocked, work)
                failed |= not row[-1] < 5e-3
                rows.append(row)
    print(f"\n{'stem':<14} {'batch':>5}  {'build':<15} {'input+stem ms':>13}  {'bound ms':>8}  {'error':>8}  kernels")
    for name, batch, build_name, kernels, ms, bound, error in rows:
        print(f"{name:<14} {batch:>5}  {build_name:<15} {ms:13.4f}  {bound:8.4f}  {error:8.1e}  {kernels}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
