"""--keep-f32 end to end: the ONNX importer names ops after their nodes, `boltc --emit op`
keeps the named ops in f32 with casts around them, `--emit cutlass` gives them f32
kernels, `boltir.compile(keep_f32=...)` refuses an op no kernel computes in f32, and every
bad input is one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import ClassVar

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import NameLoc

import boltir
from boltir import compiler
from boltir.accuracy import relative_l2
from boltir.dialects import op as ops
from boltir.dtypes import element_type_name
from boltir.frontends.onnx import import_model
from boltir.interp import run
from boltir.tools import boltc
from tests.support.cli import error_of

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_resnet" / "make_model.py"


@pytest.fixture(scope="module")
def small_resnet_onnx(tmp_path_factory) -> Path:
    spec = importlib.util.spec_from_file_location("make_small_resnet", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path_factory.mktemp("keep_f32") / "small_resnet.onnx"
    onnx.save(module.build(), path)
    return path


def name_of(op) -> str | None:
    return op.location.desc.data if isinstance(op.location, NameLoc) else None


def element_types(op) -> set[str]:
    return {element_type_name(v.type.element_type) for v in (*op.operands, *op.results)}


# -------------------------------------------------------------------- op names


def test_the_importer_names_ops_after_their_nodes():
    """Each op made from a node carries the node's name (its first output's when it has
    none); weights carry none."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="/block/Relu"),
         helper.make_node("Gemm", ["r", "w"], ["y"], transB=1)],
        "names",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [onnx.numpy_helper.from_array(np.ones((3, 4), np.float32), "w")],
    )
    module = import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    names = {(op.name, name_of(op)) for op in module.walk() if op.name.startswith("graph.")}
    assert names == {("graph.relu", "/block/Relu"), ("graph.gemm", "y"), ("graph.constant", None)}


# ------------------------------------------------------------------ boltc --emit


def test_emit_op_keeps_the_named_conv_in_f32(small_resnet_onnx, tmp_path):
    out = tmp_path / "op.mlir"
    assert boltc.main([str(small_resnet_onnx), "--emit", "op", "--keep-f32", "Conv_5", "-o", str(out)]) == 0
    module = boltir.parse_module(out.read_text())
    convs = [op for op in module.walk() if isinstance(op, ops.Conv2dOp)]
    kept = [op for op in convs if element_types(op) == {"f32"}]
    assert len(kept) == 1 and tuple(kept[0].filter.type.get_shape()) == (16, 3, 3, 16)  # Conv_5: layer1.0's
    assert all(element_types(op) == {"f16"} for op in convs if op is not kept[0])
    # casts around it: an f16 -> f32 conversion feeds it, and its result goes back to f16
    producer = kept[0].input.owner
    assert isinstance(producer, ops.ElementwiseOp) and element_types(producer) == {"f16", "f32"}
    (use,) = kept[0].output.uses
    assert element_type_name(use.operation.results[0].type.element_type) == "f16"
    # and it computes what the model computes, up to f16's rounding
    image = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (reference,) = run(import_model(small_resnet_onnx), {"image": image})
    (got,) = run(module, {"image": image})
    assert relative_l2(got, reference) < 1e-2


def test_emit_cutlass_gives_the_kept_ops_f32_kernels(small_resnet_onnx, capsys):
    assert boltc.main([str(small_resnet_onnx), "--emit", "cutlass", "--elide-weights", "--keep-f32", "Conv_5,fc"]) == 0
    module = boltir.parse_module(capsys.readouterr().out, verify=False)
    instances = [op for op in module.walk() if op.name.startswith("cutlass.")]
    f32 = [op for op in instances if element_types(op) == {"f32"}]
    assert {op.name for op in f32} == {"cutlass.conv2d_fprop", "cutlass.gemm"}
    assert len(instances) > len(f32)


def test_print_pipeline_shows_the_kept_names(capsys):
    assert boltc.main(["--print-pipeline", "--keep-f32", "/head/Conv,/head/Sigmoid", "--keep-f32", "x:0"]) == 0
    assert 'convert-precision{dtype=f16 keep_f32="/head/Conv","/head/Sigmoid","x:0"}' in capsys.readouterr().out


# --------------------------------------------------------------------- bad input


def test_unknown_op_name_lists_near_matches(small_resnet_onnx, capsys):
    line = error_of(capsys, [str(small_resnet_onnx), "--emit", "op", "--keep-f32", "conv_5"])
    assert line.startswith("error: keep-f32: no op named 'conv_5' is left when precision is chosen")
    assert line.endswith("near matches: 'Conv_5', 'Conv_15', 'Conv_8'")


def test_a_folded_op_is_named_as_such(small_resnet_onnx, capsys):
    """fold-batchnorm folds each BatchNormalization into its conv: the name is gone."""
    line = error_of(capsys, [str(small_resnet_onnx), "-o", "unused", "--keep-f32", "BatchNormalization_2"])
    assert "no op named 'BatchNormalization_2' is left when precision is chosen (it is not in the model, " \
           "or an earlier pass folded it into another op, as a BatchNormalization into its conv)" in line


@pytest.mark.parametrize("bad", [",Conv_5", "Conv_5,", "Conv_5,,fc"])
def test_an_empty_op_name(small_resnet_onnx, capsys, bad):
    line = error_of(capsys, [str(small_resnet_onnx), "--emit", "op", "--keep-f32", bad])
    assert line == f"error: --keep-f32 '{bad}' has an empty op name; give OPNAMES as name1,name2"


def test_keep_f32_with_a_pipeline_of_ones_own(small_resnet_onnx, capsys):
    line = error_of(capsys, [str(small_resnet_onnx), "--emit", "op", "--pipeline", "canonicalize", "--keep-f32", "Conv_5"])
    assert line == ("error: --keep-f32 adds to the default pipeline; with --pipeline, "
                    "give convert-precision{keep_f32=...} in it")
    with pytest.raises(boltir.BoltError, match="keep_f32 adds to the default pipeline"):
        compiler.lower(small_resnet_onnx, arch="sm90", dtype="f16", pipeline="canonicalize", keep_f32=("Conv_5",))


class NoF32Convs:
    """A kernel generator for op.conv2d that refuses f32, standing in for a family
    without f32 kernels (the fused attention kernel is one)."""

    FAMILIES: ClassVar[dict] = {ops.Conv2dOp: "conv"}

    @staticmethod
    def supports(op) -> bool:
        return NoF32Convs.unsupported_reason(op) is None

    @staticmethod
    def unsupported_reason(op) -> str | None:
        return "this family takes f16 or bf16" if "f32" in element_types(op) else None


def test_an_op_no_kernel_computes_in_f32(small_resnet_onnx, monkeypatch):
    others = tuple(g for g in compiler.GENERATORS if ops.Conv2dOp not in g.FAMILIES)
    monkeypatch.setattr(compiler, "GENERATORS", (NoF32Convs, *others))
    with pytest.raises(boltir.BoltError) as caught:
        compiler.lower_model(small_resnet_onnx, arch="sm90", dtype="f16", keep_f32=("Conv_5",))
    assert str(caught.value) == "error: keep-f32: op 'Conv_5' (op.conv2d) cannot run in f32: this family takes f16 or bf16"
    # the other convs, in f16, are the family's as before
    compiler.lower_model(small_resnet_onnx, arch="sm90", dtype="f16", keep_f32=("Relu_7",))
