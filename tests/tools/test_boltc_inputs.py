"""What boltc takes besides ONNX: a graph-level .mlir module (compiled like an imported
model), and a lower-level one (refused, pointing to bolt-opt); and the example script's
output directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boltir.tools import boltc
from tests.support.cli import error_of

ROOT = Path(__file__).resolve().parents[2]



@pytest.fixture(scope="module")
def graph_mlir(small_resnet) -> Path:
    path = small_resnet / "small_resnet.mlir"
    assert boltc.main([str(small_resnet / "small_resnet.onnx"), "--emit", "graph", "-o", str(path)]) == 0
    return path


def test_a_graph_level_module_goes_down_like_an_imported_model(graph_mlir, small_resnet, tmp_path):
    from_mlir, from_onnx = tmp_path / "a.mlir", tmp_path / "b.mlir"
    assert boltc.main([str(graph_mlir), "--emit", "op", "-o", str(from_mlir)]) == 0
    assert boltc.main([str(small_resnet / "small_resnet.onnx"), "--emit", "op", "-o", str(from_onnx)]) == 0
    assert from_mlir.read_text() == from_onnx.read_text()


def test_a_graph_level_module_compiles(graph_mlir, tmp_path, monkeypatch, capsys):
    from xdsl.dialects.builtin import ModuleOp

    from boltir import compiler

    seen = []

    def fake_compile(model, output, **options):
        seen.append(model)
        raise compiler.BoltError("stop here")

    monkeypatch.setattr(compiler, "compile", fake_compile)
    assert error_of(capsys, [str(graph_mlir), "-o", str(tmp_path / "out")]) == "error: stop here"
    assert isinstance(seen[0], ModuleOp)


def test_the_cutlass_level_from_a_mlir_file(graph_mlir, capsys):
    assert boltc.main([str(graph_mlir), "--emit", "cutlass", "--elide-weights", "--arch", "sm80"]) == 0
    text = capsys.readouterr().out  # 16-channel convs stay op.conv2d with our few-channel kernel's choice
    assert text.count("= cutlass.conv2d_fprop ") + text.count("= op.conv2d ") == 6


def test_a_lower_level_module_is_refused_with_what_to_use(graph_mlir, tmp_path, capsys):
    op_level = tmp_path / "op.mlir"
    assert boltc.main([str(graph_mlir), "--emit", "op", "-o", str(op_level)]) == 0
    assert error_of(capsys, [str(op_level), "-o", str(tmp_path / "out")]) == (
        f"error: {op_level} is a module at the op level; boltc compiles graph-level modules (boltc --emit graph writes "
        "one); run passes on this one with bolt-opt")


def test_a_mlir_file_under_another_name_is_read_as_mlir(graph_mlir, tmp_path, capsys):
    renamed = tmp_path / "model.txt"
    renamed.write_text(graph_mlir.read_text())
    assert boltc.main([str(renamed), "--emit", "op", "--elide-weights"]) == 0
    assert "op.conv2d" in capsys.readouterr().out


def test_input_shapes_are_for_onnx(graph_mlir, capsys):
    assert error_of(capsys, [str(graph_mlir), "--emit", "op", "--input-shape", "image=1x3x32x32"]) == (
        "error: --input-shape fixes an ONNX model's inputs; a .mlir module's shapes are in its @main")


def test_the_example_script_writes_to_a_temporary_directory_by_default(tmp_path):
    before = sorted(p.name for p in (ROOT / "examples/small_resnet").iterdir())
    result = subprocess.run([sys.executable, str(ROOT / "examples/small_resnet/make_model.py")], check=True,
                            capture_output=True, text=True, cwd=tmp_path)
    written = Path(result.stdout.split()[1]).parent
    assert (written / "small_resnet.onnx").is_file() and (written / "input.npz").is_file()
    assert not written.is_relative_to(ROOT)
    assert sorted(p.name for p in (ROOT / "examples/small_resnet").iterdir()) == before
    shutil.rmtree(written)
