"""boltc --emit graph: an ONNX model becomes graph IR that bolt-opt and bolt-run read back."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from boltir.tools import bolt_opt, bolt_run, boltc
from tests.support.cli import error_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_resnet" / "make_model.py"


def example_model():
    spec = importlib.util.spec_from_file_location("make_small_resnet", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def dynamic_batch_model(path: Path) -> Path:
    weight = numpy_helper.from_array(np.random.default_rng().standard_normal((4, 6)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6])],
        [weight],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_emit_graph_then_bolt_opt_and_bolt_run_read_it_back(tmp_path, capsys):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    ir_path = tmp_path / "resnet.mlir"
    assert boltc.main([str(model_path), "--emit", "graph", "-o", str(ir_path)]) == 0
    assert bolt_opt.main([str(ir_path), "-o", str(tmp_path / "again.mlir")]) == 0
    assert (tmp_path / "again.mlir").read_text() == ir_path.read_text()

    image = np.random.default_rng().standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    assert bolt_run.main([str(ir_path), "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "out.npz")]) == 0
    (expected,) = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).run(None, {"image": image})
    with np.load(tmp_path / "out.npz") as out:
        got = out["result_0"]
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) < 1e-4


def test_emit_to_stdout_with_elided_weights(tmp_path, capsys):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    assert boltc.main([str(model_path), "--emit", "graph", "--elide-weights"]) == 0
    out = capsys.readouterr().out
    assert 'func.func @main(%image: tensor<1x3x32x32xf32> {graph.name = "image"})' in out
    assert "dialect_resources" not in out and "weights elided" in out


def test_input_shape_fixes_a_dynamic_dimension(tmp_path, capsys):
    model_path = dynamic_batch_model(tmp_path / "dyn.onnx")
    assert boltc.main([str(model_path), "--emit", "graph", "--input-shape", "x=3x4"]) == 0
    assert "tensor<3x4xf32>" in capsys.readouterr().out


def test_dynamic_dimension_without_input_shape(tmp_path, capsys):
    model_path = dynamic_batch_model(tmp_path / "dyn.onnx")
    assert error_of(capsys, [str(model_path), "--emit", "graph"]) == (
        "error: input 'x' has dynamic dimension 0 ('N'); fix it with input_shapes={'x': (<N>, 4)} "
        "(boltc: --input-shape x=<N>x4)"
    )


@pytest.mark.parametrize("bad", ["x", "x=", "=3x4", "x=3xfour", "x=-1x4"])
def test_malformed_input_shape(tmp_path, capsys, bad):
    model_path = dynamic_batch_model(tmp_path / "dyn.onnx")
    assert error_of(capsys, [str(model_path), "--emit", "graph", "--input-shape", bad]) == (
        f"error: --input-shape '{bad}' is not NAME=DIMS, as in data=1x3x224x224"
    )


def test_a_failed_import_writes_nothing(tmp_path, capsys):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(example_model().SerializeToString()[:500])
    output = tmp_path / "out.mlir"
    message = error_of(capsys, [str(broken), "--emit", "graph", "-o", str(output)])
    assert message.startswith(f"error: '{broken}' is not a valid ONNX model: truncated or malformed protobuf")
    assert list(tmp_path.iterdir()) == [broken]


def test_compiling_needs_an_output_directory(tmp_path, capsys):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    assert error_of(capsys, [str(model_path)]) == "error: compiling needs an output directory: boltc MODEL.onnx -o DIR"
    (tmp_path / "file").write_text("")
    assert error_of(capsys, [str(model_path), "-o", str(tmp_path / "file")]) == (
        f"error: -o {tmp_path / 'file'} is a file; compiling writes a directory"
    )


# ---------------------------------------------------------------- the op level


EXAMPLE_PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "drop_idempotent_activations.py"


def test_print_pipeline_follows_dtype_and_arch(capsys):
    assert boltc.main(["--print-pipeline"]) == 0
    default = capsys.readouterr().out.strip()
    assert default.startswith("canonicalize,cse,fold-constants,recognize-activations,recognize-attention,fold-batchnorm,"
                              "reparameterize-branches,space-to-depth-stem,")
    assert "fuse-epilogue,merge-qkv,form-persistent-kernels,fuse-elementwise" in default
    assert "convert-layout{layout=NHWC},convert-precision{dtype=f16},lower-graph-to-op,pad-alignment{arch=sm90}" in default
    assert boltc.main(["--print-pipeline", "--dtype", "bf16", "--arch", "sm80"]) == 0
    other = capsys.readouterr().out.strip()
    assert "convert-precision{dtype=bf16}" in other and "pad-alignment{arch=sm80}" in other


def test_bolt_opt_replays_the_printed_pipeline(tmp_path, capsys):
    """boltc --emit op == bolt-opt -p "$(boltc --print-pipeline)" on the imported IR."""
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    assert boltc.main([str(model_path), "--emit", "op", "-o", str(tmp_path / "op.mlir")]) == 0
    assert boltc.main([str(model_path), "--emit", "graph", "-o", str(tmp_path / "graph.mlir")]) == 0
    assert boltc.main(["--print-pipeline"]) == 0
    pipeline = capsys.readouterr().out.strip()
    assert bolt_opt.main([str(tmp_path / "graph.mlir"), "-p", pipeline, "-o", str(tmp_path / "replayed.mlir")]) == 0
    assert (tmp_path / "replayed.mlir").read_text() == (tmp_path / "op.mlir").read_text()
    text = (tmp_path / "op.mlir").read_text()
    assert "graph." not in text.split("{-#")[0].replace('graph.name', '')
    assert "op.conv2d" in text and "#op.epilogue<bias, relu>" in text


def test_emit_op_runs_and_matches_onnxruntime(tmp_path):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    ir_path = tmp_path / "op.mlir"
    assert boltc.main([str(model_path), "--emit", "op", "--dtype", "f32", "-o", str(ir_path)]) == 0
    image = np.random.default_rng().standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    assert bolt_run.main([str(ir_path), "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "out.npz")]) == 0
    (expected,) = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).run(None, {"image": image})
    with np.load(tmp_path / "out.npz") as out:
        got = out["result_0"]
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) < 1e-4


def test_pass_stats_report(tmp_path, capsys):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    assert boltc.main([str(model_path), "--emit", "op", "--pass-stats", "-o", str(tmp_path / "op.mlir")]) == 0
    report = capsys.readouterr().err
    for expected in (
        "fold-batchnorm\n       6 batchnorms folded into conv",
        "transposes left",
        "channels padded",
        "activation relu fused",
        "residual add fused",
    ):
        assert expected in report, report


def test_custom_pipeline_with_a_plugin(tmp_path, capsys):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    argv = [str(model_path), "--emit", "op", "--pass-plugin", str(EXAMPLE_PLUGIN),
            "--pipeline", "drop-idempotent-activations,fold-batchnorm,lower-graph-to-op"]
    assert boltc.main(argv) == 0
    out = capsys.readouterr().out
    assert "op.conv2d" in out and "op.unary relu" in out and "#op.epilogue<bias>" in out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--dtype", "f8"], "error: --dtype must be one of f16, bf16, f32, got 'f8'"),
        (["--arch", "sm70"], "error: --arch must be one of sm80, sm90, got 'sm70'"),
        (["--pipeline", "fold-batchnorms"], "error: unknown pass 'fold-batchnorms'; did you mean 'fold-batchnorm'?"),
    ],
)
def test_bad_op_level_options(tmp_path, capsys, flags, message):
    model_path = tmp_path / "resnet.onnx"
    onnx.save(example_model(), model_path)
    assert error_of(capsys, [str(model_path), "--emit", "op", *flags]) == message
