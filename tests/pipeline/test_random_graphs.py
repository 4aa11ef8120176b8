"""200 random CNNs through the whole default pipeline up to the op level (never nvcc):
every one verifies and computes what the graph it came from computes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boltir
from boltir.dialects import graph
from boltir.pipelines import available_passes, default_pipeline, parse_pipeline_spec, run_passes
from tests.passes.equivalence import random_inputs, relative_error
from tests.pipeline.random_graphs import RandomCnn, graph_specs


def pipeline(dtype: str):
    return parse_pipeline_spec(default_pipeline(dtype=dtype), available_passes())




def check(spec, seed: int, dtype: str, tolerance: float) -> None:
    rng = np.random.default_rng(seed)
    before = RandomCnn(spec, rng).module
    boltir.verify_module(before)
    after = before.clone()
    run_passes(after, pipeline(dtype), boltir.make_context())
    assert not any(isinstance(op, graph.GraphOp) for op in after.walk()), "graph ops left after the pipeline"
    inputs = random_inputs(before, rng)
    (expected,), (got,) = boltir.interp.run(before, inputs), boltir.interp.run(after, inputs)
    assert got.shape == expected.shape
    error = relative_error(got.astype(np.float32), expected)
    assert error < tolerance, f"‖Δ‖/‖ref‖ = {error:.3g} (spec {spec})"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=graph_specs(), seed=st.integers(0, 2**32 - 1))
def test_random_graphs_through_the_f32_pipeline(spec, seed: int):
    check(spec, seed, "f32", 1e-4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=graph_specs(), seed=st.integers(0, 2**32 - 1))
def test_random_graphs_through_the_f16_pipeline(spec, seed: int):
    check(spec, seed, "f16", 2e-2)
