"""`boltir.interp.wide_arithmetic`: the interpreter computing in f64 while rounding where it
always does, the other half of the criterion's noise measurement (boltir/accuracy.py)."""

from __future__ import annotations

import numpy as np

from boltir.accuracy import relative_l2
from boltir.builder import ModelBuilder
from boltir.dialects import graph
from boltir.interp import run, wide_arithmetic
from boltir.interp.graph import compute_dtype


def test_wide_arithmetic_computes_in_f64_inside_only():
    assert compute_dtype(np.dtype(np.float16)) == np.float32
    with wide_arithmetic():
        assert compute_dtype(np.dtype(np.float16)) == np.float64
        assert compute_dtype(np.dtype(np.float32)) == np.float64
        assert compute_dtype(np.dtype(np.int32)) == np.int32
    assert compute_dtype(np.dtype(np.float16)) == np.float32


def test_wide_arithmetic_restores_after_an_error():
    try:
        with wide_arithmetic():
            raise RuntimeError("inside")
    except RuntimeError:
        pass
    assert compute_dtype(np.dtype(np.float16)) == np.float32


def test_an_f16_matmul_moves_by_rounding_flips_only():
    """The same f16 GEMM in f32 and in f64 arithmetic: each result rounded to f16 once,
    so they differ on few elements, by rounding steps (more than one only where a sum
    nearly cancels)."""
    rng = np.random.default_rng(0)
    builder = ModelBuilder()
    a = builder.input("a", (64, 512), np.float16)
    b = builder.constant("b", rng.standard_normal((512, 64)).astype(np.float16))
    module = builder.finish([builder.insert(graph.MatMulOp(a, b)).output])
    x = rng.standard_normal((64, 512)).astype(np.float16)
    (narrow,) = run(module, {"a": x})
    with wide_arithmetic():
        (wide,) = run(module, {"a": x})
    assert narrow.dtype == wide.dtype == np.float16
    differ = np.count_nonzero(narrow != wide)
    assert 0 < differ < narrow.size // 10
    assert relative_l2(narrow, wide) < 1e-3
