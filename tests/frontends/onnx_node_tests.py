"""The ONNX backend node tests through boltir's importer and interpreter.

The denominator is every non-expanded node test whose ops are all ones the importer
supports (`CONVERTERS`). A case passes when every output matches the expected one in
shape, dtype and value (the case's own rtol/atol; NaN where NaN is expected).

boltir compiles static shapes: inputs that only feed a static-parameter slot (a Reshape's
shape, Slice's starts, Resize's scales... `STATIC_INPUTS`) are frozen into initializers
with the case's own values before import, as a model exported for deployment has them.

    python -m tests.frontends.onnx_node_tests            # the table of results
    python -m tests.frontends.onnx_node_tests --update   # rewrite the expected failures
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from boltir.diagnostics import BoltError
from boltir.frontends.onnx import import_model
from boltir.frontends.onnx_converters import CONVERTERS, STATIC_INPUTS
from boltir.interp import run

EXPECTED_FAILURES = Path(__file__).with_name("onnx_node_expected_failures.txt")


@dataclass
class Outcome:
    name: str
    failure: str | None  # None when the case passes


def load_cases():
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_model_tests(kind="node")


def in_scope(case) -> bool:
    return "expanded" not in case.name and {n.op_type for n in case.model.graph.node} <= set(CONVERTERS)


def as_array(value) -> np.ndarray:
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def freeze_static_inputs(model: onnx.ModelProto, inputs: list) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Turns the graph inputs that feed static-parameter slots into initializers."""
    static = {
        node.input[i]
        for node in model.graph.node
        for i in STATIC_INPUTS.get(node.op_type, ())
        if i < len(node.input) and node.input[i]
    }
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    initialized = {init.name for init in frozen.graph.initializer}
    names = [i.name for i in frozen.graph.input if i.name not in initialized]
    feed = {}
    for name, value in zip(names, inputs, strict=True):
        if name in static:
            frozen.graph.initializer.append(numpy_helper.from_array(as_array(value), name))
        else:
            feed[name] = as_array(value)
    kept = [i for i in frozen.graph.input if i.name not in static]
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    return frozen, feed


def compare(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> str | None:
    if got.shape != expected.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    if expected.dtype.kind in "biu":
        return None if np.array_equal(got, expected) else "values differ"
    wide_got, wide_expected = got.astype(np.float64), expected.astype(np.float64)
    if not np.allclose(wide_got, wide_expected, rtol=rtol, atol=atol, equal_nan=True):
        worst = np.nanmax(np.abs(wide_got - wide_expected))
        return f"values differ (max |difference| {worst:.3g})"
    return None


def run_case(case) -> Outcome:
    try:
        for inputs, outputs in case.data_sets:
            model, feed = freeze_static_inputs(case.model, list(inputs))
            got = run(import_model(model), feed)
            if len(got) != len(outputs):
                return Outcome(case.name, f"{len(got)} outputs, expected {len(outputs)}")
            for index, (value, expected) in enumerate(zip(got, outputs)):
                problem = compare(value, as_array(expected), case.rtol, case.atol)
                if problem:
                    return Outcome(case.name, f"output {index}: {problem}")
    except BoltError as error:
        return Outcome(case.name, str(error).removeprefix("error: "))
    except Exception as error:  # a crash is a failure of its own kind, reported as such
        return Outcome(case.name, f"crash: {type(error).__name__}: {error}")
    return Outcome(case.name, None)


def run_all() -> list[Outcome]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [run_case(case) for case in load_cases() if in_scope(case)]


def read_expected_failures() -> dict[str, str]:
    expected = {}
    for line in EXPECTED_FAILURES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            expected[name] = reason.strip()
    return expected


def write_expected_failures(outcomes: list[Outcome]) -> None:
    failed = [o for o in outcomes if o.failure]
    passed = len(outcomes) - len(failed)
    lines = [
        "# ONNX backend node tests that boltir fails, with the reason (see onnx_node_tests.py).",
        f"# {passed} of {len(outcomes)} in-scope cases pass ({passed / len(outcomes):.1%}).",
        *(f"{o.name} {o.failure}" for o in failed),
    ]
    EXPECTED_FAILURES.write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> None:
    outcomes = run_all()
    passed = sum(o.failure is None for o in outcomes)
    for outcome in outcomes:
        print(f"{'PASS' if outcome.failure is None else 'FAIL'} {outcome.name}" + (f": {outcome.failure}" if outcome.failure else ""))
    print(f"{passed} of {len(outcomes)} in-scope ONNX node tests pass ({passed / len(outcomes):.1%})")
    if "--update" in argv:
        write_expected_failures(outcomes)
        print(f"wrote {EXPECTED_FAILURES}")


if __name__ == "__main__":
    main(sys.argv[1:])
