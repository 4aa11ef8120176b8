"""fold-constants: ops on constants evaluated at compile time; the module computes the
same outputs on fresh random inputs."""

from __future__ import annotations

import re

import numpy as np
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp

import boltir
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.passes import statistics
from boltir.passes.fold_constants import FoldConstantsPass
from boltir.weights import constant_array
from tests.passes.equivalence import assert_equivalent

PASS = FoldConstantsPass()


def op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("graph.") and op.name != "graph.constant"]


def constants(module: ModuleOp) -> list[graph.ConstantOp]:
    return [op for op in module.walk() if isinstance(op, graph.ConstantOp)]


def test_chain_folds_to_one_constant(rng):
    """transpose -> reshape -> mul -> add of weights, then a gemm on the input."""
    b = ModelBuilder()
    x = b.input("x", (3, 8))
    w = b.constant("fc.weight", rng.standard_normal((4, 8)).astype(np.float32))
    wt = b.insert(graph.TransposeOp(w, (1, 0))).output
    flat = b.insert(graph.ReshapeOp(wt, (8, 4))).output
    scale = b.constant("scale", rng.standard_normal((4,)).astype(np.float32))
    scaled = b.insert(graph.MulOp(flat, scale)).output
    shifted = b.insert(graph.AddOp(scaled, b.constant("one", np.ones((1, 4), np.float32)))).output
    module = b.finish([b.insert(graph.MatMulOp(x, shifted)).output])

    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert op_names(after) == ["graph.matmul"]
    (folded,) = constants(after)
    assert isinstance(folded.value, DenseResourceAttr)  # 32 elements: a weight, named after its source
    # The name says where it came from (`_N` when an earlier test stored another fc.weight).
    assert re.fullmatch(r"fc\.weight(_\d+)?\.transpose\.reshape\.mul\.add", folded.value.resource_handle.data)
    assert collected.get(PASS.name, "ops folded") == 4
    assert collected.get(PASS.name, "unused constants removed") == 0  # folding used them up


def test_shape_arithmetic_and_multiple_results(rng):
    """Integer ops, a split (two results) and a where on an i1 condition."""
    b = ModelBuilder()
    x = b.input("x", (2, 5))
    table = b.constant("table", np.arange(12, dtype=np.int64).reshape(3, 4))
    indices = b.constant("indices", np.array([2, 0], np.int64))
    rows = b.insert(graph.GatherOp(table, indices)).output  # 2x4 i64
    low, high = b.insert(graph.SplitOp(rows, (1, 3), axis=1)).results  # 2x1, 2x3
    wide = b.insert(graph.ConcatOp([high, low, low], axis=1)).output  # 2x5
    as_float = b.insert(graph.CastOp(wide, x.type.element_type)).output
    odd = b.insert(graph.EqualOp(b.insert(graph.CastOp(as_float, wide.type.element_type)).output, wide)).output
    picked = b.insert(graph.WhereOp(odd, as_float, b.constant("zero", np.zeros((1,), np.float32)))).output
    module = b.finish([b.insert(graph.AddOp(x, picked)).output])

    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert op_names(after) == ["graph.add"]
    (folded,) = constants(after)
    expected = np.array([[9, 10, 11, 8, 8], [1, 2, 3, 0, 0]], np.float32)
    np.testing.assert_array_equal(constant_array(folded.value), expected)
    assert collected.get(PASS.name, "ops folded") == 7


def test_comparisons_and_logical_ops_fold(rng):
    """An attention-mask computation on constants (as HF BERT exports it: GreaterOrEqual
    of two constants feeding Where) folds into one mask constant."""
    b = ModelBuilder()
    x = b.input("x", (4, 4))
    rows = b.constant("rows", np.arange(4, dtype=np.int64).reshape(4, 1))
    cols = b.constant("cols", np.arange(4, dtype=np.int64))
    causal = b.insert(graph.GreaterOrEqualOp(rows, cols)).output
    border = b.insert(graph.OrOp(
        b.insert(graph.LessOp(cols, b.constant("one", np.array(1, np.int64)))).output,
        b.insert(graph.GreaterOp(cols, b.constant("two", np.array(2, np.int64)))).output,
    )).output
    inner = b.insert(graph.LessOrEqualOp(rows, b.constant("three", np.array(3, np.int64)))).output
    mask = b.insert(graph.XorOp(b.insert(graph.AndOp(causal, b.insert(graph.NotOp(border)).output)).output, inner)).output
    minimum = b.constant("minimum", np.array(-1e4, np.float32))
    module = b.finish([b.insert(graph.AddOp(x, b.insert(graph.WhereOp(mask, b.constant("zero", np.zeros((1,), np.float32)), minimum)).output)).output])

    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert op_names(after) == ["graph.add"]
    (folded,) = constants(after)
    i, j = np.arange(4).reshape(4, 1), np.arange(4)
    expected = np.where((i >= j) & ~((j < 1) | (j > 2)) ^ (i <= 3), 0.0, -1e4).astype(np.float32)
    np.testing.assert_array_equal(constant_array(folded.value), expected)
    assert collected.get(PASS.name, "ops folded") == 9  # four comparisons, and, or, xor, not and where


def test_nothing_to_fold(rng):
    b = ModelBuilder()
    x = b.input("x", (2, 3))
    module = b.finish([b.insert(graph.AddOp(x, b.constant("bias", np.ones(3, np.float32)))).output])
    with statistics.collecting() as collected:
        after = assert_equivalent(module, PASS, rng)
    assert op_names(after) == ["graph.add"] and len(constants(after)) == 1
    assert collected.counters.get(PASS.name) is None


def test_failing_evaluation_is_left_for_run_time(rng):
    """An integer to a negative power fails in numpy: the op stays, with a note."""
    b = ModelBuilder()
    x = b.input("x", (2,), np.int64)
    power = b.insert(graph.PowOp(b.constant("base", np.array([2, 3], np.int64)), b.constant("exp", np.array([-1, 2], np.int64))))
    module = b.finish([b.insert(graph.AddOp(x, power.output)).output])
    with statistics.collecting() as collected:
        PASS.apply(boltir.make_context(), module)
    assert op_names(module) == ["graph.pow", "graph.add"]
    (note,) = collected.notes[PASS.name]
    assert note.startswith("left graph.pow alone: evaluating it failed")


def test_elided_weights_are_left_alone():
    module = boltir.parse_module(
        """
        func.func @main() -> tensor<3x2xf32> {
          %w = graph.constant dense_resource<w> : tensor<2x3xf32>
          %t = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
          func.return %t : tensor<3x2xf32>
        }
        """,
        "elided.mlir",
    )
    with statistics.collecting() as collected:
        PASS.apply(boltir.make_context(), module)
    assert op_names(module) == ["graph.transpose"]
    (note,) = collected.notes[PASS.name]
    assert note.startswith("left graph.transpose at elided.mlir:4:11 alone: weight 'w.elided' has no data")
