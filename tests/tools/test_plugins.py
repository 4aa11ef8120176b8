"""Pass plugins: a file given to --pass-plugin, and installed packages through the
`boltir.passes` entry-point group; the bundled example pass keeps the model's function."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.interp import run
from boltir.plugins import load_pass_plugin
from boltir.tools import bolt_opt

EXAMPLE_PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "drop_idempotent_activations.py"

rng = np.random.default_rng()


def activation_chain_module():
    b = ModelBuilder()
    x = b.input("x", (3, 16))
    r1 = b.insert(graph.ReluOp(x)).output
    r2 = b.insert(graph.ReluOp(r1)).output
    c1 = b.insert(graph.ClipOp(r2, 0.0, 0.5)).output
    c2 = b.insert(graph.ClipOp(c1, 0.0, 0.5)).output
    c3 = b.insert(graph.ClipOp(c2, 0.1, 0.5)).output
    return b.finish([r2, c3], ["relu", "clipped"])


def test_example_plugin_keeps_the_function_and_drops_the_repeats():
    (pass_type,) = load_pass_plugin(EXAMPLE_PLUGIN)
    module = activation_chain_module()
    inputs = {"x": rng.standard_normal((3, 16)).astype(np.float32)}
    before = run(module, inputs)
    pass_type().apply(boltir.make_context(), module)
    boltir.verify_module(module)
    after = run(module, inputs)
    for expected, got in zip(before, after, strict=True):
        np.testing.assert_array_equal(got, expected)
    kinds = [type(op).__name__ for op in module.walk() if isinstance(op, graph.GraphOp)]
    assert kinds == ["ReluOp", "ClipOp", "ClipOp"]


def test_entry_point_group_registers_installed_passes(tmp_path, monkeypatch, capsys):
    package = tmp_path / "boltir_extra_passes"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """\
            from dataclasses import dataclass
            from xdsl.passes import ModulePass
            from boltir.dialects import graph

            @dataclass(frozen=True)
            class TagRelus(ModulePass):
                name = "tag-relus"

                def apply(self, ctx, op):
                    for relu in op.walk():
                        if isinstance(relu, graph.ReluOp):
                            relu.attributes["tagged"] = __import__("xdsl.dialects.builtin").dialects.builtin.UnitAttr()
            """
        )
    )
    dist_info = tmp_path / "boltir_extra_passes-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: boltir-extra-passes\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[boltir.passes]\ntag-relus = boltir_extra_passes:TagRelus\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    source = tmp_path / "in.mlir"
    source.write_text(
        'func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
        "  %0 = graph.relu %x : tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n"
    )
    assert bolt_opt.main([str(source), "-p", "tag-relus"]) == 0
    assert "graph.relu %x {tagged} : tensor<4xf32>" in capsys.readouterr().out


def test_broken_entry_point_is_one_clear_error(tmp_path, monkeypatch, capsys):
    dist_info = tmp_path / "broken_passes-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-passes\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text("[boltir.passes]\nbroken = no_such_package_here:Pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "in.mlir"
    source.write_text("func.func @main() {\n  func.return\n}\n")
    assert bolt_opt.main([str(source)]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: pass entry point 'broken = no_such_package_here:Pass' failed to load: "
        "ModuleNotFoundError: No module named 'no_such_package_here'"
    )
