"""Real topologies through the default pipeline up to the op level, weights redrawn:
ResNet-50, VGG-19, SqueezeNet, DenseNet-121 and ShuffleNet (the onnx wheel's light
models), a MobileNetV2 and a BERT encoder layer (the frontend tests' models). Each
verifies and matches the interpreter; ResNet-50's pass statistics are as expected."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir.dialects import graph
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.passes import statistics
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from tests.frontends import onnx_models
from tests.passes.equivalence import random_inputs, relative_error
from tests.pipeline.topologies import import_light_model

TOLERANCE = {"f32": 1e-4, "f16": 2e-2}


def compile_to_op_level(module, dtype: str):
    compiled = module.clone()
    with statistics.collecting() as collected:
        run_passes(compiled, parse_pipeline_spec(default_pipeline(dtype=dtype), available_passes()), boltir.make_context())
    return compiled, collected


def assert_matches_interpreter(before, after, rng, dtype: str, given=None) -> None:
    """Both sides sum inside each op in f64 (`wide_arithmetic`), rounding at each op's
    result as ever: what differs is then what the passes changed, not the order of a
    50-layer f32 model's sums, which alone moves ResNet-50's output by 2-4e-5."""
    assert not any(isinstance(op, graph.GraphOp) for op in after.walk())
    inputs = random_inputs(before, rng, given)
    with boltir.interp.wide_arithmetic():
        expected, got = boltir.interp.run(before, inputs), boltir.interp.run(after, inputs)
    for index, (value, reference) in enumerate(zip(got, expected, strict=True)):
        error = relative_error(value.astype(np.float32), reference)
        assert error < TOLERANCE[dtype], f"output {index}: ‖Δ‖/‖ref‖ = {error:.3g}"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet50", "vgg19", "squeezenet", "densenet121", "shufflenet"])
def test_light_topologies(name, rng):
    before = import_light_model(name, rng)
    after, _ = compile_to_op_level(before, "f32")
    assert_matches_interpreter(before, after, rng, "f32")


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_mobilenet_v2(dtype, rng):
    before = import_model(onnx_models.mobilenet_v2_onnx(rng))
    after, _ = compile_to_op_level(before, dtype)
    assert_matches_interpreter(before, after, rng, dtype)


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_bert_encoder(dtype, rng):
    """With a real 0/1 attention mask: random integers there would add multiples of
    -10000 to the scores, which no f16 computation keeps."""
    before = import_model(onnx_models.bert_onnx(rng))
    after, _ = compile_to_op_level(before, dtype)
    assert_matches_interpreter(before, after, rng, dtype, onnx_models.bert_inputs(rng))


@pytest.mark.slow
def test_resnet50_pass_statistics(rng):
    """All BatchNorms folded, every ReLU and residual add fused, all 53 convs NHWC,
    no transpose inside the network; the stem blocked by space-to-depth-stem, its input's
    cast, padding, blocking, layout change and channel padding one op.space_to_depth."""
    before = import_light_model("resnet50", rng)
    after, stats = compile_to_op_level(before, "f16")
    assert stats.get("fold-batchnorm", "batchnorms folded into conv") == 53
    convs = [op for op in after.walk() if isinstance(op, ops.Conv2dOp)]
    assert len(convs) == 53
    assert all(op.prop_value("layout") == "NHWC" and op.prop_value("filter_layout") == "OHWI" for op in convs)
    assert not any(isinstance(op, ops.UnaryOp | ops.BinaryOp) for op in after.walk())
    activations = [op.epilogue.first_activation.kind for op in convs] + [op.epilogue.second_activation.kind for op in convs]
    assert activations.count("relu") == 49
    assert sum(op.epilogue.residual_kind == "add" for op in convs) == 16
    assert not any(isinstance(op, ops.LayoutTransformOp | ops.PadOp) for op in after.walk())
    # The one transpose left at the graph level (space_to_depth -> NHWC conv) went into
    # the op that reads the f32 image once and writes the stem's f16 NHWC input.
    assert stats.get("space-to-depth-stem", "convs blocked") == 1
    assert stats.get("convert-layout", "transposes left") == 1
    (blocking,) = [op for op in after.walk() if isinstance(op, ops.SpaceToDepthOp)]
    assert blocking.input is boltir.interp.find_entry(after).body.block.args[0]
    assert blocking.prop_value("layout") == "NCHW" and blocking.prop_value("result_layout") == "NHWC"
    assert blocking.prop_value("pads") == (3, 3, 3, 3) and str(blocking.output.type) == "tensor<1x115x115x16xf16>"
    assert [op.input for op in convs].count(blocking.output) == 1
