"""Interpreter equivalence: a pass is correct only if the module computes the same
outputs before and after it, on fresh random inputs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import boltir
from boltir.dtypes import is_floating, numpy_dtype
from boltir.interp import find_entry, input_names, run


def random_inputs(module: ModuleOp, rng: np.random.Generator, given: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Normal floats, small integers (valid as indices for small tables), mixed booleans;
    `given` supplies inputs that need realistic values (an attention mask of 0 and 1)."""
    entry = find_entry(module)
    inputs = dict(given or {})
    for name, arg_type in zip(input_names(entry), entry.function_type.inputs, strict=True):
        if name in inputs:
            continue
        dtype = numpy_dtype(arg_type.element_type)
        shape = tuple(arg_type.get_shape())
        if is_floating(dtype):
            inputs[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            inputs[name] = rng.random(shape) < 0.5
        else:
            inputs[name] = rng.integers(0, 4, shape).astype(dtype)
    return inputs


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    """‖Δ‖/‖ref‖ over the finite values; NaN and infinity must sit in the same places."""
    got64, expected64 = got.astype(np.float64), expected.astype(np.float64)
    special = ~np.isfinite(expected64)
    if not np.array_equal(np.isnan(got64), np.isnan(expected64)) or not np.array_equal(got64[special & ~np.isnan(expected64)], expected64[special & ~np.isnan(expected64)]):
        return float("inf")
    got64, expected64 = np.where(special, 0, got64), np.where(special, 0, expected64)
    scale = np.linalg.norm(expected64)
    return float(np.linalg.norm(got64 - expected64) / (scale if scale else 1.0))


def assert_equivalent(
    before: ModuleOp,
    transform: Callable[[ModuleOp], None] | ModulePass | list[ModulePass],
    rng: np.random.Generator,
    *,
    tolerance: float = 1e-5,
    trials: int = 2,
) -> ModuleOp:
    """Runs `transform` on a clone of `before`, verifies it, and checks ‖Δ‖/‖ref‖ of every
    output on `trials` fresh random inputs. Returns the transformed module."""
    after = before.clone()
    passes = transform if isinstance(transform, list) else [transform]
    for step in passes:
        if isinstance(step, ModulePass):
            step.apply(boltir.make_context(), after)
        else:
            step(after)
        boltir.verify_module(after)
    for _ in range(trials):
        inputs = random_inputs(before, rng)
        expected, got = run(before, inputs), run(after, inputs)
        assert len(got) == len(expected)
        for index, (value, reference) in enumerate(zip(got, expected, strict=True)):
            assert value.shape == reference.shape, f"output {index}: shape {value.shape} vs {reference.shape}"
            error = relative_error(value, reference)
            assert error < tolerance, f"output {index}: ‖Δ‖/‖ref‖ = {error:.3g} ≥ {tolerance}"
    return after
