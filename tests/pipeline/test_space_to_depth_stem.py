"""A small ResNet-style model whose stem is ImageNet's 7×7/2 conv on 3 channels (pad 3,
BatchNorm, ReLU, max pool), through the whole pipeline: space-to-depth-stem blocks the
stem, fuse-space-to-depth makes its input one op.space_to_depth of the f32 image, and
`boltc --emit cutlass` selects the blocked stem as an ordinary conv (4×4/1 on 16 f16
channels, the optimized iterator). What the pipeline produces computes what the
interpreter computes on the imported graph, at the op level and after the lowering to
`cutlass`, for odd and even image sizes and batch sizes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import boltir
from boltir.backends.cuda.codegen import stem_conv_kernels
from boltir.dialects import cutlass, graph
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.interp import find_entry
from boltir.passes import statistics
from boltir.pipelines import (
    available_passes,
    default_pipeline,
    parse_pipeline_spec,
    run_passes,
)
from boltir.tools import boltc
from tests.frontends.onnx_models import GraphBuilder
from tests.passes.equivalence import random_inputs, relative_error

TOLERANCE = {"f32": 1e-4, "f16": 2e-2, "bf16": 5e-2}


def stem_resnet_onnx(rng: np.random.Generator, batch: int, size: int) -> onnx.ModelProto:
    """7×7/2 conv-BN-ReLU stem, 3×3/2 max pool, a basic block with a stride-2 1×1
    shortcut, global average pool, Gemm."""
    g = GraphBuilder(rng, "stem_resnet")
    x = g.input("image", TensorProto.FLOAT, [batch, 3, size, size])
    h = g.node("Relu", [g.conv_bn(x, 3, 16, 7, 2, name="stem")], name="stem.relu")
    h = g.node("MaxPool", [h], name="maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    out = g.node("Relu", [g.conv_bn(h, 16, 32, 3, 2, name="block.1")], name="block.relu1")
    out = g.conv_bn(out, 32, 32, 3, name="block.2")
    shortcut = g.conv_bn(h, 16, 32, 1, 2, name="block.down")
    h = g.node("Relu", [g.node("Add", [out, shortcut], name="block.add")], name="block.relu2")
    h = g.node("Flatten", [g.node("GlobalAveragePool", [h], name="gap")], name="flatten", axis=1)
    return g.model([g.gemm(h, 32, 10)], ["logits"], [[batch, 10]])


def assert_matches_the_graph(before, after, rng, dtype: str) -> None:
    inputs = random_inputs(before, rng)
    (expected,), (got,) = boltir.interp.run(before, inputs), boltir.interp.run(after, inputs)
    error = relative_error(got.astype(np.float32), expected)
    assert error < TOLERANCE[dtype], f"‖Δ‖/‖ref‖ = {error:.3g}"


def the_stem(module):
    """The first conv (op or cutlass level) and the op.space_to_depth it reads."""
    conv = next(op for op in module.walk() if isinstance(op, ops.Conv2dOp | cutlass.Conv2dFpropOp))
    return conv, conv.input.owner


@pytest.mark.parametrize(("dtype", "batch", "size"), [("f16", 2, 32), ("f32", 1, 33), ("bf16", 3, 30), ("f16", 1, 35)])
def test_op_level_matches_the_graph(rng, dtype, batch, size):
    before = import_model(stem_resnet_onnx(rng, batch, size))
    after = before.clone()
    with statistics.collecting() as collected:
        run_passes(after, parse_pipeline_spec(default_pipeline(dtype=dtype), available_passes()), boltir.make_context())
    assert collected.get("space-to-depth-stem", "convs blocked") == 1
    assert not any(isinstance(op, graph.GraphOp) for op in after.walk())
    conv, blocking = the_stem(after)
    assert isinstance(blocking, ops.SpaceToDepthOp) and blocking.input is find_entry(after).body.block.args[0]
    assert conv.filter.type.get_shape()[1:] == (4, 4, 12 if dtype == "f32" else 16)
    assert conv.prop_value("strides") == (1, 1) and conv.prop_value("pads") == (0, 0, 0, 0)
    # the image goes straight into the one blocking op: no cast, pad or transpose before the stem
    first_ops = [op.name for op in find_entry(after).body.ops if not isinstance(op, ops.ConstantOp)][:2]
    assert first_ops == ["op.space_to_depth", "op.conv2d"]
    assert_matches_the_graph(before, after, rng, dtype)


@pytest.mark.parametrize("arch", ["sm90", "sm80"])
def test_boltc_emit_cutlass_selects_the_blocked_stem_as_a_conv(rng, tmp_path, arch):
    model = stem_resnet_onnx(rng, 2, 64)
    path = tmp_path / "stem_resnet.onnx"
    onnx.save(model, path)
    emitted = tmp_path / "stem_resnet.cutlass.mlir"
    assert boltc.main([str(path), "--emit", "cutlass", "--arch", arch, "-o", str(emitted)]) == 0
    lowered = boltir.parse_module(emitted.read_text())
    conv, blocking = the_stem(lowered)
    # 2 x 32² output pixels are too few for our few-channel conv on a reduction of 4·4·16
    # (heuristic.STEM_MANY_PIXELS): the blocked stem is CUTLASS's conv, 4x4/1 on 16 channels
    assert isinstance(conv, cutlass.Conv2dFpropOp)
    assert str(conv.input.type) == "tensor<2x35x35x16xf16>" and str(conv.output.type) == "tensor<2x32x32x16xf16>"
    assert conv.filter.type.get_shape() == (16, 4, 4, 16) and "strides" not in conv.attributes
    assert isinstance(blocking, ops.SpaceToDepthOp) and str(blocking.input.type) == "tensor<2x3x64x64xf32>"
    assert blocking.prop_value("pads") == (3, 3, 3, 3)
    assert_matches_the_graph(import_model(model), lowered, rng, "f16")
