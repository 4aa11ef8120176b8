"""Every user-facing error of bolt-opt and bolt-run: one line naming the problem (and the
file, line and column where there is one), exit status 1, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from boltir.tools import bolt_opt, bolt_run

GOOD = textwrap.dedent(
    """\
    func.func @main(%x: tensor<2x4xf32> {graph.name = "x:0"}) -> (tensor<2x4xf32> {graph.name = "y"}) {
      %0 = graph.relu %x : tensor<2x4xf32>
      func.return %0 : tensor<2x4xf32>
    }
    """
)


@pytest.fixture
def good_ir(tmp_path: Path) -> Path:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return path


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text))
    return path


def opt_error(capsys, *argv: str) -> str:
    assert bolt_opt.main([str(a) for a in argv]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def run_error(capsys, *argv: str) -> str:
    assert bolt_run.main([str(a) for a in argv]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


# ------------------------------------------------------------------------ bolt-opt


def test_parse_error_names_file_line_column(tmp_path, capsys):
    path = write(tmp_path, "bad.mlir", GOOD.replace("graph.relu %x", "graph.relu %x,"))
    assert opt_error(capsys, path) == f"{path}:2:21: error: Expected ':'"


def test_verifier_error_names_the_op_and_its_location(tmp_path, capsys):
    text = """\
    func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
      %0 = graph.conv2d %x, %w {group = 3 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
      func.return %0 : tensor<1x6x6x6xf32>
    }
    """
    path = write(tmp_path, "bad.mlir", text)
    assert opt_error(capsys, path) == (
        f"{path}:2:3: error: 'graph.conv2d' op group 3 must divide input channels 4 and output channels 6"
    )


def test_wrong_result_type_says_what_was_inferred(tmp_path, capsys):
    path = write(tmp_path, "bad.mlir", GOOD.replace("graph.relu %x : tensor<2x4xf32>", '"graph.add"(%x, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x5xf32>').replace("func.return %0 : tensor<2x4xf32>", "func.return %x : tensor<2x4xf32>"))
    message = opt_error(capsys, path)
    assert message.startswith(f"{path}:2:3: error: 'graph.add' op result type tensor<2x5xf32> does not match tensor<2x4xf32>")


def test_unknown_op(tmp_path, capsys):
    path = write(tmp_path, "bad.mlir", GOOD.replace("graph.relu", "graph.rellu"))
    assert opt_error(capsys, path) == f"{path}:2:20: error: Operation graph.rellu is not registered"


def test_undefined_value(tmp_path, capsys):
    path = write(tmp_path, "bad.mlir", GOOD.replace("graph.relu %x", "graph.relu %y"))
    assert opt_error(capsys, path) == f"{path}:5:1: error: values used but not defined: [%y]"


def test_unknown_pass_suggests_a_close_name(good_ir, capsys):
    assert opt_error(capsys, good_ir, "-p", "canonicalise") == (
        "error: unknown pass 'canonicalise'; did you mean 'canonicalize'?"
    )


def test_bad_pass_argument(good_ir, capsys):
    message = opt_error(capsys, good_ir, "-p", "canonicalize{level=3}")
    assert message.startswith("error: bad argument for pass 'canonicalize': ") and '"level"' in message


def test_malformed_pipeline(good_ir, capsys):
    message = opt_error(capsys, good_ir, "-p", "canonicalize{")
    assert message.startswith("error: bad pass pipeline: ")


def test_missing_input_file(tmp_path, capsys):
    missing = tmp_path / "missing.mlir"
    assert opt_error(capsys, missing) == f"error: cannot read '{missing}': No such file or directory"


def test_directory_as_input(tmp_path, capsys):
    directory = tmp_path / "dir.mlir"
    directory.mkdir()
    assert opt_error(capsys, directory) == f"error: cannot read '{directory}': Is a directory"


def test_binary_input(tmp_path, capsys):
    path = write(tmp_path, "bin.mlir", b"\xff\xfe\x00garbage")
    assert opt_error(capsys, path) == f"{path}: error: input is not UTF-8 text (byte 0)"


def test_missing_plugin(good_ir, tmp_path, capsys):
    plugin = tmp_path / "nope.py"
    assert opt_error(capsys, good_ir, "--pass-plugin", plugin) == (
        f"error: cannot read pass plugin '{plugin}': no such file"
    )


def test_plugin_that_fails_to_import_names_the_line(good_ir, tmp_path, capsys):
    plugin = write(tmp_path, "broken.py", "import os\nimport not_a_module_anywhere\n")
    assert opt_error(capsys, good_ir, "--pass-plugin", plugin) == (
        f"{plugin}:2: error: pass plugin failed to import: ModuleNotFoundError: "
        "No module named 'not_a_module_anywhere'"
    )


def test_plugin_with_a_syntax_error(good_ir, tmp_path, capsys):
    plugin = write(tmp_path, "syntax.py", "def f(:\n    pass\n")
    message = opt_error(capsys, good_ir, "--pass-plugin", plugin)
    assert message.startswith(f"{plugin}:1:") and "SyntaxError" in message


def test_plugin_without_passes(good_ir, tmp_path, capsys):
    plugin = write(tmp_path, "empty.py", "X = 1\n")
    assert opt_error(capsys, good_ir, "--pass-plugin", plugin) == (
        f"{plugin}: error: pass plugin defines no ModulePass subclass with a name"
    )


CRASHING_PLUGIN = """\
from dataclasses import dataclass
from xdsl.passes import ModulePass

@dataclass(frozen=True)
class Crash(ModulePass):
    name = "crash"

    def apply(self, ctx, op):
        raise KeyError("boom")
"""

BREAKING_PLUGIN = """\
from dataclasses import dataclass
from xdsl.dialects.builtin import TensorType, f32
from xdsl.passes import ModulePass
from boltir.dialects import graph

@dataclass(frozen=True)
class Break(ModulePass):
    '''Gives every relu a wrong result type, so the verifier must catch it.'''
    name = "break-relu"

    def apply(self, ctx, op):
        for relu in [o for o in op.walk() if isinstance(o, graph.ReluOp)]:
            bad = graph.SigmoidOp.create(operands=[relu.input], result_types=[TensorType(f32, (3, 3))])
            bad.location = relu.location
            relu.parent.insert_op_before(bad, relu)
"""


def test_crashing_pass_is_reported_without_a_traceback(good_ir, tmp_path, capsys):
    plugin = write(tmp_path, "crash.py", CRASHING_PLUGIN)
    assert opt_error(capsys, good_ir, "--pass-plugin", plugin, "-p", "crash") == (
        "error: pass 'crash' crashed: KeyError: 'boom' (--debug shows the traceback)"
    )


def test_pass_that_breaks_the_ir_is_caught_by_the_verifier(good_ir, tmp_path, capsys):
    plugin = write(tmp_path, "break.py", BREAKING_PLUGIN)
    message = opt_error(capsys, good_ir, "--pass-plugin", plugin, "-p", "break-relu")
    assert message == (
        f"{good_ir}:2:3: error: after pass 'break-relu': 'graph.sigmoid' op result 'output' at position 0 "
        "does not verify: attribute tensor<2x4xf32> expected from variable 'T', but got tensor<3x3xf32>"
    )


def test_plugin_pass_shadowing_an_existing_name(good_ir, tmp_path, capsys):
    plugin = write(tmp_path, "shadow.py", CRASHING_PLUGIN.replace('name = "crash"', 'name = "canonicalize"'))
    message = opt_error(capsys, good_ir, "--pass-plugin", plugin)
    assert message == f"error: pass plugin '{plugin}' defines pass 'canonicalize', which is already registered"


def test_weight_blob_of_the_wrong_size(tmp_path, capsys):
    text = """\
    func.func @main() -> tensor<2x2xf32> {
      %0 = graph.constant dense_resource<w> : tensor<2x2xf32>
      func.return %0 : tensor<2x2xf32>
    }
    {-#
      dialect_resources: {
        builtin: {
          w: "0x040000000000803F"
        }
      }
    #-}
    """
    path = write(tmp_path, "blob.mlir", text)
    assert opt_error(capsys, path) == f"{path}:2:3: error: weight 'w': its blob holds 4 bytes but tensor<2x2xf32> needs 16"


def test_debug_shows_the_traceback(tmp_path):
    path = write(tmp_path, "bad.mlir", GOOD.replace("graph.relu", "graph.rellu"))
    plain = subprocess.run([sys.executable, "-m", "boltir.tools.bolt_opt", str(path)], capture_output=True, text=True)
    assert plain.returncode == 1 and "Traceback" not in plain.stderr
    debug = subprocess.run(
        [sys.executable, "-m", "boltir.tools.bolt_opt", str(path), "--debug"], capture_output=True, text=True
    )
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1] == plain.stderr.strip()


# ------------------------------------------------------------------------ bolt-run


def test_run_missing_input(good_ir, capsys):
    assert run_error(capsys, good_ir) == "error: missing input 'x:0' (arg0), a 2x4 f32 tensor"


def test_run_wrong_shape(good_ir, tmp_path, capsys):
    np.savez(tmp_path / "in.npz", **{"x:0": np.ones((2, 5), np.float32)})
    assert run_error(capsys, good_ir, "--inputs", tmp_path / "in.npz") == (
        "error: input 'x:0' has shape 2x5, expected 2x4"
    )


def test_run_wrong_dtype(good_ir, tmp_path, capsys):
    np.savez(tmp_path / "in.npz", arg0=np.ones((2, 4), np.float64))
    assert run_error(capsys, good_ir, "--inputs", tmp_path / "in.npz") == (
        "error: input 'x:0' has dtype float64, expected float32 (f32)"
    )


def test_run_unknown_input_name(good_ir, tmp_path, capsys):
    np.savez(tmp_path / "in.npz", **{"x:0": np.ones((2, 4), np.float32), "z": np.ones(1)})
    assert run_error(capsys, good_ir, "--inputs", tmp_path / "in.npz") == (
        "error: unknown input 'z'; the inputs are 'x:0'"
    )


def test_run_inputs_not_an_archive(good_ir, tmp_path, capsys):
    path = write(tmp_path, "in.npz", "not numpy")
    assert run_error(capsys, good_ir, "--inputs", path) == (
        f"error: cannot read inputs '{path}': not a numpy .npz archive (numpy.savez writes one)"
    )


def test_run_missing_inputs_file(good_ir, tmp_path, capsys):
    path = tmp_path / "missing.npz"
    assert run_error(capsys, good_ir, "--inputs", path) == f"error: cannot read inputs '{path}': no such file"


def test_run_parse_error(tmp_path, capsys):
    path = write(tmp_path, "bad.mlir", GOOD.replace("tensor<2x4xf32> {graph", "tensor<2x4xf32 {graph"))
    message = run_error(capsys, path)
    assert message.startswith(f"{path}:1:")


def test_run_without_main(tmp_path, capsys):
    path = write(tmp_path, "nomain.mlir", GOOD.replace("@main", "@forward"))
    assert run_error(capsys, path) == "error: the module has no function @main to run"


def test_run_elided_weights(tmp_path, capsys):
    text = """\
    func.func @main() -> tensor<4x8xf32> {
      %0 = graph.constant dense_resource<fc.weight> : tensor<4x8xf32>
      func.return %0 : tensor<4x8xf32>
    }
    """
    path = write(tmp_path, "elided.mlir", text)
    assert run_error(capsys, path) == (
        "error: weight 'fc.weight.elided' has no data: the IR was printed without its "
        "dialect_resources section (for example with --elide-weights)"
    )


def test_bad_attribute_in_custom_form_names_the_op_location(tmp_path, capsys):
    text = """\
    func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
      %0 = graph.transpose %x {perm = array<f64: 1.0, 0.0>} : tensor<2x3xf32> -> tensor<3x2xf32>
      func.return %0 : tensor<3x2xf32>
    }
    """
    path = write(tmp_path, "attr.mlir", text)
    assert opt_error(capsys, path) == f"{path}:2:3: error: Expected attribute i64 but got f64"


def test_weight_blob_that_is_not_hex(tmp_path, capsys):
    text = """\
    func.func @main() -> tensor<2xf32> {
      %0 = graph.constant dense_resource<w> : tensor<2xf32>
      func.return %0 : tensor<2xf32>
    }
    {-#
      dialect_resources: {
        builtin: {
          w: "0x04000000zz00803F00000040"
        }
      }
    #-}
    """
    path = write(tmp_path, "blob.mlir", text)
    message = opt_error(capsys, path)
    assert message.startswith(f"{path}:2:3: error: weight 'w': its blob is not hexadecimal")
