"""A MobileNetV2-like model (inverted residual blocks: 1x1 expansion, depthwise 3x3 with
ReLU6, 1x1 projection, residual adds) through the whole pipeline: every depthwise conv
lowers to our own kernel (depthwise_direct) with its epilogue fused, the host program
launches it with that generator, the roofline and the manifest count it as a conv, and the
lowered module computes what the interpreter computes on the imported graph."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir import compiler
from boltir.backends.cuda.codegen import depthwise_kernels
from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.roofline import module_roofline
from boltir.dialects import cutlass
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.interp import find_entry
from boltir.target import get_target
from tests.frontends import onnx_models
from tests.passes.equivalence import random_inputs, relative_error

NO_DATABASE = "/nonexistent/tuning.sqlite"


def depthwise_convs(module) -> list[ops.Conv2dOp]:
    return [op for op in module.walk() if isinstance(op, ops.Conv2dOp) and op.prop_value("groups") > 1]


@pytest.fixture(scope="module")
def mobilenet():
    return onnx_models.mobilenet_v2_onnx(np.random.default_rng(0))


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_every_depthwise_conv_runs_on_our_kernel(mobilenet, arch):
    lowered = compiler.lower(mobilenet, arch=arch, dtype="f16", tuning_db=NO_DATABASE)
    module = lowered.module
    convs = depthwise_convs(module)
    assert len(convs) == 5
    assert not any(isinstance(op, cutlass.DepthwiseConv2dFpropOp) for op in module.walk())
    for conv in convs:
        assert depthwise_kernels.supports(conv), depthwise_kernels.unsupported_reason(conv)
        # ReLU6 (and BN's bias) fused: nothing elementwise reads the conv
        assert conv.epilogue.first_activation.kind == "clip" and conv.epilogue.has_bias
        assert not any(isinstance(use.operation, ops.ElementwiseOp) for use in conv.output.uses)
    assert lowered.statistics.get("lower-op-to-cutlass", "depthwise_direct kernels (op.conv2d kept)") == 5

    program = build_program(module)
    steps = [step for step in program.steps if step.family == "depthwise_direct"]
    assert [step.op for step in steps] == convs and not any(step.fallback for step in steps)
    units = {job.name: job for job in program.units}
    for step in steps:
        # our kernels follow the build: sm_90a in a Hopper build (for PDL), as the host unit
        assert units[step.kernel].arch == ("sm80" if arch == "sm80" else units["host"].arch)
        assert f'extern "C" int {step.kernel}(' in units[step.kernel].source
    assert not program.fallbacks


def test_the_roofline_and_the_manifest_count_it_as_a_conv(mobilenet):
    lowered = compiler.lower(mobilenet, arch="sm90", dtype="f16", tuning_db=NO_DATABASE)
    rows = [row for row in module_roofline(lowered.module, get_target("sm90")) if row.family == "depthwise_direct"]
    convs = depthwise_convs(lowered.module)
    assert len(rows) == len(convs) == 5
    for row, conv in zip(rows, convs, strict=True):
        outputs = int(np.prod(conv.output.type.get_shape()))
        assert row.op == "op.conv2d" and row.flops == 2 * outputs * 9 and not row.note
        moved = sum(int(np.prod(v.type.get_shape())) * 2 for v in (conv.input, conv.filter, conv.bias, conv.output))
        assert row.bytes == moved
    program = build_program(lowered.module)
    built = compiler.BuiltModel(lowered, program, [], [None] * len(program.steps))
    manifest = compiler.build_manifest(built, arch="sm90", dtype="f16", collected=lowered.statistics)
    launches = [launch for launch in manifest["launches"] if launch["family"] == "depthwise_direct"]
    assert [(launch["flops"], launch["bytes"]) for launch in launches] == [(row.flops, row.bytes) for row in rows]
    assert all(not launch["fallback"] and "cutlass" not in launch for launch in launches)


def test_the_lowered_model_computes_what_the_graph_does(mobilenet, rng):
    before = import_model(mobilenet)
    after = compiler.lower(mobilenet, arch="sm90", dtype="f16", tuning_db=NO_DATABASE).module
    inputs = random_inputs(before, rng)
    (expected,) = boltir.interp.run(before, inputs)
    entry = find_entry(after)
    cast = {name: value.astype(np.float32) for name, value in inputs.items()}
    (got,) = boltir.interp.run(after, {name: cast[name] for name in cast if name in boltir.interp.input_names(entry)})
    assert relative_error(got.astype(np.float32), expected) < 2e-2
