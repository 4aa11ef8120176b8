"""A ResNet-like model at batch 1 through the whole pipeline: its 1000-class classifier (a
1 x K x 1000 GEMM with a bias) runs on our few-rows GEMM (skinny_gemm) on sm80 and sm90,
the host program launches it with that generator, the roofline and the manifest count it
as a GEMM, and the lowered module computes what the interpreter computes on the graph. At
batch 32 the classifier stays on CUTLASS."""

from __future__ import annotations

import numpy as np
import pytest

import boltir
from boltir import compiler
from boltir.backends.cuda.codegen import skinny_gemm_kernels
from boltir.backends.cuda.codegen.host_program import build_program
from boltir.backends.cuda.roofline import module_roofline
from boltir.dialects import op as ops
from boltir.frontends.onnx import import_model
from boltir.interp import find_entry
from boltir.target import get_target
from tests.frontends import onnx_models
from tests.passes.equivalence import random_inputs, relative_error

NO_DATABASE = "/nonexistent/tuning.sqlite"


@pytest.fixture(scope="module")
def resnet_b1():
    return onnx_models.resnet_onnx(np.random.default_rng(0), classes=1000, batch=1)


def gemms(module) -> list[ops.GemmOp]:
    return [op for op in module.walk() if isinstance(op, ops.GemmOp)]


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
def test_the_classifier_runs_on_our_kernel(resnet_b1, arch):
    lowered = compiler.lower(resnet_b1, arch=arch, dtype="f16", tuning_db=NO_DATABASE)
    (classifier,) = gemms(lowered.module)
    assert not any(op.name == "cutlass.gemm" for op in lowered.module.walk())
    assert skinny_gemm_kernels.supports(classifier) and classifier.epilogue.has_bias
    assert classifier.output.type.get_shape() == (1, 1000)
    assert lowered.statistics.get("lower-op-to-cutlass", "skinny_gemm kernels (op.gemm kept)") == 1

    program = build_program(lowered.module)
    (step,) = [step for step in program.steps if step.family == "skinny_gemm"]
    assert step.op is classifier and not step.fallback and step.generation is None
    unit = next(job for job in program.units if job.name == step.kernel)
    assert unit.arch == "sm80" and f'extern "C" int {step.kernel}(' in unit.source


def test_the_roofline_and_the_manifest_count_it(resnet_b1):
    lowered = compiler.lower(resnet_b1, arch="sm90", dtype="f16", tuning_db=NO_DATABASE)
    (classifier,) = gemms(lowered.module)
    (row,) = [row for row in module_roofline(lowered.module, get_target("sm90")) if row.family == "skinny_gemm"]
    k = classifier.a.type.get_shape()[-1]
    assert row.op == "op.gemm" and row.flops == 2 * 1000 * k and not row.note
    assert row.bytes == 2 * (k + 1000 * k + 1000) + 4 * 1000  # f16 operands; the model's f32 output (fuse-output-cast)
    program = build_program(lowered.module)
    built = compiler.BuiltModel(lowered, program, [], [None] * len(program.steps))
    manifest = compiler.build_manifest(built, arch="sm90", dtype="f16", collected=lowered.statistics)
    (launch,) = [launch for launch in manifest["launches"] if launch["family"] == "skinny_gemm"]
    assert (launch["flops"], launch["bytes"]) == (row.flops, row.bytes)
    assert not launch["fallback"] and "cutlass" not in launch


def test_at_batch_32_it_runs_the_classifier_and_past_it_cutlass_does():
    for batch, ours in ((32, True), (33, False)):
        model = onnx_models.resnet_onnx(np.random.default_rng(0), classes=1000, batch=batch)
        lowered = compiler.lower(model, arch="sm90", dtype="f16", tuning_db=NO_DATABASE)
        assert any(op.name == "cutlass.gemm" for op in lowered.module.walk()) is not ours
        assert any(skinny_gemm_kernels.computes(op) for op in lowered.module.walk()) is ours


def test_the_lowered_model_computes_what_the_graph_does(resnet_b1, rng):
    before = import_model(resnet_b1)
    after = compiler.lower(resnet_b1, arch="sm90", dtype="f16", tuning_db=NO_DATABASE).module
    inputs = random_inputs(before, rng)
    (expected,) = boltir.interp.run(before, inputs)
    entry = find_entry(after)
    cast = {name: value.astype(np.float32) for name, value in inputs.items()}
    (got,) = boltir.interp.run(after, {name: cast[name] for name in cast if name in boltir.interp.input_names(entry)})
    assert relative_error(got.astype(np.float32), expected) < 2e-2
